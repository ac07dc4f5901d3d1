"""The built-in sections of /api/settings, each declared once: its key, its value when never
set, how a PATCH of it is checked, and whether what is sent merges into it or replaces it.

Registered at import (backend/store/settings.py); `settings.ui` registers itself in
backend/api/ui_settings.py.
"""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from backend.api.validate import MISSING, Fields
from backend.features import compaction, questions, research
from backend.features.web import fetch_setting, search_setting
from backend.runtime import runtime
from backend.store import settings
from backend.store.models import ModelEntry
from backend.turns.toolset import SHELL_NETWORK

DEFAULT_MODEL = "default_model_id"


def _nested(fields: Fields, setting: str, defaults: dict, example: str) -> Fields | None:
    """The fields of the object sent as `setting`; None when it was not sent or is no object (then noted)."""
    body = fields.raw(setting, False, False)
    if body is MISSING:
        return None
    if not isinstance(body, dict):
        fields.fail(setting, example)
        return None
    return Fields(body, allowed=defaults, prefix=setting + ".")


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


# --- compaction ----------------------------------------------------------------------------

def _compaction(fields: Fields):
    """The `compaction` keys sent, or MISSING."""
    inner = _nested(fields, compaction.SETTING, compaction.DEFAULTS,
                    'Must be an object like {"auto": true, "threshold": 0.8}.')
    if inner is None:
        return MISSING
    auto = inner.boolean("auto")
    threshold = inner.number("threshold", 0.5, 0.95)
    model_id = inner.text("model_id", max_len=200, nullable=True)
    if model_id not in (MISSING, None) and not ModelEntry.get_or_none(ModelEntry.id == model_id):
        inner.fail("model_id", "No model with this id. Pick one from GET /api/models, or null for the chat's own.")
    fields.errors.update(inner.errors)
    values = {"auto": auto, "threshold": threshold, "model_id": model_id}
    return {k: v for k, v in values.items() if v is not MISSING}


# --- questions -----------------------------------------------------------------------------

def _questions(fields: Fields):
    """The `questions` object sent ({"timeout_s": seconds or null}), or MISSING."""
    inner = _nested(fields, questions.SETTING, questions.DEFAULTS,
                    'Must be an object like {"timeout_s": 600}, or {"timeout_s": null} for no limit.')
    if inner is None:
        return MISSING
    # Seconds a question waits for an answer; null (the default) waits until it is answered.
    limit = inner.number("timeout_s", 1, questions.MAX_TIMEOUT_S, integer=True, nullable=True)
    fields.errors.update(inner.errors)
    return MISSING if limit is MISSING else {"timeout_s": limit}


def _questions_now() -> dict:
    return {"timeout_s": questions.timeout_s()}


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


# --- research ------------------------------------------------------------------------------

def _research(fields: Fields):
    """The `research` limits sent, or MISSING."""
    inner = _nested(fields, research.SETTING, research.DEFAULTS,
                    'Must be an object like {"max_minutes": 10, "max_searches": 8, "max_pages": 12}.')
    if inner is None:
        return MISSING
    low, high = research.BOUNDS["max_minutes"]
    values = {"max_minutes": inner.number("max_minutes", low, high)}
    for key in ("max_searches", "max_pages"):
        low, high = research.BOUNDS[key]
        values[key] = inner.number(key, low, high, integer=True)
    fields.errors.update(inner.errors)
    return {k: v for k, v in values.items() if v is not MISSING}


# --- web_fetch -----------------------------------------------------------------------------

def _web_fetch(fields: Fields):
    """The `web_fetch` keys sent, or MISSING."""
    inner = _nested(fields, fetch_setting.SETTING, fetch_setting.DEFAULTS,
                    'Must be an object like {"allow_private": ["http://127.0.0.1:8123", "http://wiki.lan"]}.')
    if inner is None:
        return MISSING
    values = inner.raw("allow_private", False, True)
    if values is MISSING:
        fields.errors.update(inner.errors)
        return MISSING
    if values is None:
        return {"allow_private": []}
    if not isinstance(values, list) or len(values) > fetch_setting.MAX_ORIGINS:
        inner.fail("allow_private", f"Must be a list of at most {fetch_setting.MAX_ORIGINS} origins, such as "
                                    f'["http://127.0.0.1:8123", "http://wiki.lan"].')
    else:
        origins, problems = [], []
        for i, value in enumerate(values, start=1):
            try:
                origins.append(fetch_setting.canonical_origin(value))
            except ValueError as exc:
                problems.append(f"item {i} ({json.dumps(value, ensure_ascii=False)[:200]}): {exc}")
        if problems:
            inner.fail("allow_private", " ".join(problems))
    fields.errors.update(inner.errors)
    if inner.errors:
        return MISSING
    return {"allow_private": list(dict.fromkeys(origins))}


SECTIONS = (
    settings.Section(DEFAULT_MODEL, None, _default_model, shown=_default_model_shown),
    # Whether sandboxed shell commands may use the network.
    settings.Section(SHELL_NETWORK, False, lambda fields: fields.boolean(SHELL_NETWORK)),
    settings.Section(compaction.SETTING, compaction.DEFAULTS, _compaction, merge=True,
                     current=lambda: vars(compaction.settings())),
    settings.Section(questions.SETTING, questions.DEFAULTS, _questions, current=_questions_now),
    # A new choice of backend replaces the old one whole: a url kept from SearXNG means nothing to Brave.
    settings.Section(search_setting.SETTING, search_setting.DEFAULT, _web_search, current=search_setting.stored,
                     shown=_web_search_shown),
    settings.Section(research.SETTING, research.DEFAULTS, _research, merge=True,
                     current=lambda: vars(research.settings())),
    settings.Section(fetch_setting.SETTING, fetch_setting.DEFAULTS, _web_fetch, merge=True,
                     current=fetch_setting.stored),
)
for section in SECTIONS:
    settings.register(section)
