"""Chats and their messages (CONTRACT §3): list, create, edit, soft delete, restore, purge."""
from __future__ import annotations

from pathlib import Path

from flask import Blueprint, request

from backend.api import feature_fields
from backend.api.settings import get_setting
from backend.api.validate import MISSING, Fields, bool_arg, int_arg, json_body
from backend.errors import ApiError, invalid, not_found
from backend.runtime import runtime
from backend.store import cursor, drafts
from backend.store.chats import TOOL_NAME_MAX, TOOLS_OFF_MAX
from backend.store.db import db, now
from backend.store.housekeeping import purge_chats
from backend.store.models import Chat, Folder, ModelEntry
from backend.store.serialize import chat_to_dict
from backend.tools.workspace import same_or_inside
from backend.turns import features, modes

bp = Blueprint("chats", __name__)

CREATE_FIELDS = ("title", "model_id", "folder_id", "system_prompt", "params", "temporary", "workspace", "mode",
                 "tools_off")
PATCH_FIELDS = CREATE_FIELDS + ("pinned", "archived", "unread")
READ_ONLY = ("id", "created_at", "updated_at", "running", "awaiting_approval", "awaiting_answer")
# Filing a chat away, or switching its mode, is not activity in it: these alone do not move it up the list.
ORGANISING_FIELDS = {"pinned", "archived", "unread", "folder_id", "temporary", "mode", "tools_off"}
REASONING_EFFORTS = ("off", "low", "medium", "high")
PAGE_MAX = 200
STOP_WAIT_S = 5.0


def _running() -> set[str]:
    return set(runtime().turns.running_chat_ids())


def _chat_json(chat: Chat, full: bool = True) -> dict:
    turns = runtime().turns
    data = chat_to_dict(chat, chat.id in _running(), full=full, awaiting=turns.is_awaiting(chat.id),
                        asking=turns.is_asking(chat.id))
    if full:
        data.update(feature_fields.shown("chat", chat.id))
    return data


def _changed(chat_id: str) -> None:
    """Tell open windows' chat lists (/ws/_app); called once the change is committed."""
    runtime().app_events.chat_changed(chat_id)


def _chat(chat_id: str, *, include_deleted: bool = False) -> Chat:
    chat = Chat.get_or_none(Chat.id == chat_id)
    if chat is None or (chat.deleted_at is not None and not include_deleted):
        raise not_found("chat")
    return chat


# -- validation ---------------------------------------------------------------

def _check_params(f: Fields, current: dict):
    """The chat's params after applying the request's; `null` for one clears it."""
    value = f.raw("params", False, True)
    if value is MISSING:
        return MISSING
    if value is None:
        return {}
    if not isinstance(value, dict):
        return f.fail("params", 'Must be an object, like {"temperature": 0.7}.')
    p = Fields(value, ("temperature", "top_p", "max_tokens", "reasoning_effort"), prefix="params.")
    checked = {
        "temperature": p.number("temperature", 0, 2, nullable=True),
        "top_p": p.number("top_p", 0, 1, nullable=True),
        "max_tokens": p.number("max_tokens", 1, 1_000_000, integer=True, nullable=True),
        "reasoning_effort": p.choice("reasoning_effort", REASONING_EFFORTS, nullable=True),
    }
    f.errors.update(p.errors)
    merged = dict(current or {})
    for name, v in checked.items():
        if v is None:
            merged.pop(name, None)
        elif v is not MISSING:
            merged[name] = v
    return merged


def check_tools_off(f: Fields):
    """`tools_off` (CONTRACT §15): null, or a list of tool names kept as given, duplicates dropped."""
    value = f.raw("tools_off", False, True)
    if value is MISSING or value is None:
        return value
    if not isinstance(value, list):
        return f.fail("tools_off", 'Must be a list of tool names, like ["web_search", "mcp__files__*"], '
                                   "or null.")
    if len(value) > TOOLS_OFF_MAX:
        return f.fail("tools_off", f"Must name at most {TOOLS_OFF_MAX} tools (it names {len(value):,}). "
                                   f"Turn a whole MCP server off as mcp__<server>__* instead of its tools one by one.")
    for i, name in enumerate(value, 1):
        if not isinstance(name, str) or not name.strip():
            return f.fail("tools_off", f"Item {i} must be a tool name, a non-empty string like \"web_search\".")
        if len(name) > TOOL_NAME_MAX:
            return f.fail("tools_off", f"Item {i} is {len(name):,} characters long; a tool name has at most "
                                       f"{TOOL_NAME_MAX}.")
    return list(dict.fromkeys(value))


def _check_ref(f: Fields, name: str, model, what: str, hint: str):
    value = f.text(name, max_len=200, nullable=True)
    if value not in (MISSING, None) and model.get_or_none(model.id == value) is None:
        return f.fail(name, f"No {what} with this id. {hint}")
    return value


def _chat_changes(body: dict, current: Chat | None) -> tuple[dict, dict]:
    """The chat's own fields to set, and the features' (`Feature.fields`)."""
    creating = current is None
    f = Fields(body, (CREATE_FIELDS if creating else PATCH_FIELDS) + feature_fields.names("chat"), READ_ONLY)
    title = f.text("title", max_len=300, strip=True)
    system_prompt = f.text("system_prompt", max_len=8000, nullable=True)
    folder_id = _check_ref(f, "folder_id", Folder, "folder", "Use an existing folder, or null.")
    # A new chat in a folder starts from the folder's defaults; they are copied now, once
    # (docs/PROTOCOL.md, "Folders"): a chat's params are the folder's with the request's on top.
    folder = Folder.get_or_none(Folder.id == folder_id) if creating and folder_id not in (MISSING, None) else None
    changes = {
        "title": title,
        "model_id": _check_ref(f, "model_id", ModelEntry, "model", "Pick one from GET /api/models, or null."),
        "folder": folder_id,
        "system_prompt": "" if system_prompt is None else system_prompt,
        "params": _check_params(f, (folder.params if folder else {}) if creating else current.params),
        "temporary": f.boolean("temporary"),
        "workspace": _check_workspace(f),
        # null on create: the folder's mode, else ask (as when it is left out).
        "mode": f.choice("mode", modes.MODES, nullable=creating),
        # Never copied from the folder: null follows the folder's list as it is at each request.
        "tools_off": check_tools_off(f),
    }
    if not creating:
        changes.update(pinned=f.boolean("pinned"), archived=f.boolean("archived"), unread=f.boolean("unread"))
        if changes["temporary"] is True and not current.temporary:
            # Temporary chats are deleted when Numi exits: never make that happen to a saved chat.
            f.fail("temporary", "A saved chat cannot become temporary (temporary chats are deleted "
                                "when Numi exits). Start a new temporary chat instead.")
    featured = feature_fields.checked(f, "chat")
    f.check()
    changes = {k: v for k, v in changes.items() if v is not MISSING}
    if folder is not None:
        _inherit(changes, body, folder)
    return changes, featured


def _check_workspace(f: Fields):
    """The chosen folder as its real path, or null; a folder the tools could hurt Numi through is refused."""
    value = f.text("workspace", max_len=4096, nullable=True)
    if value in (MISSING, None) or value == "":
        return None if value == "" else value
    path = Path(value).expanduser()
    if not path.is_absolute():
        return f.fail("workspace", "Give the folder's full path (for example /home/me/project).")
    if not path.is_dir():
        return f.fail("workspace", f"There is no folder at {value}. Choose an existing folder.")
    real = path.resolve()
    if real == Path(real.anchor):
        return f.fail("workspace", "Choose a project folder, not the whole disk.")
    data = Path(runtime().config.data_dir).resolve()
    if same_or_inside(real, data):
        return f.fail("workspace", "That folder holds Numi's own data (chats, keys' settings, backups); "
                                   "choose a project folder outside it.")
    if same_or_inside(data, real):
        # Its tools would reach the data dir (the API token, the database) from inside.
        return f.fail("workspace", f"That folder contains Numi's own data folder ({data}), which the "
                                   f"tools must never reach; choose a project folder that does not contain it.")
    return str(real)


def _inherit(changes: dict, body: dict, folder: Folder) -> None:
    """Fill what a new chat's request left out (or null) from its folder's defaults (its system
    prompt is not one: the folder's is read at each request, before the chat's own)."""
    if changes.get("model_id") is None and folder.model_id \
            and ModelEntry.get_or_none(ModelEntry.id == folder.model_id) is not None:
        changes["model_id"] = folder.model_id
    if "params" not in body:
        changes["params"] = dict(folder.params or {})
    if body.get("mode") is None:
        changes["mode"] = folder.mode or modes.DEFAULT


# -- chats --------------------------------------------------------------------

def chat_page(query, key, limit: int) -> tuple[list[Chat], str | None]:
    """A page of chats, newest `key` first, from the request's `cursor`; and the next page's cursor."""
    try:
        return cursor.newest_first(query, key, Chat.id, request.args.get("cursor", ""), limit)
    except cursor.BadCursor as exc:
        raise invalid({"cursor": str(exc)}) from None


@bp.get("/api/chats")
def list_chats():
    limit = int_arg("limit", 50, 1, PAGE_MAX)
    archived = bool_arg("archived")
    query = Chat.select().where(Chat.deleted_at.is_null(), Chat.temporary == False)  # noqa: E712
    # Without `archived`, the list is the sidebar's: archived chats are filed away.
    query = query.where(Chat.archived == bool(archived))
    folder_id = request.args.get("folder_id", "")
    if folder_id:
        query = query.where(Chat.folder == folder_id)
    page, next_cursor = chat_page(query, Chat.updated_at, limit)
    turns = runtime().turns
    running = set(turns.running_chat_ids())
    return {
        "items": [chat_to_dict(c, c.id in running, awaiting=c.id in running and turns.is_awaiting(c.id),
                               asking=c.id in running and turns.is_asking(c.id))
                  for c in page],
        "next_cursor": next_cursor,
    }


@bp.post("/api/chats")
def create_chat():
    body = json_body()
    with db.atomic():
        changes, featured = _chat_changes(body, None)
        if changes.get("model_id") is None:
            default = get_setting("default_model_id")
            if default and ModelEntry.get_or_none(ModelEntry.id == default):
                changes["model_id"] = default
        if changes.get("mode") is None:
            changes["mode"] = modes.DEFAULT
        chat = Chat.create(**changes)
        feature_fields.write("chat", chat.id, featured)
    _changed(chat.id)
    return _chat_json(chat), 201


@bp.get("/api/chats/<chat_id>")
def get_chat(chat_id):
    return _chat_json(_chat(chat_id))


@bp.patch("/api/chats/<chat_id>")
def patch_chat(chat_id):
    body = json_body()
    with db.atomic():
        chat = _chat(chat_id)
        changes, featured = _chat_changes(body, chat)
        if changes.get("mode", chat.mode) != chat.mode:
            features.mode_changed(chat.id)
        for name, value in changes.items():
            setattr(chat, name, value)
        # What a feature adds (bases, memory) is the chat's settings, not activity in it.
        if set(changes) - ORGANISING_FIELDS - {"folder"}:
            chat.updated_at = now()
        chat.save()
        feature_fields.write("chat", chat.id, featured)
    _changed(chat.id)
    return _chat_json(chat)


@bp.delete("/api/chats/<chat_id>")
def delete_chat(chat_id):
    purge = bool_arg("purge")
    chat = _chat(chat_id, include_deleted=True)
    if chat.id in _running() or runtime().turns.is_summarizing(chat.id):
        # Outside any transaction: the turn saves its partial reply while it stops.
        stopped = runtime().turns.stop_chat(chat.id, wait=5.0 if purge else 0.0)
        if purge and not stopped:
            raise ApiError(409, "busy", "The reply in this chat is still stopping; try again in a moment.")
    with db.atomic():
        chat = _chat(chat_id, include_deleted=True)
        if purge:
            purge_chats([chat.id])
        elif chat.deleted_at is None:
            chat.deleted_at = now()
            chat.save()
            drafts.drop(chat.id)  # a deleted chat keeps no unsent message (a purge cascades)
    _changed(chat_id)  # chat_removed
    return "", 204


@bp.post("/api/chats/<chat_id>/restore")
def restore_chat(chat_id):
    with db.atomic():
        chat = _chat(chat_id, include_deleted=True)
        if chat.deleted_at is not None:
            chat.deleted_at = None
            chat.save()
    _changed(chat.id)
    return _chat_json(chat)
