"""Documents and their versions in numi.db (CONTRACT §9).

`document` holds one row per document: its id ("doc_" and 16 hex digits), its chat, title,
language and the number of its latest version. `document_version` keeps every version's
whole text, numbered from 1 per document, with its author ("model" or "person"), its size in
characters and, for the model's, the assistant message and turn whose call wrote it. Versions
are never changed or deleted on their own: a document goes with its chat when the chat row is
deleted (purged; a trigger), and its versions go with it (another). A chat in the trash keeps
its documents.

A change is read-and-written in one transaction (`revise`), so two writers (the model's edit,
the person's PATCH) never both build on the same version: the second sees the first's.
"""
from __future__ import annotations

import secrets
import time
from typing import Callable, NamedTuple

from backend.store.db import db

AUTHORS = ("model", "person")


def create_tables(database) -> None:
    """The named migration that makes the tables and their triggers (frozen SQL)."""
    for sql in (
        "CREATE TABLE document (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, chat_id TEXT NOT NULL, "
        "title TEXT NOT NULL, language TEXT NOT NULL, version INTEGER NOT NULL, "
        "created_at REAL NOT NULL, updated_at REAL NOT NULL)",
        "CREATE INDEX document_chat ON document (chat_id, seq)",
        # The text last: SQLite reads a row's columns in order, and the ones after a long text only
        # by walking its overflow pages (listing 200 versions of 200 KB read 40 MB that way).
        "CREATE TABLE document_version (doc_seq INTEGER NOT NULL, version INTEGER NOT NULL, "
        "size INTEGER NOT NULL, author TEXT NOT NULL CHECK (author IN ('model', 'person')), "
        "message_id INTEGER, turn_id TEXT, created_at REAL NOT NULL, content TEXT NOT NULL, "
        "PRIMARY KEY (doc_seq, version))",
        "CREATE TRIGGER document_chat_purged AFTER DELETE ON chat BEGIN "
        "DELETE FROM document WHERE chat_id = old.id; END",
        "CREATE TRIGGER document_removed AFTER DELETE ON document BEGIN "
        "DELETE FROM document_version WHERE doc_seq = old.seq; END",
    ):
        database.execute_sql(sql)


class Doc(NamedTuple):
    seq: int
    id: str
    chat_id: str
    title: str
    language: str
    version: int  # the latest
    created_at: float
    updated_at: float


class Version(NamedTuple):
    version: int
    author: str
    size: int  # characters
    message_id: int | None
    turn_id: str | None
    created_at: float


COLUMNS = "seq, id, chat_id, title, language, version, created_at, updated_at"
VERSION_COLUMNS = "version, author, size, message_id, turn_id, created_at"


class Unchanged(Exception):
    """The new text is the latest version's (`version`): no version is made."""

    def __init__(self, version: int):
        super().__init__(f"unchanged at version {version}")
        self.version = version


def new_id() -> str:
    return "doc_" + secrets.token_hex(8)


def _docs(sql: str, args=()) -> list[Doc]:
    return list(map(Doc._make, db.execute_sql(sql, args)))


def get(doc_id: str) -> Doc | None:
    found = _docs(f"SELECT {COLUMNS} FROM document WHERE id = ?", (doc_id,))
    return found[0] if found else None


def in_chat(chat_id: str) -> list[Doc]:
    """The chat's documents, oldest first."""
    return _docs(f"SELECT {COLUMNS} FROM document WHERE chat_id = ? ORDER BY seq", (chat_id,))


def any_in_chat(chat_id: str) -> bool:
    return db.execute_sql("SELECT 1 FROM document WHERE chat_id = ? LIMIT 1", (chat_id,)).fetchone() is not None


def taken(doc_id: str) -> bool:
    return db.execute_sql("SELECT 1 FROM document WHERE id = ?", (doc_id,)).fetchone() is not None


def text(doc: Doc, version: int | None = None) -> str | None:
    """The document's text at `version` (None: the latest); None when it has no such version."""
    row = db.execute_sql("SELECT content FROM document_version WHERE doc_seq = ? AND version = ?",
                         (doc.seq, doc.version if version is None else version)).fetchone()
    return row[0] if row is not None else None


def versions(doc: Doc) -> list[Version]:
    """Every version of the document, oldest first (no text read)."""
    return list(map(Version._make, db.execute_sql(
        f"SELECT {VERSION_COLUMNS} FROM document_version WHERE doc_seq = ? ORDER BY version", (doc.seq,))))


def sizes(chat_id: str) -> list[tuple[Doc, int]]:
    """The chat's documents, oldest first, with their latest version's size in characters."""
    rows = db.execute_sql(
        f"SELECT {', '.join('d.' + c.strip() for c in COLUMNS.split(','))}, v.size FROM document d "
        "JOIN document_version v ON v.doc_seq = d.seq AND v.version = d.version "
        "WHERE d.chat_id = ? ORDER BY d.seq", (chat_id,))
    return [(Doc._make(row[:-1]), row[-1]) for row in rows]


def _insert_version(doc_seq: int, version: int, content: str, author: str, message_id: int | None,
                    turn_id: str | None, when: float) -> None:
    db.execute_sql("INSERT INTO document_version (doc_seq, version, content, size, author, message_id, turn_id, "
                   "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (doc_seq, version, content, len(content), author, message_id, turn_id, when))


def create(chat_id: str, doc_id: str, title: str, language: str, content: str, author: str = "model",
           message_id: int | None = None, turn_id: str | None = None) -> Doc:
    """A new document with its version 1 (in the caller's transaction, if any)."""
    now = time.time()
    with db.atomic():
        cursor = db.execute_sql("INSERT INTO document (id, chat_id, title, language, version, created_at, "
                                "updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)",
                                (doc_id, chat_id, title, language, now, now))
        _insert_version(cursor.lastrowid, 1, content, author, message_id, turn_id, now)
        made = get(doc_id)
    assert made is not None
    return made


def revise(doc_id: str, change: Callable[[str, Doc], str], author: str, message_id: int | None = None,
           turn_id: str | None = None) -> Doc | None:
    """A new version made by `change(latest text, doc)` (which may raise to make none), read and
    written in one transaction; the document as it is then, or None when there is no such document.
    Unchanged when the text would stay the same."""
    with db.atomic():
        doc = get(doc_id)
        if doc is None:
            return None
        old = text(doc)
        assert old is not None  # a document always has its latest version
        new = change(old, doc)
        if new == old:
            raise Unchanged(doc.version)
        now = time.time()
        _insert_version(doc.seq, doc.version + 1, new, author, message_id, turn_id, now)
        db.execute_sql("UPDATE document SET version = ?, updated_at = ? WHERE seq = ?", (doc.version + 1, now, doc.seq))
        return doc._replace(version=doc.version + 1, updated_at=now)


def restore(chat_id: str, doc_id: str, title: str, language: str, created_at: float, updated_at: float,
            versions_: list[tuple[int, str, str, int | None, float]]):
    """An imported document with its versions (number, text, author, message id, time): a generator
    that writes a little between yields, in the caller's transactions (an import's)."""
    cursor = db.execute_sql("INSERT INTO document (id, chat_id, title, language, version, created_at, updated_at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (doc_id, chat_id, title, language, versions_[-1][0], created_at, updated_at))
    seq = cursor.lastrowid
    yield
    for number, content, author, message_id, when in versions_:
        _insert_version(seq, number, content, author, message_id, None, when)
        yield
