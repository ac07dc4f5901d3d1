"""Which knowledge bases a chat or a folder uses (`knowledge_ids`, CONTRACT §8), in numi.db.

A chat searches its own bases and its folder's, read at each request, so a base added to a
folder reaches every chat in it at once. Triggers drop a link when its chat, folder or base
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
    database.execute_sql(
        "CREATE TRIGGER knowledge_link_chat_gone AFTER DELETE ON chat BEGIN "
        "DELETE FROM knowledge_link WHERE owner_kind = 'chat' AND owner_id = old.id; END")
    database.execute_sql(
        "CREATE TRIGGER knowledge_link_folder_gone AFTER DELETE ON folder BEGIN "
        "DELETE FROM knowledge_link WHERE owner_kind = 'folder' AND owner_id = old.id; END")
    database.execute_sql(
        "CREATE TRIGGER knowledge_link_base_gone AFTER DELETE ON knowledge_base BEGIN "
        "DELETE FROM knowledge_link WHERE base_id = old.id; END")


def check(value) -> list[str]:
    """A `knowledge_ids` value from a request: a list of existing bases' ids (null: none)."""
    if value is None:
        return []
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


def read(kind: str, owner_id: str) -> list[str]:
    rows = db.execute_sql("SELECT base_id FROM knowledge_link WHERE owner_kind = ? AND owner_id = ? "
                          "ORDER BY position", (kind, owner_id))
    return [r[0] for r in rows]


def write(kind: str, owner_id: str, ids: list[str]) -> None:
    db.execute_sql("DELETE FROM knowledge_link WHERE owner_kind = ? AND owner_id = ?", (kind, owner_id))
    for position, base_id in enumerate(ids):
        db.execute_sql("INSERT INTO knowledge_link (owner_kind, owner_id, base_id, position) VALUES (?, ?, ?, ?)",
                       (kind, owner_id, base_id, position))


def in_use(chat_id: str | None, folder_id: str | None) -> list[str]:
    """The bases a chat searches: its own, then its folder's, each once."""
    ids = read("chat", chat_id) if chat_id else []
    if folder_id:
        ids += read("folder", folder_id)
    return list(dict.fromkeys(ids))


FIELD = OwnerField(NAME, check, read, write)
