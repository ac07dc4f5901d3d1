"""The app's own sections of /api/settings, each declared once: its key, its value when never
set, how a PATCH of it is checked, and whether what is sent merges into it or replaces it.

Registered at import (backend/store/settings.py); `settings.ui` registers itself in
backend/api/ui_settings.py, and each feature's come with it (`Feature.settings`:
compaction, questions, research, web_fetch). `web_search` is here because what GET shows
of it needs the runtime's key store.
"""
from __future__ import annotations

from urllib.parse import urlsplit

from backend.api.validate import MISSING, Fields
from backend.features.web import search_setting
from backend.runtime import runtime
from backend.store import settings
from backend.store.models import ModelEntry
from backend.turns.toolset import SHELL_NETWORK

DEFAULT_MODEL = "default_model_id"


# --- default_model_id ----------------------------------------------------------------------

def _default_model(fields: Fields):
    model_id = fields.text(DEFAULT_MODEL, max_len=200, nullable=True)
    if model_id not in (MISSING, None) and not ModelEntry.get_or_none(ModelEntry.id == model_id):
        fields.fail(DEFAULT_MODEL, "No model with this id. Pick one from GET /api/models, or null.")
        return MISSING
    return model_id


def _default_model_shown():
    model_id = settings.get(DEFAULT_MODEL)
    if model_id and not ModelEntry.get_or_none(ModelEntry.id == model_id):
        return None  # a model removed behind our back (e.g. by hand in the database)
    return model_id


# --- web_search ----------------------------------------------------------------------------

def _web_search(fields: Fields):
    """The `web_search` object sent, or MISSING."""
    name = search_setting.SETTING
    body = fields.raw(name, False, True)
    if body is MISSING:
        return MISSING
    if body is None:
        return dict(search_setting.DEFAULT)
    if not isinstance(body, dict):
        return fields.fail(name, 'Must be an object like {"backend": "searxng", "url": "http://127.0.0.1:8888"}, '
                                 '{"backend": "brave"}, or {"backend": null} for no web search.')
    # What GET gives back besides the choice (has_key …) may come along; it is worked out, not stored.
    inner = Fields(body, allowed=("backend", "url", "has_key", "needs_key", "problem"), prefix=name + ".")
    backend = inner.raw("backend", True, True)
    if backend is not MISSING and backend is not None and backend not in search_setting.BACKENDS:
        backend = inner.fail("backend", f"Must be one of: {', '.join(search_setting.BACKENDS)}, "
                                        f"or null for no web search.")
    url = inner.url("url", nullable=True)
    if isinstance(url, str):
        parts = urlsplit(url)
        if parts.username or parts.password:
            url = inner.fail("url", "Put no user name or password in the URL: settings are saved on disk.")
        elif parts.query or parts.fragment:
            url = inner.fail("url", "Give the instance's base address, without ?query or #fragment, "
                                    "such as https://searx.example.org.")
    if backend == "searxng" and url in (MISSING, None) and name + ".url" not in inner.errors:
        inner.fail("url", "SearXNG needs the address of its instance, an http:// or https:// URL such as "
                          "http://127.0.0.1:8888.")
    elif backend in (None, *search_setting.KEYED) and isinstance(url, str):
        inner.fail("url", f"Only SearXNG takes a url; leave it out (or null) for {backend or 'no backend'}.")
    fields.errors.update(inner.errors)
    if inner.errors:
        return MISSING
    return {"backend": backend, "url": url} if backend == "searxng" else {"backend": backend}


def _web_search_shown() -> dict:
    return search_setting.as_json(runtime().keys)


SECTIONS = (
    settings.Section(DEFAULT_MODEL, None, _default_model, shown=_default_model_shown),
    # Whether sandboxed shell commands may use the network.
    settings.Section(SHELL_NETWORK, False, lambda fields: fields.boolean(SHELL_NETWORK)),
    # A new choice of backend replaces the old one whole: a url kept from SearXNG means nothing to Brave.
    settings.Section(search_setting.SETTING, search_setting.DEFAULT, _web_search, current=search_setting.stored,
                     shown=_web_search_shown),
)
for section in SECTIONS:
    settings.register(section)
