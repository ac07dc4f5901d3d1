"""Memories in numi.db (CONTRACT §8): the `memory` table and its full-text index.

`memory_fts` is an FTS5 index over the table's text (external content, kept in step by
triggers). `seq` is the rowid the index points at: an INTEGER PRIMARY KEY, so VACUUM keeps it.
A memory's `source_chat_id` is the chat it was saved in: a chat in the trash keeps its id
(the chat can still be opened from there); a chat purged sets it to null (a trigger), so it
never points at nothing. `tokens` is the text's estimate, kept so choosing memories for a
request adds no estimates. Their embeddings are a table of their own (vector_rows.py).
"""
from __future__ import annotations

import secrets
import time
from typing import NamedTuple

from backend.core import tokens as token_count
from backend.core.text import well_formed
from backend.features.memory import words
from backend.store.db import db

TEXT_MAX = 500
QUERY_MAX = 500
DUPLICATE_CANDIDATES = 20  # the best full-text matches a new memory is compared with


def create_table(database) -> None:
    """The named migration that makes the table, its index and triggers (frozen SQL)."""
    for sql in (
        "CREATE TABLE memory (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, text TEXT NOT NULL, "
        "tokens INTEGER NOT NULL, source_chat_id TEXT, created_at REAL NOT NULL, updated_at REAL NOT NULL)",
        "CREATE INDEX memory_created ON memory (created_at)",
        "CREATE INDEX memory_source ON memory (source_chat_id)",
        "CREATE VIRTUAL TABLE memory_fts USING fts5(text, content='memory', content_rowid='seq', "
        "tokenize='porter unicode61 remove_diacritics 2')",
        "CREATE TRIGGER memory_added AFTER INSERT ON memory BEGIN "
        "INSERT INTO memory_fts (rowid, text) VALUES (new.seq, new.text); END",
        "CREATE TRIGGER memory_removed AFTER DELETE ON memory BEGIN "
        "INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.seq, old.text); END",
        "CREATE TRIGGER memory_changed AFTER UPDATE OF text ON memory BEGIN "
        "INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.seq, old.text); "
        "INSERT INTO memory_fts (rowid, text) VALUES (new.seq, new.text); END",
        "CREATE TRIGGER memory_chat_purged AFTER DELETE ON chat BEGIN "
        "UPDATE memory SET source_chat_id = NULL WHERE source_chat_id = old.id; END",
    ):
        database.execute_sql(sql)


class Memory(NamedTuple):  # a tuple: rows are many and cheap to make
    seq: int
    id: str
    text: str
    tokens: int
    source_chat_id: str | None
    created_at: float
    updated_at: float

    def to_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "source_chat_id": self.source_chat_id,
                "created_at": self.created_at, "updated_at": self.updated_at}


COLUMNS = "seq, id, text, tokens, source_chat_id, created_at, updated_at"
M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in COLUMNS.split(","))


def rows(sql: str, args=()) -> list[Memory]:
    return list(map(Memory._make, db.execute_sql(sql, args)))


def clean(text: str) -> str:
    """A memory's text as kept: well-formed Unicode, without surrounding white space."""
    return well_formed(text).strip()


def listed(q: str | None = None) -> list[Memory]:
    """Every memory, newest first; with `q`, those whose words match it (the last as a prefix:
    a search box) or that hold it as written."""
    if not q or not q.strip():
        return newest_first()
    like = "%" + q.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    match = words.match_prefixes(q)
    if match is None:
        return rows(f"SELECT {COLUMNS} FROM memory WHERE text LIKE ? ESCAPE '\\' "
                     "ORDER BY created_at DESC, seq DESC", (like,))
    return rows(f"SELECT {COLUMNS} FROM memory WHERE seq IN (SELECT rowid FROM memory_fts WHERE memory_fts "
                 "MATCH ?) OR text LIKE ? ESCAPE '\\' ORDER BY created_at DESC, seq DESC", (match, like))


def ranked(match: str, limit: int) -> list[Memory]:
    """The memories matching an FTS5 expression, best first (bm25)."""
    return rows(f"SELECT {M_COLUMNS} FROM memory_fts JOIN memory m ON m.seq = memory_fts.rowid "
                f"WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT ?", (match, limit))


def ranked_sizes(match: str, limit: int) -> list[tuple[int, int]]:
    """(seq, tokens) of the memories matching an FTS5 expression, best first: no text read."""
    return db.execute_sql("SELECT m.seq, m.tokens FROM memory_fts JOIN memory m ON m.seq = memory_fts.rowid "
                          "WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT ?", (match, limit)).fetchall()


def newest_sizes(limit: int) -> list[tuple[int, int]]:
    """(seq, tokens) of the newest memories, newest first."""
    return db.execute_sql("SELECT seq, tokens FROM memory ORDER BY created_at DESC, seq DESC LIMIT ?",
                          (limit,)).fetchall()


def sizes(seqs: list[int]) -> dict[int, int]:
    """seq → tokens of these memories (those that still exist)."""
    if not seqs:
        return {}
    marks = ",".join("?" * len(seqs))
    return dict(db.execute_sql(f"SELECT seq, tokens FROM memory WHERE seq IN ({marks})", seqs).fetchall())


def by_seqs(seqs: list[int]) -> list[Memory]:
    """These memories, oldest first."""
    marks = ",".join("?" * len(seqs))
    return rows(f"SELECT {COLUMNS} FROM memory WHERE seq IN ({marks}) ORDER BY created_at, seq", seqs)


def oldest_first(limit: int = -1) -> list[Memory]:
    return rows(f"SELECT {COLUMNS} FROM memory ORDER BY created_at, seq LIMIT ?", (limit,))


def newest_first(limit: int = -1) -> list[Memory]:
    return rows(f"SELECT {COLUMNS} FROM memory ORDER BY created_at DESC, seq DESC LIMIT ?", (limit,))


def totals(per_memory: int) -> tuple[int, int]:
    """How many memories there are, and their tokens with `per_memory` added for each."""
    count, used = db.execute_sql("SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM memory").fetchone()
    return count, used + count * per_memory


def get(memory_id: str) -> Memory | None:
    found = rows(f"SELECT {COLUMNS} FROM memory WHERE id = ?", (memory_id,))
    return found[0] if found else None


def create(text: str, source_chat_id: str | None) -> Memory:
    """A new memory (inside the caller's transaction, if any)."""
    now = time.time()
    memory_id = "mem_" + secrets.token_hex(8)
    with db.atomic():
        db.execute_sql("INSERT INTO memory (id, text, tokens, source_chat_id, created_at, updated_at) "
                       "VALUES (?, ?, ?, ?, ?, ?)",
                       (memory_id, text, token_count.estimate(text), source_chat_id, now, now))
        created = get(memory_id)
    assert created is not None
    return created


def update(memory_id: str, text: str) -> Memory | None:
    """The memory with its new text, or None when there is no such memory."""
    with db.atomic():
        db.execute_sql("UPDATE memory SET text = ?, tokens = ?, updated_at = ? WHERE id = ?",
                       (text, token_count.estimate(text), time.time(), memory_id))
        return get(memory_id)


def delete(memory_id: str) -> bool:
    with db.atomic():
        return db.execute_sql("DELETE FROM memory WHERE id = ?", (memory_id,)).rowcount > 0


def near_duplicate(text: str) -> Memory | None:
    """The existing memory this text says again (words.near_duplicate), the most alike; else None."""
    match = words.match_any(text)
    if match is None:
        candidates = rows(f"SELECT {COLUMNS} FROM memory WHERE text = ?", (text,))
    else:
        candidates = ranked(match, DUPLICATE_CANDIDATES)
    scored = [(words.similarity(text, m.text), m) for m in candidates]
    best = max(scored, key=lambda s: s[0], default=None)
    return best[1] if best is not None and best[0] >= words.JACCARD else None


def save(text: str, source_chat_id: str) -> tuple[Memory, Memory | None]:
    """What `remember` saves: a new memory, or the near-duplicate updated to this text (it keeps its
    source chat). Returns the memory and, for an update, the memory as it was."""
    with db.atomic():
        old = near_duplicate(text)
        if old is None:
            return create(text, source_chat_id), None
        if old.text == text:
            return old, old
        updated = update(old.id, text)
        assert updated is not None
        return updated, old


def forget_everything() -> int:
    """Delete every memory so that its text is gone from the database file; how many there were.

    Rows are deleted (their vectors too) and the index cleared whole ('delete-all' leaves no old
    segment behind), the file is vacuumed (freed pages rewritten away) and the write-ahead log,
    which still holds the pages as they were written, is checkpointed and truncated. VACUUM cannot run in a transaction:
    this takes the calling thread's connection outside any (a request's, as every route's).
    """
    with db.atomic():
        count = db.execute_sql("SELECT COUNT(*) FROM memory").fetchone()[0]
        db.execute_sql("DELETE FROM memory")
        db.execute_sql("DELETE FROM memory_vector")  # the triggers drop each memory's; none is left either way
        # The trigger's per-row 'delete' only marks entries of the index's segments: clear them whole.
        db.execute_sql("INSERT INTO memory_fts (memory_fts) VALUES ('delete-all')")
    assert not db.in_transaction(), "VACUUM cannot run inside a transaction"
    db.execute_sql("VACUUM")
    _truncate_wal()
    return count


WAL_DEADLINE_S = 5.0


def _truncate_wal() -> None:
    """Copy the log into the file and cut it to nothing; another connection's read in progress
    holds it back, so it is tried again for a while (each try waits out the busy timeout first)."""
    deadline = time.monotonic() + WAL_DEADLINE_S
    while True:
        busy = db.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if not busy or time.monotonic() > deadline:
            return
        time.sleep(0.05)
