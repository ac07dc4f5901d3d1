"""GET/PATCH /api/settings: stored app settings (web_fetch's trusted local origins among them) plus the
read-only keyring, catalog.toml and shell sandbox status; PUT/DELETE /api/settings/web_search/key: the
web search backend's key."""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from flask import Blueprint

from backend.api import ui_settings
from backend.api.validate import MISSING, Fields, api_key_field, json_body
from backend.errors import ApiError
from backend.runtime import runtime
from backend.store.db import db
from backend.store.models import ModelEntry, Setting
from backend.tools import sandbox
from backend.turns import compaction, fetch_setting, questions, research, search_setting
from backend.turns.toolset import SHELL_NETWORK

bp = Blueprint("settings", __name__)

# Every setting a client may write, with its value when never set.
DEFAULTS = {"default_model_id": None, SHELL_NETWORK: False, compaction.SETTING: compaction.DEFAULTS,
            questions.SETTING: questions.DEFAULTS, search_setting.SETTING: search_setting.DEFAULT,
            research.SETTING: research.DEFAULTS, fetch_setting.SETTING: fetch_setting.DEFAULTS,
            ui_settings.SETTING: ui_settings.DEFAULTS}
READ_ONLY = ("keyring", "catalog", "shell_sandbox")


def get_setting(key: str):
    row = Setting.get_or_none(Setting.key == key)
    return DEFAULTS.get(key) if row is None else row.value


def set_setting(key: str, value) -> None:
    if value is None:
        # The column is NOT NULL and JsonText stores None as NULL: no row means "unset".
        Setting.delete().where(Setting.key == key).execute()
    else:
        Setting.insert(key=key, value=value).on_conflict_replace().execute()


def forget_models(model_ids) -> None:
    """Called inside the transaction that deletes models, so no setting points at them."""
    if get_setting("default_model_id") in set(model_ids):
        set_setting("default_model_id", None)
    chosen = compaction.settings()
    if chosen.model_id in set(model_ids):
        set_setting(compaction.SETTING, {**vars(chosen), "model_id": None})


def settings_dict() -> dict:
    data = {key: get_setting(key) for key in DEFAULTS}
    data[compaction.SETTING] = vars(compaction.settings())
    data[questions.SETTING] = {"timeout_s": questions.timeout_s()}
    data[search_setting.SETTING] = search_setting.as_json(runtime().keys)
    data[research.SETTING] = vars(research.settings())
    data[fetch_setting.SETTING] = fetch_setting.stored()
    data[ui_settings.SETTING] = ui_settings.stored()
    if data["default_model_id"] and not ModelEntry.get_or_none(ModelEntry.id == data["default_model_id"]):
        data["default_model_id"] = None  # a model removed behind our back (e.g. by hand in the database)
    # Where keys go; without a keyring, why (`cause`, a clause) and what to do (`fix`).
    data["keyring"] = runtime().keys.status_json()
    # Where catalog.toml is, whether its last saved edit had an error (then the last good
    # catalog stays in use), and how many saved edits were applied / skipped as already applied.
    data["catalog"] = runtime().catalog.status()
    # Whether shell commands run confined here; without a sandbox every command asks first.
    data["shell_sandbox"] = sandbox.status().as_json()
    return data


@bp.get("/api/settings")
def get_settings():
    return settings_dict()


@bp.post("/api/settings/keyring/check")
def check_keyring():
    """Look for the system keyring again (installed or unlocked since start) → 200, the settings."""
    runtime().keys.recheck()
    return settings_dict()


@bp.patch("/api/settings")
def patch_settings():
    body = json_body()
    # Checked inside the write transaction so the model cannot vanish between check and save.
    with db.atomic():
        fields = Fields(body, allowed=DEFAULTS, read_only=READ_ONLY)
        model_id = fields.text("default_model_id", max_len=200, nullable=True)
        if model_id not in (MISSING, None) and not ModelEntry.get_or_none(ModelEntry.id == model_id):
            fields.fail("default_model_id", "No model with this id. Pick one from GET /api/models, or null.")
        network = fields.boolean(SHELL_NETWORK)
        compacting = _compaction(fields)
        asking = _questions(fields)
        searching = _web_search(fields)
        researching = _research(fields)
        fetching = _web_fetch(fields)
        ui = ui_settings.parse(fields)
        fields.check()
        if model_id is not MISSING:
            set_setting("default_model_id", model_id)
        if network is not MISSING:
            set_setting(SHELL_NETWORK, network)
        if compacting is not MISSING:
            set_setting(compaction.SETTING, {**vars(compaction.settings()), **compacting})
        if asking is not MISSING:
            set_setting(questions.SETTING, asking)
        if searching is not MISSING:
            set_setting(search_setting.SETTING, searching)
        if researching is not MISSING:
            set_setting(research.SETTING, {**vars(research.settings()), **researching})
        if fetching is not MISSING:
            set_setting(fetch_setting.SETTING, {**fetch_setting.stored(), **fetching})
        if ui is not MISSING:
            set_setting(ui_settings.SETTING, ui_settings.merged(ui))
    return settings_dict()


def _compaction(fields: Fields):
    """The `compaction` keys sent (merged into the stored ones), or MISSING."""
    inner = _section(fields, compaction.SETTING, compaction.DEFAULTS,
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


def _questions(fields: Fields):
    """The `questions` object sent ({"timeout_s": seconds or null}), or MISSING."""
    inner = _section(fields, questions.SETTING, questions.DEFAULTS,
                     'Must be an object like {"timeout_s": 600}, or {"timeout_s": null} for no limit.')
    if inner is None:
        return MISSING
    # Seconds a question waits for an answer; null (the default) waits until it is answered.
    limit = inner.number("timeout_s", 1, questions.MAX_TIMEOUT_S, integer=True, nullable=True)
    fields.errors.update(inner.errors)
    return MISSING if limit is MISSING else {"timeout_s": limit}


def _web_search(fields: Fields):
    """The `web_search` object sent (it replaces the stored one whole), or MISSING."""
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


def _key_backend(refusal: str) -> str:
    """The chosen backend that takes a key; a 409 saying what to choose first when it takes none."""
    backend = search_setting.stored()["backend"]
    if backend not in search_setting.KEYED:
        chosen = "SearXNG needs no API key" if backend == "searxng" else "No web search backend is chosen"
        raise ApiError(409, "no_key_backend", f"{chosen}. {refusal}")
    return backend


@bp.put("/api/settings/web_search/key")
def put_web_search_key():
    """The chosen backend's API key, into the keyring as search:<backend> → 204."""
    fields = Fields(json_body(), ("api_key",))
    api_key = api_key_field(fields, required=True)
    fields.check()
    backend = _key_backend("Choose Brave Search or Tavily in Settings → Web search first, then add its key.")
    runtime().keys.set(backend, api_key, search_setting.KEY_KIND)
    return "", 204


@bp.delete("/api/settings/web_search/key")
def delete_web_search_key():
    """Forget the chosen backend's key; with SearXNG or none chosen, every stored search key → 204."""
    backend = search_setting.stored()["backend"]
    for name in [backend] if backend in search_setting.KEYED else search_setting.KEYED:
        runtime().keys.delete(name, search_setting.KEY_KIND)
    return "", 204


def _research(fields: Fields):
    """The `research` limits sent (merged into the stored ones), or MISSING."""
    inner = _section(fields, research.SETTING, research.DEFAULTS,
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


def _web_fetch(fields: Fields):
    """The `web_fetch` keys sent (merged into the stored ones), or MISSING."""
    inner = _section(fields, fetch_setting.SETTING, fetch_setting.DEFAULTS,
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


def _section(fields: Fields, setting: str, defaults: dict, example: str) -> Fields | None:
    """The fields of the object sent as `setting`; None when it was not sent or is no object (then noted)."""
    body = fields.raw(setting, False, False)
    if body is MISSING:
        return None
    if not isinstance(body, dict):
        fields.fail(setting, example)
        return None
    return Fields(body, allowed=defaults, prefix=setting + ".")
