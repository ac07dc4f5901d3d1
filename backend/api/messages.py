"""A chat's messages as a tree (CONTRACT §3, §5): the active branch, switching it, the whole tree."""
from __future__ import annotations

from flask import Blueprint, request

from backend.api.validate import MISSING, Fields, int_arg, json_body
from backend.errors import ApiError, invalid, not_found
from backend.runtime import runtime
from backend.store import cursor, history
from backend.store.db import db
from backend.store.serialize import iso, message_preview, message_to_dict
from backend.turns.registry import CommandError

bp = Blueprint("messages", __name__)
PAGE_MAX = 200
PAGE_DEFAULT = 50
PREVIEW_CHARS = 120
MAX_ID = (1 << 63) - 1
# Nodes per GET …/tree answer at most (its size: docs/BENCHMARKS.md); a longer tree is paged with `cursor`.
TREE_PAGE_MAX = 5_000


def _chat(chat_id: str) -> str:
    """The id of a chat that is not deleted, or 404."""
    # One plain query: a peewee row for the whole chat cost more than the rest of a switch.
    if db.execute_sql("SELECT 1 FROM chat WHERE id = ? AND deleted_at IS NULL", (chat_id,)).fetchone() is None:
        raise not_found("chat")
    return chat_id


def _message_id_arg(name: str) -> int | None:
    value = request.args.get(name, "")
    if not value:
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 18:  # "²" is a digit int() refuses
        raise invalid({name: "Must be a message id from this chat's messages."})
    return int(value)


def page(chat_id: str, limit: int, before: int | None = None, through: int | None = None) -> dict:
    """A page of a branch as `GET …/messages` lists it, with each message's versions."""
    try:
        rows, more = history.branch_page(chat_id, limit, before=before, through=through)
    except history.NotInChat:
        raise not_found("message") from None
    if before is None:
        rows += history.queued(chat_id)  # sent, waiting for the running turn: after the branch
    versions = history.versions(rows)
    return {"items": [{**message_to_dict(r), "versions": versions[r.id]} for r in rows], "has_more": more}


@bp.get("/api/chats/<chat_id>/messages")
def list_messages(chat_id):
    chat = _chat(chat_id)
    limit = int_arg("limit", PAGE_DEFAULT, 1, PAGE_MAX)
    return page(chat, limit, before=_message_id_arg("before"), through=_message_id_arg("through"))


@bp.post("/api/chats/<chat_id>/active")
def switch_branch(chat_id):
    chat = _chat(chat_id)
    f = Fields(json_body(), ("message_id", "limit"))
    message_id = f.number("message_id", 1, MAX_ID, integer=True, required=True)
    limit = f.number("limit", 1, PAGE_MAX, integer=True)
    f.check()
    try:
        runtime().turns.switch(chat, message_id)
    except CommandError as exc:
        status = {"busy": 409, "not_found": 404, "shutting_down": 503}.get(exc.code, 400)
        raise ApiError(status, exc.code, exc.message) from None
    return page(chat, PAGE_DEFAULT if limit is MISSING else limit)


@bp.get("/api/chats/<chat_id>/tree")
def message_tree(chat_id):
    """The chat's messages as a tree, oldest first, TREE_PAGE_MAX (or `limit`) at a time:
    `truncated` says more follow, and `next_cursor` asks for them."""
    chat = _chat(chat_id)
    limit = int_arg("limit", TREE_PAGE_MAX, 1, TREE_PAGE_MAX)
    after = _tree_cursor()
    rows = history.tree(chat, after=after, limit=limit + 1, text_chars=PREVIEW_CHARS)
    more = len(rows) > limit
    items = []
    for row in rows[:limit]:
        preview = message_preview(row, PREVIEW_CHARS)
        items.append({"id": row.id, "parent_id": row.parent_id, "role": row.role, "status": row.status,
                      "model_id": row.model_id, "created_at": iso(row.created_at), "preview": preview})
    return {"items": items, "active_leaf_id": history.active_leaf(chat), "truncated": more,
            "next_cursor": cursor.encode_id(items[-1]["id"]) if more else None}


def _tree_cursor() -> int:
    """Where a page of the tree starts: after the message id a `next_cursor` named (0: the start)."""
    try:
        return cursor.decode_id(request.args.get("cursor", ""))
    except cursor.BadCursor as exc:
        raise invalid({"cursor": str(exc)}) from None


@bp.get("/api/chats/<chat_id>/usage")
def chat_usage(chat_id):
    """Tokens and cost of every saved reply in the chat, every version counted, summed."""
    from backend.turns import metrics

    chat = _chat(chat_id)
    total = metrics.empty()
    replies = 0
    for usage in history.reply_usages(chat):
        metrics.add(total, usage)
        replies += 1
    return {**total, "replies": replies}


@bp.get("/api/chats/<chat_id>/messages/<int:message_id>/compare")
def compare_columns(chat_id, message_id):
    """A compare's columns (CONTRACT §10): for the user message it asked, each model's reply as its
    messages from the first down to the newest (the leaf last active under it), in the models' order."""
    chat = _chat(chat_id)
    try:
        user = history.message(chat, message_id)
    except history.NotInChat:
        raise not_found("message") from None
    parts = user.content_parts if isinstance(user.content_parts, dict) else {}
    models = parts.get("compare")
    if user.role != "user" or not isinstance(models, list):
        raise ApiError(404, "not_found", "That message did not ask a compare.")
    firsts = [r for r in history.tree(chat, after=user.id) if r.parent_id == user.id and r.role == "assistant"]
    columns = []
    for first in firsts:
        rows = history.path(history.leaf_under(first.id))
        rows = rows[next(i for i, r in enumerate(rows) if r.id == first.id):]
        versions = history.versions(rows[:1])
        columns.append({"model_id": first.model_id, "message_id": first.id,
                        "messages": [{**message_to_dict(r), **({"versions": versions[r.id]} if r.id in versions else {})}
                                     for r in rows]})
    return {"message_id": user.id, "models": models, "columns": columns,
            "active_leaf_id": history.active_leaf(chat)}
