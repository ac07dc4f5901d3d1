"""GET/PATCH /api/settings: every registered section of the app settings (backend/store/settings.py;
web_fetch's trusted local origins among them) plus the read-only keyring, catalog.toml and shell
sandbox status; PUT/DELETE /api/settings/web_search/key: the web search backend's key."""
from __future__ import annotations

from flask import Blueprint

# Imported for their sections of the settings, which they register.
from backend.api import settings_sections, ui_settings  # noqa: F401
from backend.api.validate import MISSING, Fields, api_key_field, json_body
from backend.errors import ApiError
from backend.features import compaction
from backend.features.web import search_setting
from backend.runtime import runtime
from backend.store import settings
from backend.store.db import db
from backend.tools import sandbox

bp = Blueprint("settings", __name__)

READ_ONLY = ("keyring", "catalog", "shell_sandbox")


def get_setting(key: str):
    """A setting as stored, or its section's value when never set."""
    section = settings.find(key)
    return settings.get(key, section.defaults if section is not None else None)


def forget_models(model_ids) -> None:
    """Called inside the transaction that deletes models, so no setting points at them."""
    if get_setting(settings_sections.DEFAULT_MODEL) in set(model_ids):
        settings.put(settings_sections.DEFAULT_MODEL, None)
    chosen = compaction.settings()
    if chosen.model_id in set(model_ids):
        settings.put(compaction.SETTING, {**vars(chosen), "model_id": None})


def settings_dict() -> dict:
    data = {section.name: section.view() for section in settings.sections()}
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
    sections = settings.sections()
    # Checked inside the write transaction so that a model named cannot vanish between check and save.
    with db.atomic():
        fields = Fields(body, allowed=[section.name for section in sections], read_only=READ_ONLY)
        sent = [(section, section.validate(fields)) for section in sections]
        fields.check()
        for section, value in sent:
            if value is not MISSING:
                section.save(value)
    return settings_dict()


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
