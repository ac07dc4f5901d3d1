"""Providers and models: where replies come from (CONTRACT §3)."""
from __future__ import annotations

from contextlib import contextmanager

from flask import Blueprint

from backend.api.settings import forget_models
from backend.api.validate import MISSING, Fields, api_key_field, json_body
from backend.catalog import KINDS, WIRE_APIS, default_wire_api
from backend.catalog.capabilities import is_window_note
from backend.catalog.service import CatalogInvalid
from backend.catalog.toml_file import MAX_NOTE, SECRET_VALUE
from backend.catalog.tools_refused import is_tools_off_note
from backend.errors import ApiError, not_found
from backend.runtime import runtime
from backend.store.models import ModelEntry, Provider
from backend.store.serialize import model_to_dict, provider_to_dict

bp = Blueprint("catalog", __name__)

PROVIDER_FIELDS = ("kind", "name", "base_url", "api_key", "enabled", "timeout")
MODEL_FIELDS = ("provider_id", "wire_api", "api_model", "label", "context_window",
                "max_output_tokens", "supports", "fallbacks", "price", "note")
READ_ONLY = ("id", "has_key", "created_at")
MAX_FALLBACKS = 10
MAX_PRICE = 1_000_000  # USD per million tokens


@contextmanager
def editing():
    """One write to the catalog: the tables change in a transaction and catalog.toml is rewritten."""
    try:
        with runtime().catalog.editing():
            yield
    except CatalogInvalid as exc:
        raise ApiError(409, "catalog_invalid",
                       f"catalog.toml has an unsaved problem, so Numi will not overwrite your edit: "
                       f"{exc.error.message} Fix the file (or undo the edit), then try again.") from None


def _provider(provider_id: str) -> Provider:
    provider = Provider.get_or_none(Provider.id == provider_id)
    if provider is None:
        raise not_found("provider")
    return provider


def _provider_json(provider: Provider) -> dict:
    return provider_to_dict(provider, runtime().keys.has(provider.id))


# -- providers ----------------------------------------------------------------

def _no_keys_in(f: Fields, changes: dict, names) -> None:
    """These fields are written to catalog.toml, where an API key must never land."""
    for name in names:
        value = changes.get(name)
        if isinstance(value, str) and SECRET_VALUE.search(value):
            f.fail(name, "This looks like an API key. Keys go in api_key (kept in the OS keyring), "
                         "never in this field.")


def _provider_changes(body: dict, current: Provider | None) -> tuple[dict, str | None]:
    """Checked column values and the API key (kept apart: it never touches the database)."""
    creating = current is None
    f = Fields(body, PROVIDER_FIELDS, READ_ONLY)
    changes = {
        "kind": f.choice("kind", KINDS, required=creating),
        "name": f.text("name", max_len=100, required=creating, non_empty=True, strip=True),
        "base_url": f.url("base_url", nullable=True),
        "enabled": f.boolean("enabled"),
        "timeout": f.number("timeout", 1, 600),
    }
    api_key = api_key_field(f, required=False)
    kind = changes["kind"] if changes["kind"] is not MISSING else getattr(current, "kind", None)
    base_url = changes["base_url"] if changes["base_url"] is not MISSING else getattr(current, "base_url", None)
    if kind == "openai_compatible" and base_url is None and "base_url" not in f.errors:
        f.fail("base_url", "An OpenAI-compatible server needs its API root, such as http://127.0.0.1:11434/v1.")
    _no_keys_in(f, changes, ("name", "base_url"))
    f.check()
    if api_key is MISSING:
        api_key = None
    return {k: v for k, v in changes.items() if v is not MISSING}, api_key or None


@bp.get("/api/providers")
def list_providers():
    return [_provider_json(p) for p in Provider.select().order_by(Provider.created_at, Provider.id)]


@bp.post("/api/providers")
def create_provider():
    changes, api_key = _provider_changes(json_body(), None)
    with editing():
        provider = Provider.create(**changes)
    if api_key:
        runtime().keys.set(provider.id, api_key)
    return _provider_json(provider), 201


@bp.patch("/api/providers/<provider_id>")
def patch_provider(provider_id):
    body = json_body()
    with editing():
        provider = _provider(provider_id)
        changes, api_key = _provider_changes(body, provider)
        for name, value in changes.items():
            setattr(provider, name, value)
        provider.save()
    if "api_key" in body:
        # PATCH with "api_key": null (or "") removes the key, like DELETE …/key.
        if api_key:
            runtime().keys.set(provider.id, api_key)
        else:
            runtime().keys.delete(provider.id)
    return _provider_json(provider)


@bp.delete("/api/providers/<provider_id>")
def delete_provider(provider_id):
    with editing():
        provider = _provider(provider_id)
        model_ids = [m.id for m in ModelEntry.select(ModelEntry.id).where(ModelEntry.provider == provider)]
        _forget_in_fallbacks(model_ids)
        forget_models(model_ids)
        provider.delete_instance()  # its models go too (ON DELETE CASCADE)
    runtime().keys.delete(provider_id)
    return "", 204


@bp.put("/api/providers/<provider_id>/key")
def put_key(provider_id):
    body = json_body()
    _provider(provider_id)
    f = Fields(body, ("api_key",))
    api_key = api_key_field(f, required=True)
    f.check()
    runtime().keys.set(provider_id, api_key)
    return "", 204


@bp.delete("/api/providers/<provider_id>/key")
def delete_key(provider_id):
    _provider(provider_id)
    runtime().keys.delete(provider_id)
    return "", 204


@bp.post("/api/providers/<provider_id>/discover")
def discover(provider_id):
    from backend.catalog import discovered
    from backend.catalog.discover import DiscoveryError, Source, discover_all

    provider = _provider(provider_id)
    if provider.kind in ("openai", "anthropic") and not runtime().keys.has(provider.id):
        raise ApiError(409, "no_key", f"{provider.name} has no API key yet. Add the key "
                       f"(Settings → Providers), then look for its models again.")
    source = Source(id=provider.id, kind=provider.kind, name=provider.name, base_url=provider.base_url,
                    api_key=runtime().keys.get(provider.id), timeout=float(provider.timeout))
    try:
        found = discover_all(source)  # network: outside the lock and the transaction
    except DiscoveryError as exc:
        raise ApiError(502, "provider_error", exc.message) from None
    with editing():
        provider = _provider(provider_id)  # it may have gone while we listened
        added = discovered.add(provider, found.chat)
    answer: dict = {"added": [model_to_dict(m) for m in added]}
    if found.images:  # image models: not chat models, never added; Settings → Images picks them (CONTRACT §13)
        answer["image_models"] = found.images
    return answer


@bp.post("/api/providers/suggestions")
def suggestions():
    """Probe loopback for local model servers now: a network call, so never behind a GET."""
    from backend.catalog.probe import suggestions as probe

    configured = [p.base_url for p in Provider.select(Provider.base_url) if p.base_url]
    return {"items": probe(configured)}


# -- models -------------------------------------------------------------------

def _fallbacks(f: Fields, self_id: str | None):
    value = f.raw("fallbacks", False, False)
    if value is MISSING:
        return MISSING
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f.fail("fallbacks", "Must be a list of model ids.")
    if len(value) > MAX_FALLBACKS:
        return f.fail("fallbacks", f"List at most {MAX_FALLBACKS} fallback models.")
    if len(set(value)) != len(value) or self_id in value:
        return f.fail("fallbacks", "List each other model once, and not the model itself.")
    known = {m.id for m in ModelEntry.select(ModelEntry.id).where(ModelEntry.id.in_(value))}
    unknown = [v for v in value if v not in known]
    if unknown:
        return f.fail("fallbacks", f"No model with id {', '.join(unknown)}. Use ids from GET /api/models.")
    return value


def _supports(f: Fields):
    value = f.raw("supports", False, False)
    if value is MISSING:
        return MISSING
    if not isinstance(value, dict):
        return f.fail("supports", 'Must be an object like {"tools": true, "vision": false, "reasoning": false}.')
    inner = Fields(value, ("tools", "vision", "reasoning"), prefix="supports.")
    checked = {name: inner.boolean(name) for name in ("tools", "vision", "reasoning")}
    f.errors.update(inner.errors)
    return {f"supports_{k}": v for k, v in checked.items() if v is not MISSING}


def _price(f: Fields):
    value = f.raw("price", False, True)
    if value is MISSING:
        return MISSING
    if value is None:
        return {"price_input": None, "price_output": None}
    if not isinstance(value, dict):
        return f.fail("price", 'Must be an object like {"input": 2.5, "output": 10} (USD per million tokens).')
    inner = Fields(value, ("input", "output"), prefix="price.")
    checked = {name: inner.number(name, 0, MAX_PRICE, nullable=True) for name in ("input", "output")}
    f.errors.update(inner.errors)
    return {f"price_{k}": v for k, v in checked.items() if v is not MISSING}


def _model_changes(body: dict, current: ModelEntry | None) -> dict:
    creating = current is None
    f = Fields(body, MODEL_FIELDS, READ_ONLY)
    provider_id = f.text("provider_id", max_len=200, required=creating)
    provider = None
    if provider_id is not MISSING:
        provider = Provider.get_or_none(Provider.id == provider_id)
        if provider is None:
            f.fail("provider_id", "No provider with this id. Add the provider first, or pick one from "
                   "GET /api/providers.")
    changes = {
        "provider": provider if provider is not None else MISSING,
        "wire_api": f.choice("wire_api", WIRE_APIS),
        "api_model": f.text("api_model", max_len=300, required=creating, non_empty=True, strip=True),
        "label": f.text("label", max_len=200, nullable=True, strip=True),
        "context_window": f.number("context_window", 1, 100_000_000, integer=True, nullable=True),
        "max_output_tokens": f.number("max_output_tokens", 1, 10_000_000, integer=True, nullable=True),
        "fallbacks": _fallbacks(f, getattr(current, "id", None)),
        "note": f.text("note", max_len=MAX_NOTE, nullable=True, strip=True),
    }
    supports = _supports(f)
    price = _price(f)
    _no_keys_in(f, changes, ("api_model", "label"))
    f.check()
    changes = {k: v for k, v in changes.items() if v is not MISSING}
    changes.update(supports if supports is not MISSING else {})
    changes.update(price if price is not MISSING else {})
    if changes.get("note") == "":
        changes["note"] = None
    if changes.get("supports_tools") is True and "note" not in changes and is_tools_off_note(current):
        changes["note"] = None  # tools turned back on: the note saying why they were off is done
    if "context_window" in changes and "note" not in changes and is_window_note(getattr(current, "note", None)):
        changes["note"] = None  # the person set the window: the note about the server's is done
    if changes.get("label") in ("", None) and ("label" in changes or creating):
        # No label means "show the upstream name", so the list never has a blank entry.
        changes["label"] = changes.get("api_model") or getattr(current, "api_model", "")
    if creating and "wire_api" not in changes:
        changes["wire_api"] = default_wire_api(provider.kind)
    return changes


def _model(model_id: str) -> ModelEntry:
    model = ModelEntry.get_or_none(ModelEntry.id == model_id)
    if model is None:
        raise not_found("model")
    return model


def _forget_in_fallbacks(model_ids) -> None:
    gone = set(model_ids)
    for other in ModelEntry.select().where(ModelEntry.id.not_in(list(gone))):
        kept = [m for m in other.fallbacks or [] if m not in gone]
        if kept != (other.fallbacks or []):
            other.fallbacks = kept
            other.save()


@bp.get("/api/models")
def list_models():
    return [model_to_dict(m) for m in ModelEntry.select().order_by(ModelEntry.created_at, ModelEntry.id)]


@bp.post("/api/models")
def create_model():
    body = json_body()
    with editing():
        model = ModelEntry.create(**_model_changes(body, None))
    return model_to_dict(model), 201


@bp.patch("/api/models/<model_id>")
def patch_model(model_id):
    body = json_body()
    with editing():
        model = _model(model_id)
        for name, value in _model_changes(body, model).items():
            setattr(model, name, value)
        model.save()
    return model_to_dict(model)


@bp.delete("/api/models/<model_id>")
def delete_model(model_id):
    with editing():
        model = _model(model_id)
        _forget_in_fallbacks([model.id])
        forget_models([model.id])
        model.delete_instance()
    return "", 204
