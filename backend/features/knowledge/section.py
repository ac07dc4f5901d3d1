"""The `knowledge` section of /api/settings (CONTRACT §8): the embeddings model, or none.

`{"embeddings": {"provider_id", "model"} | null}`; null (the default) searches by words alone.
A PATCH replaces the whole object. The provider must be one of the catalog's that speaks
OpenAI's API (OpenAI itself, or an OpenAI-compatible server: Ollama, LM Studio, llama.cpp…):
the model is asked through its `/v1/embeddings`.
"""
from __future__ import annotations

from backend.fields import MISSING, Fields, nested
from backend.store import chats, settings
from backend.store.settings import Section

SETTING = "knowledge"
DEFAULTS = {"embeddings": None}
OPENAI_KINDS = ("openai", "openai_compatible")  # the providers whose API has /v1/embeddings
MODEL_MAX = 200
EXAMPLE = ('Must be an object like {"embeddings": {"provider_id": "p_…", "model": "nomic-embed-text"}}, '
           'or {"embeddings": null} to search by words alone.')


def embeddings() -> dict | None:
    """The embeddings model as saved, {"provider_id", "model"}, or None (off)."""
    value = settings.get_object(SETTING).get("embeddings")
    if not isinstance(value, dict):
        return None
    provider_id, model = value.get("provider_id"), value.get("model")
    if not (isinstance(provider_id, str) and provider_id and isinstance(model, str) and model):
        return None
    return {"provider_id": provider_id, "model": model}


def provider(provider_id: str) -> dict | None:
    """The catalog's provider {"id", "kind", "name", "base_url", "enabled", "timeout"}, or None."""
    row = chats.provider(provider_id)
    if row is None:
        return None
    return {"id": row.id, "kind": row.kind, "name": row.name, "base_url": row.base_url,
            "enabled": bool(row.enabled), "timeout": float(row.timeout)}


def _knowledge(fields: Fields):
    """The `knowledge` object sent, or MISSING."""
    inner = nested(fields, SETTING, DEFAULTS, EXAMPLE)
    if inner is None:
        return MISSING
    value = inner.raw("embeddings", True, True)
    if value is not None and value is not MISSING and not isinstance(value, dict):
        inner.fail("embeddings", 'Must be an object like {"provider_id": "p_…", "model": "nomic-embed-text"}, '
                                 'or null to search by words alone.')
    if inner.errors or value is MISSING:
        fields.errors.update(inner.errors)
        return MISSING
    if value is None:
        return {"embeddings": None}
    f = Fields(value, ("provider_id", "model"), prefix=f"{SETTING}.embeddings.")
    provider_id = f.text("provider_id", max_len=200, required=True, non_empty=True, strip=True)
    model = f.text("model", max_len=MODEL_MAX, required=True, non_empty=True, strip=True)
    if isinstance(provider_id, str):
        found = provider(provider_id)
        if found is None:
            f.fail("provider_id", f"No provider with the id {provider_id!r}. Pick one from Settings → Providers "
                                  f"(GET /api/providers lists their ids).")
        elif found["kind"] not in OPENAI_KINDS:
            f.fail("provider_id", f"{found['name']} speaks Anthropic's API, which has no embeddings. Pick an "
                                  f"OpenAI or OpenAI-compatible provider (Ollama, LM Studio, llama.cpp…).")
    fields.errors.update(inner.errors)
    fields.errors.update(f.errors)
    if f.errors:
        return MISSING
    return {"embeddings": {"provider_id": provider_id, "model": model}}


def _knowledge_now() -> dict:
    return {"embeddings": embeddings()}


SECTION = Section(SETTING, DEFAULTS, _knowledge, current=_knowledge_now)
