"""Which knowledge bases a chat or a folder uses (`knowledge_ids`, CONTRACT §8, §12), in numi.db.

A folder's list applies to its chats, read at each request, so a base added to a folder
reaches every chat in it at once; a chat that sets its own list (even an empty one) searches
that instead, until it sets null again. Triggers drop a link when its chat, folder or base
goes, so no id ever points at nothing.
"""
from __future__ import annotations

from backend.features.knowledge import bases
from backend.store.db import db
from backend.turns.features import FieldRefused, OwnerField

NAME = "knowledge_ids"
MOST = 50  # bases one chat or folder names


def create_table(database) -> None:
    """The named migration that makes the table and its triggers (frozen SQL)."""
    database.execute_sql(
        "CREATE TABLE knowledge_link (owner_kind TEXT NOT NULL, owner_id TEXT NOT NULL, base_id TEXT NOT NULL, "
        "position INTEGER NOT NULL, PRIMARY KEY (owner_kind, owner_id, base_id))")
    database.execute_sql("CREATE INDEX knowledge_link_base ON knowledge_link (base_id)")
    # A chat listed here has a list of its own (which may be empty); one not listed follows its folder's.
    database.execute_sql("CREATE TABLE knowledge_own (chat_id TEXT PRIMARY KEY)")
    database.execute_sql(
        "CREATE TRIGGER knowledge_link_chat_gone AFTER DELETE ON chat BEGIN "
        "DELETE FROM knowledge_link WHERE owner_kind = 'chat' AND owner_id = old.id; "
        "DELETE FROM knowledge_own WHERE chat_id = old.id; END")
    database.execute_sql(
        "CREATE TRIGGER knowledge_link_folder_gone AFTER DELETE ON folder BEGIN "
        "DELETE FROM knowledge_link WHERE owner_kind = 'folder' AND owner_id = old.id; END")
    database.execute_sql(
        "CREATE TRIGGER knowledge_link_base_gone AFTER DELETE ON knowledge_base BEGIN "
        "DELETE FROM knowledge_link WHERE base_id = old.id; END")


def check(value) -> list[str] | None:
    """A `knowledge_ids` value from a request: a list of existing bases' ids, or null (a chat: its
    folder's; a folder: none)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise FieldRefused('Must be a list of knowledge base ids, like ["kb_0123456789abcdef"], or [].')
    ids = list(dict.fromkeys(value))
    if len(ids) > MOST:
        raise FieldRefused(f"Name at most {MOST} knowledge bases (it names {len(ids):,}).")
    known = {b.id for b in bases.all_bases()}
    unknown = [i for i in ids if i not in known]
    if unknown:
        listed = ", ".join(unknown[:3]) + ("…" if len(unknown) > 3 else "")
        raise FieldRefused(f"No knowledge base with the id {listed}. Pick bases from GET /api/knowledge.")
    return ids


def _listed(kind: str, owner_id: str) -> list[str]:
    rows = db.execute_sql("SELECT base_id FROM knowledge_link WHERE owner_kind = ? AND owner_id = ? "
                          "ORDER BY position", (kind, owner_id))
    return [r[0] for r in rows]


def read(kind: str, owner_id: str) -> list[str] | None:
    """A folder's list; a chat's own list, or None when it follows its folder's."""
    if kind == "chat" and db.execute_sql("SELECT 1 FROM knowledge_own WHERE chat_id = ?", (owner_id,)).fetchone() is None:
        return None
    return _listed(kind, owner_id)


def write(kind: str, owner_id: str, ids: list[str] | None) -> None:
    db.execute_sql("DELETE FROM knowledge_link WHERE owner_kind = ? AND owner_id = ?", (kind, owner_id))
    if kind == "chat":
        db.execute_sql("DELETE FROM knowledge_own WHERE chat_id = ?", (owner_id,))
        if ids is not None:
            db.execute_sql("INSERT INTO knowledge_own (chat_id) VALUES (?)", (owner_id,))
    for position, base_id in enumerate(ids or []):
        db.execute_sql("INSERT INTO knowledge_link (owner_kind, owner_id, base_id, position) VALUES (?, ?, ?, ?)",
                       (kind, owner_id, base_id, position))


def in_use(chat_id: str | None, folder_id: str | None) -> list[str]:
    """The bases a chat searches: its own list when it set one, else its folder's."""
    own = read("chat", chat_id) if chat_id else None
    if own is not None:
        return own
    return _listed("folder", folder_id) if folder_id else []


def carry(ids: list[str] | None) -> list[dict] | None:
    """A folder file's form: the bases by name (another machine has other ids)."""
    if ids is None:
        return None
    names = {b.id: b.name for b in bases.all_bases()}
    return [{"name": names[i]} for i in ids if i in names]


def adopt(carried) -> tuple[list[str] | None, list[str]]:
    """A folder file's bases as this machine's ids, by name (case ignored); a sentence for each
    name no base here has."""
    if carried is None:
        return None, []
    if (not isinstance(carried, list) or len(carried) > MOST
            or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in carried)):
        raise FieldRefused(f'Must be a list of at most {MOST} bases by name, like [{{"name": "Work notes"}}], or null.')
    here: dict[str, str] = {}
    for base in bases.all_bases():  # oldest first: of two bases with one name, the older
        here.setdefault(base.name.casefold(), base.id)
    ids, notes = [], []
    for c in carried:
        found = here.get(c["name"].casefold())
        if found is None:
            notes.append(f"There is no knowledge base called “{c['name'][:100]}” here; make one in "
                         f"Settings → Knowledge and add it to the folder.")
        else:
            ids.append(found)
    return list(dict.fromkeys(ids)), notes


FIELD = OwnerField(NAME, check, read, write, carry=carry, adopt=adopt)
