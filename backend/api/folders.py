"""Folders (our addition to CONTRACT §3, docs/PROTOCOL.md "Folders"): a name and the
defaults — model, system prompt, params, mode — that new chats created in the folder copy,
and the tools its chats leave out (`tools_off`, CONTRACT §15), which they follow live."""
from __future__ import annotations

from flask import Blueprint
from peewee import fn

from backend.api import feature_fields
from backend.api.chats import _changed, _check_params, _check_ref, check_tools_off
from backend.api.validate import MISSING, Fields, json_body
from backend.errors import not_found
from backend.runtime import runtime
from backend.store.db import db
from backend.store.models import Chat, Folder, ModelEntry
from backend.store.serialize import iso
from backend.turns import modes

bp = Blueprint("folders", __name__)

FIELDS = ("name", "model_id", "system_prompt", "params", "mode", "tools_off")
READ_ONLY = ("id", "created_at", "chat_count")
NAME_MAX = 100


def _folders_changed() -> None:
    """Tell open windows (/ws/_app) to read the folders again."""
    runtime().app_events.folders_changed()


def _folder(folder_id: str) -> Folder:
    folder = Folder.get_or_none(Folder.id == folder_id)
    if folder is None:
        raise not_found("folder")
    return folder


def _counts() -> dict[str, int]:
    """Chats per folder as the chat list would show them (archived ones included)."""
    rows = (Chat.select(Chat.folder, fn.COUNT(Chat.id).alias("n"))
            .where(Chat.deleted_at.is_null(), Chat.temporary == False,  # noqa: E712
                   Chat.folder.is_null(False))
            .group_by(Chat.folder).tuples())
    return dict(rows)


def folder_to_dict(folder: Folder, chat_count: int = 0) -> dict:
    return {
        "id": folder.id,
        "name": folder.name,
        "model_id": folder.model_id,
        "system_prompt": folder.system_prompt or "",
        "params": dict(folder.params or {}),
        "mode": folder.mode or modes.DEFAULT,  # what its new chats start in (CONTRACT §7)
        "tools_off": list(folder.tools_off) if folder.tools_off is not None else None,
        "chat_count": chat_count,
        "created_at": iso(folder.created_at),
        **feature_fields.shown("folder", folder.id),
    }


def _changes(body: dict, current: Folder | None) -> tuple[dict, dict]:
    """The folder's own fields to set, and the features' (`Feature.fields`)."""
    f = Fields(body, FIELDS + feature_fields.names("folder"), READ_ONLY)
    name = f.text("name", max_len=NAME_MAX, required=current is None, non_empty=True, strip=True)
    if name not in (MISSING, None):
        twin = Folder.select().where(fn.LOWER(Folder.name) == name.lower())
        if current is not None:
            twin = twin.where(Folder.id != current.id)
        if twin.exists():
            f.fail("name", f"There is already a folder called “{name}”. Pick another name.")
    system_prompt = f.text("system_prompt", max_len=8000, nullable=True)
    changes = {
        "name": name,
        "model_id": _check_ref(f, "model_id", ModelEntry, "model", "Pick one from GET /api/models, or null."),
        "system_prompt": "" if system_prompt is None else system_prompt,
        "params": _check_params(f, {} if current is None else current.params),
        "mode": f.choice("mode", modes.MODES, nullable=True),  # null: new chats start in ask
        "tools_off": check_tools_off(f),  # null: nothing off
    }
    featured = feature_fields.checked(f, "folder")
    f.check()
    return {k: v for k, v in changes.items() if v is not MISSING}, featured


@bp.get("/api/folders")
def list_folders():
    counts = _counts()
    folders = Folder.select().order_by(fn.LOWER(Folder.name), Folder.created_at)
    return {"items": [folder_to_dict(x, counts.get(x.id, 0)) for x in folders]}


@bp.post("/api/folders")
def create_folder():
    body = json_body()
    with db.atomic():
        changes, featured = _changes(body, None)
        folder = Folder.create(**changes)
        feature_fields.write("folder", folder.id, featured)
    _folders_changed()
    return folder_to_dict(folder), 201


@bp.get("/api/folders/<folder_id>")
def get_folder(folder_id):
    folder = _folder(folder_id)
    return folder_to_dict(folder, _counts().get(folder.id, 0))


@bp.patch("/api/folders/<folder_id>")
def patch_folder(folder_id):
    body = json_body()
    with db.atomic():
        folder = _folder(folder_id)
        changes, featured = _changes(body, folder)
        for name, value in changes.items():
            setattr(folder, name, value)
        folder.save()
        feature_fields.write("folder", folder.id, featured)
    _folders_changed()
    return folder_to_dict(folder, _counts().get(folder.id, 0))


@bp.delete("/api/folders/<folder_id>")
def delete_folder(folder_id):
    """The folder goes; its chats stay, in no folder (they keep the defaults they copied, and the
    folder's system prompt, which they read at each request, becomes the start of their own)."""
    with db.atomic():
        folder = _folder(folder_id)
        if folder.system_prompt:
            # So a request from such a chat is what it was with the folder; as the request joins them.
            Chat.update(system_prompt=fn.TRIM(folder.system_prompt + "\n\n" + Chat.system_prompt, "\n")).where(
                Chat.folder == folder.id).execute()
        rows = list(Chat.select(Chat.id, Chat.temporary).where(Chat.folder == folder.id,
                                                               Chat.deleted_at.is_null()))
        moved = [c.id for c in rows]
        listed = sum(1 for c in rows if not c.temporary)
        # Every chat that names it, trashed ones too (a restored chat comes back in no folder).
        # Filing, not activity: updated_at stays, so the chats keep their place in the list.
        Chat.update(folder=None).where(Chat.folder == folder.id).execute()
        folder.delete_instance()
    for chat_id in moved:
        _changed(chat_id)
    _folders_changed()
    return {"id": folder_id, "moved_chats": listed}
