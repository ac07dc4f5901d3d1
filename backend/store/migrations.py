"""Schema migrations: an ordered list of plain functions, tracked by PRAGMA user_version.

Each migration is frozen SQL, never derived from today's models, so a database
made by any release upgrades the same way. Append; never edit a released one.
"""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def _v1_initial(db):
    for sql in (
        """CREATE TABLE folder (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, parent_id TEXT REFERENCES folder(id) ON DELETE SET NULL,
            model_id TEXT, system_prompt TEXT, params_json TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL)""",
        """CREATE TABLE chat (
            id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', model_id TEXT,
            folder_id TEXT REFERENCES folder(id) ON DELETE SET NULL,
            system_prompt TEXT NOT NULL DEFAULT '', params_json TEXT NOT NULL DEFAULT '{}',
            pinned INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
            temporary INTEGER NOT NULL DEFAULT 0, unread INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL, updated_at REAL NOT NULL, deleted_at REAL)""",
        "CREATE INDEX chat_updated ON chat(deleted_at, updated_at)",
        """CREATE TABLE message (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            chat_id TEXT NOT NULL REFERENCES chat(id) ON DELETE CASCADE,
            role TEXT NOT NULL, content TEXT NOT NULL DEFAULT '',
            content_parts_json TEXT, reasoning_content TEXT NOT NULL DEFAULT '',
            reasoning_details_json TEXT, tool_calls_json TEXT, tool_call_id TEXT,
            citation_sources_json TEXT, created_at REAL NOT NULL, deleted_at REAL)""",
        "CREATE INDEX message_chat ON message(chat_id, id)",
        """CREATE TABLE file (
            id TEXT PRIMARY KEY, sha256 TEXT NOT NULL, name TEXT NOT NULL, mime TEXT NOT NULL,
            size INTEGER NOT NULL, created_at REAL NOT NULL)""",
        """CREATE TABLE provider (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, base_url TEXT,
            enabled INTEGER NOT NULL DEFAULT 1, created_at REAL NOT NULL)""",
        """CREATE TABLE model (
            id TEXT PRIMARY KEY, provider_id TEXT NOT NULL REFERENCES provider(id) ON DELETE CASCADE,
            wire_api TEXT NOT NULL, api_model TEXT NOT NULL, label TEXT NOT NULL,
            context_window INTEGER, max_output_tokens INTEGER,
            supports_tools INTEGER NOT NULL DEFAULT 0, supports_vision INTEGER NOT NULL DEFAULT 0,
            supports_reasoning INTEGER NOT NULL DEFAULT 0, fallbacks_json TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL)""",
        "CREATE TABLE setting (key TEXT PRIMARY KEY, value_json TEXT NOT NULL)",
    ):
        db.execute_sql(sql)


def _v2_turn_state(db):
    """Messages learn their turn state; providers their timeout."""
    for sql in (
        "ALTER TABLE message ADD COLUMN status TEXT NOT NULL DEFAULT 'complete'",
        "ALTER TABLE message ADD COLUMN model_id TEXT",
        "ALTER TABLE message ADD COLUMN usage_json TEXT",
        "ALTER TABLE message ADD COLUMN error TEXT",
        "ALTER TABLE message ADD COLUMN request_id TEXT",
        "ALTER TABLE message ADD COLUMN tool_error INTEGER NOT NULL DEFAULT 0",
        "CREATE UNIQUE INDEX message_request ON message(chat_id, request_id) WHERE request_id IS NOT NULL",
        "CREATE INDEX message_status ON message(status) WHERE status IN ('streaming', 'queued')",
        "ALTER TABLE provider ADD COLUMN timeout REAL NOT NULL DEFAULT 60",
    ):
        db.execute_sql(sql)


def _v3_model_prices(db):
    """Models learn their price per million tokens (null: not known)."""
    for sql in (
        "ALTER TABLE model ADD COLUMN price_input REAL",
        "ALTER TABLE model ADD COLUMN price_output REAL",
    ):
        db.execute_sql(sql)


MIGRATIONS = [_v1_initial, _v2_turn_state, _v3_model_prices]


def schema_version(db) -> int:
    return db.execute_sql("PRAGMA user_version").fetchone()[0]


def migrate(db, target: int | None = None) -> int:
    """Apply every migration past the database's version, each in its own transaction."""
    target = len(MIGRATIONS) if target is None else target
    version = schema_version(db)
    if version > len(MIGRATIONS):
        raise RuntimeError(
            f"This database was written by a newer Numi (schema {version}, this build knows "
            f"{len(MIGRATIONS)}). Update Numi, or start it with another --data-dir.")
    for number in range(version + 1, target + 1):
        with db.atomic():
            MIGRATIONS[number - 1](db)
            db.execute_sql(f"PRAGMA user_version = {number}")
        log.info("database migrated to schema %d", number)
    return schema_version(db)
