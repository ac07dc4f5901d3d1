"""Removing what is meant to go: purged chats, trash past its keeping time, temporary chats,
and what an import that did not finish left.

Every path that deletes a chat for good goes through `purge_chats`, so whatever
else a chat owns (its messages today; search rows or attachment links tomorrow)
has one place to be cleaned up with it. Its draft, compactions and own state
(tool policies, standing rules: backend/store/chat_state.py) go with the chat row
by ON DELETE CASCADE.
"""
from __future__ import annotations

import logging
import os

from backend.store import paced
from backend.store.db import db, now
from backend.store.models import Chat, Message

log = logging.getLogger(__name__)

DAY_S = 86_400.0
DEFAULT_TRASH_DAYS = 30.0
# A temporary chat left behind by a process that did not exit cleanly stays this
# long (a reload after a crash reopens it); then the next start removes it.
TEMPORARY_IDLE_S = DAY_S
# SQLite builds before 3.32 allow 999 bound variables per statement.
_CHUNK = 500


def purge_chats(chat_ids) -> int:
    """Delete these chats and everything they own, for good. Call inside a transaction."""
    ids = list(chat_ids)
    for i in range(0, len(ids), _CHUNK):
        part = ids[i:i + _CHUNK]
        Message.delete().where(Message.chat.in_(part)).execute()
        Chat.delete().where(Chat.id.in_(part)).execute()
    return len(ids)


def purge_chats_paced(chat_ids, pause: bool = True) -> int:
    """purge_chats for chats of any length, in short transactions (backend/store/paced.py),
    so it never holds the database long; `pause=False` when nothing else writes yet."""
    ids = list(chat_ids)

    def work():
        for i in range(0, len(ids), _CHUNK):
            part = ids[i:i + _CHUNK]
            while rows := [m.id for m in Message.select(Message.id).where(Message.chat.in_(part)).limit(_CHUNK)]:
                Message.delete().where(Message.id.in_(rows)).execute()
                yield
            Chat.delete().where(Chat.id.in_(part)).execute()
            yield

    paced.run(work(), pause=pause)
    return len(ids)


def purge_unfinished_imports() -> int:
    """Chats an import was still writing (hidden) when the process ended: never shown, so removed."""
    ids = [c.id for c in Chat.select(Chat.id).where(Chat.import_id.is_null(False))]
    return purge_chats_paced(ids, pause=False) if ids else 0


def trash_days() -> float | None:
    """NUMI_TRASH_DAYS: days a deleted chat is kept (default 30); 0 keeps them until emptied."""
    raw = os.environ.get("NUMI_TRASH_DAYS", "").strip()
    if not raw:
        return DEFAULT_TRASH_DAYS
    try:
        days = float(raw)
    except ValueError:
        days = -1.0
    if not days >= 0:  # also NaN
        log.warning("NUMI_TRASH_DAYS=%r is not a number of days (0 or more); using %g",
                    raw, DEFAULT_TRASH_DAYS)
        return DEFAULT_TRASH_DAYS
    return days or None


def purge_old_trash(days: float | None) -> int:
    """Chats deleted more than `days` ago are purged; None purges nothing."""
    if days is None:
        return 0
    cutoff = now() - days * DAY_S
    with db.atomic():
        ids = [c.id for c in Chat.select(Chat.id).where(Chat.deleted_at.is_null(False),
                                                         Chat.deleted_at < cutoff)]
        return purge_chats(ids)


def remove_temporary(idle_s: float | None = None, keep=()) -> int:
    """Temporary chats not touched for `idle_s` seconds (None: all of them) are purged.

    `keep`: ids left alone (a reply still being written when the process exits).
    """
    with db.atomic():
        query = Chat.select(Chat.id).where(Chat.temporary == True)  # noqa: E712
        if idle_s is not None:
            query = query.where(Chat.updated_at < now() - idle_s)
        keep = set(keep)
        ids = [c.id for c in query if c.id not in keep]
        return purge_chats(ids)


def at_start() -> None:
    """Before the first request: trash past its time, temporary chats left by a crash."""
    with db.connection_context():
        n = purge_unfinished_imports()
        if n:
            log.info("removed %d chats of an import that did not finish", n)
        n = purge_old_trash(trash_days())
        if n:
            log.info("emptied %d chats from the trash (deleted more than %g days ago)", n, trash_days())
        n = remove_temporary(TEMPORARY_IDLE_S)
        if n:
            log.info("removed %d temporary chats left from an earlier run", n)


def at_exit(keep=()) -> None:
    """On a clean exit, after the turns stopped: temporary chats go."""
    with db.connection_context():
        n = remove_temporary(None, keep)
        if n:
            log.info("removed %d temporary chats", n)
