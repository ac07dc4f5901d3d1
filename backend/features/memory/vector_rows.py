"""Memories' embeddings in numi.db: the `memory_vector` table, one row a memory.

A row is the memory's vector by `model` (float32 BLOB, length 1; empty when the endpoint refused
the text: it matches nothing). Triggers drop it when its memory is deleted or its text changes,
and a vector is written only while its memory still says the text it was made from, so a row is
always the memory's text as it is. A memory lacks a vector by a model when it has none, or one by
another model (replaced when embedded again).
"""
from __future__ import annotations

from backend.store.db import db


def create_table(database) -> None:
    """The named migration that makes the table, its index and triggers (frozen SQL)."""
    for sql in (
        "CREATE TABLE memory_vector (seq INTEGER PRIMARY KEY, model TEXT NOT NULL, vector BLOB NOT NULL)",
        "CREATE INDEX memory_vector_model ON memory_vector (model)",
        "CREATE TRIGGER memory_vector_removed AFTER DELETE ON memory BEGIN "
        "DELETE FROM memory_vector WHERE seq = old.seq; END",
        "CREATE TRIGGER memory_vector_changed AFTER UPDATE OF text ON memory WHEN new.text IS NOT old.text BEGIN "
        "DELETE FROM memory_vector WHERE seq = old.seq; END",
    ):
        database.execute_sql(sql)


def unembedded(model: str, limit: int) -> list[tuple[int, str]]:
    """(seq, text) of memories without a vector by `model`, oldest first."""
    return db.execute_sql("SELECT m.seq, m.text FROM memory m LEFT JOIN memory_vector v "
                          "ON v.seq = m.seq AND v.model = ? WHERE v.seq IS NULL ORDER BY m.seq LIMIT ?",
                          (model, limit)).fetchall()


def put(model: str, rows: list[tuple[int, str, bytes]]) -> int:
    """Save (seq, text, vector) rows, each only while its memory still says `text`; how many were saved."""
    saved = 0
    with db.atomic():
        for seq, text, blob in rows:
            saved += db.execute_sql("INSERT OR REPLACE INTO memory_vector (seq, model, vector) "
                                    "SELECT seq, ?, ? FROM memory WHERE seq = ? AND text = ?",
                                    (model, blob, seq, text)).rowcount
    return saved


def count(model: str) -> int:
    """How many memories have a vector by `model`."""
    return db.execute_sql("SELECT COUNT(*) FROM memory_vector WHERE model = ?", (model,)).fetchone()[0]


def seqs(model: str) -> list[int]:
    return [r[0] for r in db.execute_sql("SELECT seq FROM memory_vector WHERE model = ?", (model,))]


def vectors(model: str) -> list[tuple[int, bytes]]:
    """(seq, vector BLOB) of every memory embedded by `model`."""
    return db.execute_sql("SELECT seq, vector FROM memory_vector WHERE model = ?", (model,)).fetchall()
