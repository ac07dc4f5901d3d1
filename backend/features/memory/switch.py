"""Whether memory is on (CONTRACT §8, §12): `settings.memory`, each folder's and chat's `memory`.

Memory is on for a chat when it is on in Settings, the chat is not temporary, and the chat's own
`memory` (when set) or else its folder's is true. A folder's `memory` is true until set false
(null sets it back); a chat's is null until set, following its folder's, read at each request so a
folder's change reaches its chats at once. The values live in `memory_owner`; triggers drop a
chat's or a folder's row when it goes.
"""
from __future__ import annotations

from backend.fields import MISSING, Fields, nested
from backend.store import chats, settings
from backend.store.db import db
from backend.store.settings import Section
from backend.turns.features import FieldRefused, OwnerField

SETTING = "memory"
DEFAULTS = {"enabled": True}
NAME = "memory"


def create_table(database) -> None:
    """The named migration that makes the table and its triggers (frozen SQL)."""
    database.execute_sql("CREATE TABLE memory_owner (owner_kind TEXT NOT NULL, owner_id TEXT NOT NULL, "
                         "enabled INTEGER NOT NULL, PRIMARY KEY (owner_kind, owner_id))")
    database.execute_sql("CREATE TRIGGER memory_owner_chat_gone AFTER DELETE ON chat BEGIN "
                         "DELETE FROM memory_owner WHERE owner_kind = 'chat' AND owner_id = old.id; END")
    database.execute_sql("CREATE TRIGGER memory_owner_folder_gone AFTER DELETE ON folder BEGIN "
                         "DELETE FROM memory_owner WHERE owner_kind = 'folder' AND owner_id = old.id; END")


# --- settings.memory -------------------------------------------------------------------------

def enabled() -> bool:
    """Memory as Settings → Memory has it (on unless turned off)."""
    return settings.get_object(SETTING).get("enabled", True) is not False


def _memory(fields: Fields):
    inner = nested(fields, SETTING, DEFAULTS, 'Must be an object like {"enabled": true}.')
    if inner is None:
        return MISSING
    on = inner.boolean("enabled")
    fields.errors.update(inner.errors)
    return MISSING if on is MISSING or inner.errors else {"enabled": on}


SECTION = Section(SETTING, DEFAULTS, _memory, merge=True, current=lambda: {"enabled": enabled()})


# --- chats and folders -----------------------------------------------------------------------

def check(value) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise FieldRefused("Must be true or false, or null (a chat: as its folder says; a folder: on).")


def _own(kind: str, owner_id: str) -> bool | None:
    row = db.execute_sql("SELECT enabled FROM memory_owner WHERE owner_kind = ? AND owner_id = ?",
                         (kind, owner_id)).fetchone()
    return None if row is None else bool(row[0])


def read(kind: str, owner_id: str) -> bool | None:
    """A folder's value (true unless set false); a chat's own, or None when it follows its folder's."""
    own = _own(kind, owner_id)
    return own if own is not None or kind == "chat" else True


def write(kind: str, owner_id: str, value: bool | None) -> None:
    db.execute_sql("DELETE FROM memory_owner WHERE owner_kind = ? AND owner_id = ?", (kind, owner_id))
    if value is not None:
        db.execute_sql("INSERT INTO memory_owner (owner_kind, owner_id, enabled) VALUES (?, ?, ?)",
                       (kind, owner_id, int(value)))


FIELD = OwnerField(NAME, check, read, write)


def folder_on(folder_id: str | None) -> bool:
    return read("folder", folder_id) is not False if folder_id else True


def on_for(chat_id: str | None, folder_id: str | None) -> bool:
    """Whether memory is on for the chat (or, without one, the folder), Settings included."""
    if not enabled():
        return False
    if chat_id is not None:
        chat = chats.get(chat_id)
        if chat is None or chat.temporary:
            return False
        own = _own("chat", chat_id)
        if own is not None:
            return own
        folder_id = chat.folder_id
    return folder_on(folder_id)


def on_for_chat(chat) -> bool:
    """`on_for` with the chat's row at hand (a request's plan)."""
    if chat.temporary or not enabled():
        return False
    own = _own("chat", chat.id)
    return own if own is not None else folder_on(chat.folder_id)
