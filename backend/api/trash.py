"""The trash (our addition to CONTRACT §3, docs/PROTOCOL.md "Trash"): the chats that
`DELETE /api/chats/{id}` soft-deleted, listed newest deletion first, and emptied for good."""
from __future__ import annotations

from flask import Blueprint

from backend.api.chats import PAGE_MAX, STOP_WAIT_S, chat_page
from backend.api.validate import int_arg
from backend.errors import ApiError
from backend.runtime import runtime
from backend.store import housekeeping
from backend.store.db import db
from backend.store.models import Chat
from backend.store.serialize import chat_to_dict, iso

bp = Blueprint("trash", __name__)


def _in_trash():
    # Temporary chats are not listed here: they go when Numi exits, deleted or not.
    return Chat.select().where(Chat.deleted_at.is_null(False), Chat.temporary == False)  # noqa: E712


@bp.get("/api/trash")
def list_trash():
    limit = int_arg("limit", 50, 1, PAGE_MAX)
    page, next_cursor = chat_page(_in_trash(), Chat.deleted_at, limit)
    running = runtime().turns.running_chat_ids()
    return {
        "items": [{**chat_to_dict(c, c.id in running), "deleted_at": iso(c.deleted_at)} for c in page],
        "next_cursor": next_cursor,
        "retention_days": housekeeping.trash_days(),
    }


@bp.delete("/api/trash")
def empty_trash():
    """Every deleted chat (temporary ones too) is purged; nothing else is touched."""
    registry = runtime().turns
    deleted = {c.id for c in Chat.select(Chat.id).where(Chat.deleted_at.is_null(False))}
    for chat_id in deleted & registry.running_chat_ids():
        # Outside any transaction: the turn saves its partial reply while it stops.
        if not registry.stop_chat(chat_id, wait=STOP_WAIT_S):
            raise ApiError(409, "busy", "A reply in a deleted chat is still stopping, so nothing was "
                                        "removed; try again in a moment.")
    with db.atomic():
        # Read again: a chat restored meanwhile stays, and one deleted meanwhile (its
        # reply maybe not stopped) waits for the next time.
        ids = [c.id for c in Chat.select(Chat.id).where(Chat.deleted_at.is_null(False)) if c.id in deleted]
        purged = housekeeping.purge_chats(ids)
    return {"purged": purged}
