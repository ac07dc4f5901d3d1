"""Listing a provider's models from its own models endpoint, through the official SDKs.

OpenAI and every OpenAI-compatible server (Ollama, LM Studio, llama.cpp, vLLM,
OpenRouter …) answer GET {base_url}/models; Anthropic answers GET /v1/models
in its own shape. What comes back is turned into catalog entries: what the
server states about each model (capabilities.py) first, then the family
table, then defaults. Failures become DiscoveryError with a message that
names the provider and never carries the key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from backend.catalog.capabilities import Facts, from_listing, from_native_api
from backend.catalog.families import UNKNOWN, draws, family_of, label_for, skip
from backend.catalog.toml_file import default_wire_api
from backend.core import sentences
from backend.core.errors import Explained
from backend.core.text import has_surrogate, well_formed

LIST_TIMEOUT_S = 15.0  # listing is quick even for big catalogs; a hung server should not hold the UI
PLACEHOLDER_KEY = "not-needed"  # local servers take any key; the SDKs refuse to send none


class DiscoveryError(Explained):
    """Listing a provider's models failed; `message` says why."""


@dataclass(frozen=True)
class Source:
    """What discovery needs to know about a provider."""
    id: str
    kind: str
    name: str
    base_url: str | None
    api_key: str | None
    timeout: float


@dataclass(frozen=True)
class Found:
    """What a provider's models endpoint lists: its chat models (as `discover` gives them) and, apart,
    its image models as {"api_model", "label"} (CONTRACT §13: Settings → Images picks from them; they
    are never added to the catalog, where they would be offered as chat models)."""
    chat: list[dict]
    images: list[dict]


def discover(source: Source) -> list[dict]:
    """The provider's chat models as model-column dicts (no id): api_model, label, wire_api, …, note;
    and under "window" the capabilities.Window its server stated (discovered.add keeps it out of the row)."""
    return discover_all(source).chat


def discover_all(source: Source) -> Found:
    """The provider's chat models (see `discover`) and its image models."""
    found = _list_anthropic(source) if source.kind == "anthropic" else _list_openai(source)
    listed = {api_model: facts for api_model, _, _, facts in found}
    native: dict[str, Facts] = {}
    # OpenRouter's list says it all; vLLM's and llama.cpp's leave out tools (and llama.cpp the window
    # it serves), Ollama's and LM Studio's say nothing: those servers' own APIs say more.
    if (source.kind == "openai_compatible" and source.base_url
            and not all(f.complete() for f in listed.values())):
        native = from_native_api(source.base_url, source.api_key, list(listed), _timeout(source))
    images = [{"api_model": api_model, "label": well_formed(display_name or label_for(api_model))[:200]}
              for api_model, display_name, _, listing in found
              if source.kind != "anthropic" and not has_surrogate(api_model) and (draws(api_model) or listing.draws)]
    images = list({i["api_model"]: i for i in images}.values())
    seen, entries = set(), []
    for api_model, display_name, limits, listing in found:
        # An id that is not valid Unicode (a lone surrogate) could be neither stored nor named.
        if api_model in seen or skip(source.kind, api_model) or has_surrogate(api_model):
            continue
        seen.add(api_model)
        facts = native.get(api_model, Facts()).over(listing)
        if not facts.chat:
            continue  # embeddings and the like: nothing to chat with
        family = family_of(api_model)
        window = facts.window()
        entries.append({
            "api_model": api_model,
            "label": well_formed(display_name or label_for(api_model))[:200],
            "wire_api": default_wire_api(source.kind),
            # What the provider says about its limits beats the family table's guess.
            "context_window": window.served or limits.get("max_input_tokens") or family.context_window,
            "max_output_tokens": (limits.get("max_tokens") or facts.max_output_tokens
                                  or family.max_output_tokens),
            "supports_tools": _first(facts.tools, family.tools, family is UNKNOWN),
            "supports_vision": _first(facts.vision, family.vision),
            "supports_reasoning": _first(facts.reasoning, family.reasoning),
            "note": window.note(),
            "window": window,
        })
    return Found(entries, images)


def _first(stated: bool | None, *fallbacks: bool) -> bool:
    """What the server stated, else the family table's value or the default."""
    return stated if stated is not None else any(fallbacks)


def _timeout(source: Source) -> float:
    return max(1.0, min(float(source.timeout or LIST_TIMEOUT_S), LIST_TIMEOUT_S))


def _limits(model) -> dict:
    """Token limits some providers list with each model (Anthropic's newer API does)."""
    out = {}
    for name in ("max_input_tokens", "max_tokens"):
        value = getattr(model, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            out[name] = value
    return out


Listed = tuple[str, "str | None", dict, Facts]  # id, display name, token limits, stated facts


def _list_openai(source: Source) -> list[Listed]:
    import openai

    client = openai.OpenAI(api_key=source.api_key or PLACEHOLDER_KEY, base_url=source.base_url or None,
                           timeout=_timeout(source), max_retries=0)
    try:
        return [(m.id, None, _limits(m), from_listing(m.to_dict())) for m in client.models.list()
                if getattr(m, "id", None)]
    except openai.APIStatusError as exc:
        raise _status_error(source, exc.status_code, exc) from None
    except openai.APITimeoutError:
        raise _timeout_error(source) from None
    except openai.APIConnectionError:
        raise _unreachable(source) from None
    except openai.APIError as exc:  # e.g. an answer that is not a model list
        raise _bad_answer(source, exc) from None
    finally:
        client.close()


def _list_anthropic(source: Source) -> list[Listed]:
    import anthropic

    client = anthropic.Anthropic(api_key=source.api_key or PLACEHOLDER_KEY, base_url=source.base_url or None,
                                 timeout=_timeout(source), max_retries=0)
    try:
        return [(m.id, getattr(m, "display_name", None), _limits(m), Facts()) for m in client.models.list(limit=1000)
                if getattr(m, "id", None)]
    except anthropic.APIStatusError as exc:
        raise _status_error(source, exc.status_code, exc) from None
    except anthropic.APITimeoutError:
        raise _timeout_error(source) from None
    except anthropic.APIConnectionError:
        raise _unreachable(source) from None
    except anthropic.APIError as exc:
        raise _bad_answer(source, exc) from None
    finally:
        client.close()


def _where(source: Source) -> str:
    return source.base_url or {"openai": "https://api.openai.com/v1",
                               "anthropic": "https://api.anthropic.com"}.get(source.kind, "its base URL")


def _scrub(text: str, source: Source) -> str:
    """An upstream message, without the key (some providers echo part of it) and not too long."""
    if source.api_key:
        text = text.replace(source.api_key, "***")
    text = re.sub(r"(sk-|sk-ant-|key-)[A-Za-z0-9_*-]{4,}", r"\1***", text)
    text = " ".join(text.split())
    return text[:200] + ("…" if len(text) > 200 else "")


def _upstream_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
    return ""


def _status_error(source: Source, status: int, exc) -> DiscoveryError:
    name = source.name
    if status in (401, 403):
        return DiscoveryError(f"{name} refused the API key (HTTP {status}) when Numi asked for its models. "
                              f"Check the key for {name} in Settings → Providers.")
    if status == 404:
        return DiscoveryError(f"{name} has no models list at {_where(source)} (HTTP 404). Check the "
                              "provider's base URL (for OpenAI-compatible servers it ends in /v1).")
    detail = _scrub(_upstream_message(exc), source)
    return DiscoveryError(f"{name} answered HTTP {status} when Numi asked for its models"
                          + sentences.said(detail) + " Try again, or add the model by hand.")


def _timeout_error(source: Source) -> DiscoveryError:
    return DiscoveryError(f"{source.name} did not answer within {_timeout(source):g} s at {_where(source)}. "
                          "Check that it is running, then try again.")


def _unreachable(source: Source) -> DiscoveryError:
    return DiscoveryError(f"{source.name} could not be reached at {_where(source)}. Check that it is "
                          "running and that the base URL is right, then try again.")


def _bad_answer(source: Source, exc) -> DiscoveryError:
    return DiscoveryError(f"{source.name} did not answer with a list of models at {_where(source)} "
                          f"({type(exc).__name__}). Check the provider's base URL.")
