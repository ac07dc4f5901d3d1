"""Knowledge bases as the person defined them (name, folders and files, uploaded files), in numi.db.

What was read from them is derived and lives in the index file (index_db.py); the definitions
are the person's and go where their chats go, into backups.
"""
from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass

from backend.store.db import db


def create_table(database) -> None:
    """The named migration that makes the table (frozen SQL)."""
    database.execute_sql(
        "CREATE TABLE knowledge_base (id TEXT PRIMARY KEY, name TEXT NOT NULL, paths TEXT NOT NULL, "
        "file_ids TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL)")


@dataclass(frozen=True)
class Base:
    id: str
    name: str
    paths: list[str]
    file_ids: list[str]
    created_at: float
    updated_at: float


def _row(r) -> Base:
    return Base(r[0], r[1], json.loads(r[2]), json.loads(r[3]), r[4], r[5])


_COLUMNS = "id, name, paths, file_ids, created_at, updated_at"


def all_bases() -> list[Base]:
    return [_row(r) for r in db.execute_sql(f"SELECT {_COLUMNS} FROM knowledge_base ORDER BY created_at, id")]


def get(base_id: str) -> Base | None:
    r = db.execute_sql(f"SELECT {_COLUMNS} FROM knowledge_base WHERE id = ?", (base_id,)).fetchone()
    return _row(r) if r else None


def create(name: str, paths: list[str], file_ids: list[str]) -> Base:
    now = time.time()
    base = Base("kb_" + secrets.token_hex(8), name, paths, file_ids, now, now)
    with db.atomic():
        db.execute_sql(f"INSERT INTO knowledge_base ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                       (base.id, name, json.dumps(paths), json.dumps(file_ids), now, now))
    return base


def update(base_id: str, **changes) -> Base | None:
    """Change `name`, `paths` or `file_ids`; the base as it is now, or None when it is gone."""
    sets, args = [], []
    for key in ("name", "paths", "file_ids"):
        if key in changes:
            sets.append(f"{key} = ?")
            args.append(changes[key] if key == "name" else json.dumps(changes[key]))
    with db.atomic():
        if sets:
            db.execute_sql(f"UPDATE knowledge_base SET {', '.join(sets)}, updated_at = ? WHERE id = ?",
                           (*args, time.time(), base_id))
        return get(base_id)


def delete(base_id: str) -> bool:
    with db.atomic():
        return db.execute_sql("DELETE FROM knowledge_base WHERE id = ?", (base_id,)).rowcount > 0
