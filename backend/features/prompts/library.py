"""The prompt library's table in numi.db: the person's reusable prompts (CONTRACT §12).

A `/command` names one prompt: the unique index keeps it so even when two requests race.
The placeholders are derived from the content whenever a prompt is read, never stored.
"""
from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from peewee import IntegrityError

from backend.features.prompts.text import variables
from backend.store.db import db


def create_table(database) -> None:
    """The named migration that makes the table (frozen SQL)."""
    database.execute_sql(
        "CREATE TABLE prompt (id TEXT PRIMARY KEY, name TEXT NOT NULL, command TEXT NOT NULL UNIQUE, "
        "content TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL)")


@dataclass(frozen=True)
class Prompt:
    id: str
    name: str
    command: str
    content: str
    created_at: float
    updated_at: float

    @property
    def variables(self) -> list[str]:
        return variables(self.content)


class CommandTaken(Exception):
    """Another prompt has this command."""

    def __init__(self, other: Prompt | None):
        super().__init__("command taken")
        self.other = other


_COLUMNS = "id, name, command, content, created_at, updated_at"


def _row(r) -> Prompt:
    return Prompt(*r)


def _like(q: str) -> str:
    return "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def all_prompts(q: str = "") -> list[Prompt]:
    """Every prompt by name (then command); with `q`, those whose command, name or content holds it."""
    where, args = "", []
    if q:
        where = ("WHERE command LIKE ?1 ESCAPE '\\' OR name LIKE ?1 ESCAPE '\\' "
                 "OR content LIKE ?1 ESCAPE '\\'")
        args = [_like(q)]
    rows = db.execute_sql(f"SELECT {_COLUMNS} FROM prompt {where} ORDER BY name COLLATE NOCASE, command", args)
    return [_row(r) for r in rows]


def get(prompt_id: str) -> Prompt | None:
    r = db.execute_sql(f"SELECT {_COLUMNS} FROM prompt WHERE id = ?", (prompt_id,)).fetchone()
    return _row(r) if r else None


def by_command(command: str) -> Prompt | None:
    r = db.execute_sql(f"SELECT {_COLUMNS} FROM prompt WHERE command = ?", (command,)).fetchone()
    return _row(r) if r else None


def _taken(command: str, prompt_id: str | None) -> None:
    other = by_command(command)
    if other is not None and other.id != prompt_id:
        raise CommandTaken(other)


def create(name: str, command: str, content: str, created_at: float | None = None,
           updated_at: float | None = None) -> Prompt:
    """A new prompt; CommandTaken when its command names another."""
    now = time.time()
    prompt = Prompt("pr_" + secrets.token_hex(8), name, command, content, created_at or now, updated_at or now)
    try:
        with db.atomic():
            _taken(command, None)
            db.execute_sql(f"INSERT INTO prompt ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                           (prompt.id, name, command, content, prompt.created_at, prompt.updated_at))
    except IntegrityError:  # another request took the command between the check and the insert
        raise CommandTaken(by_command(command)) from None
    return prompt


def update(prompt_id: str, **changes) -> Prompt | None:
    """Change `name`, `command` or `content`; the prompt as it is now, or None when it is gone."""
    keys = [k for k in ("name", "command", "content") if k in changes]
    try:
        with db.atomic():
            if "command" in changes:
                _taken(changes["command"], prompt_id)
            if keys:
                sets = ", ".join(f"{k} = ?" for k in keys)
                db.execute_sql(f"UPDATE prompt SET {sets}, updated_at = ? WHERE id = ?",
                               (*(changes[k] for k in keys), time.time(), prompt_id))
            return get(prompt_id)
    except IntegrityError:
        raise CommandTaken(by_command(changes["command"])) from None


def delete(prompt_id: str) -> bool:
    with db.atomic():
        return db.execute_sql("DELETE FROM prompt WHERE id = ?", (prompt_id,)).rowcount > 0


def add_unless_taken(name: str, command: str, content: str, created_at: float, updated_at: float) -> bool:
    """Insert a prompt unless its command is taken (an import): whether it was added."""
    cursor = db.execute_sql(
        f"INSERT INTO prompt ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(command) DO NOTHING",
        ("pr_" + secrets.token_hex(8), name, command, content, created_at, updated_at))
    return cursor.rowcount > 0
