"""The database: migrations, pragmas, concurrent writers, and a database someone else holds locked."""
from __future__ import annotations

import sqlite3
import threading

import peewee
import pytest

from backend.store.db import db, open_database
from backend.store.migrations import MIGRATIONS, migrate, schema_version
from backend.store.models import Chat, Message, ModelEntry, Provider, Setting


@pytest.fixture
def db_path(tmp_path):
    yield tmp_path / "numi.db"
    if not db.is_closed():
        db.close()


def _schema_1_database(path) -> None:
    """A database as release 1 left it, holding a chat with two messages and a catalog."""
    old = peewee.SqliteDatabase(str(path))
    old.connect()
    assert migrate(old, target=1) == 1
    for statement in (
        "INSERT INTO provider (id, kind, name, base_url, enabled, created_at) "
        "VALUES ('p_1', 'openai_compatible', 'Local', 'http://127.0.0.1:11434/v1', 1, 1.0)",
        "INSERT INTO model (id, provider_id, wire_api, api_model, label, created_at) "
        "VALUES ('m_1', 'p_1', 'chat_completions', 'llama3', 'Llama 3', 1.0)",
        "INSERT INTO setting (key, value_json) VALUES ('default_model_id', '\"m_1\"')",
        "INSERT INTO chat (id, title, model_id, created_at, updated_at) VALUES ('c_1', 'Old chat', 'm_1', 1.0, 2.0)",
        "INSERT INTO message (chat_id, role, content, created_at) VALUES ('c_1', 'user', 'Hello there', 1.5)",
        "INSERT INTO message (chat_id, role, content, reasoning_content, created_at) "
        "VALUES ('c_1', 'assistant', 'General Kenobi', 'a greeting', 1.6)",
    ):
        old.execute_sql(statement)
    old.close()


def test_schema_1_database_is_upgraded_with_data_intact(db_path):
    _schema_1_database(db_path)
    open_database(str(db_path))
    with db.connection_context():
        assert schema_version(db) == len(MIGRATIONS) > 1
        chat = Chat.get_by_id("c_1")
        assert (chat.title, chat.model_id, chat.updated_at) == ("Old chat", "m_1", 2.0)
        messages = list(Message.select().where(Message.chat == "c_1").order_by(Message.id))
        assert [(m.role, m.content, m.status) for m in messages] == \
            [("user", "Hello there", "complete"), ("assistant", "General Kenobi", "complete")]
        assert messages[1].reasoning_content == "a greeting"
        assert Provider.get_by_id("p_1").timeout == 60
        assert ModelEntry.get_by_id("m_1").label == "Llama 3"
        assert Setting.get_by_id("default_model_id").value == "m_1"


def test_upgraded_database_serves_its_old_data(tmp_path, start_server):
    data_dir = tmp_path / "old"
    data_dir.mkdir()
    _schema_1_database(data_dir / "numi.db")
    api = start_server(data_dir=data_dir).api()
    chat = api.get("/api/chats/c_1").body
    assert chat["title"] == "Old chat"
    items = api.get("/api/chats/c_1/messages").body["items"]
    assert [(m["role"], m["content"], m["status"]) for m in items] == \
        [("user", "Hello there", "complete"), ("assistant", "General Kenobi", "complete")]
    assert api.get("/api/settings").body["default_model_id"] == "m_1"


def test_reopening_a_current_database_changes_nothing(db_path):
    open_database(str(db_path))
    with db.connection_context():
        Chat.create(id="c_1", title="kept")
    db.close()
    open_database(str(db_path))
    with db.connection_context():
        assert schema_version(db) == len(MIGRATIONS)
        assert Chat.get_by_id("c_1").title == "kept"


def test_database_from_a_newer_numi_is_refused(db_path):
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE future (x)")
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(RuntimeError, match=r"newer Numi.*Update Numi, or start it with another --data-dir"):
        open_database(str(db_path))
    conn = sqlite3.connect(db_path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    conn.close()
    assert tables == {"future"} and version == len(MIGRATIONS) + 5  # left exactly as it was


def _pragmas() -> dict:
    return {name: db.execute_sql(f"PRAGMA {name}").fetchone()[0]
            for name in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")}


def test_wal_and_synchronous_full_on_every_connection(db_path):
    open_database(str(db_path), busy_timeout_ms=1234)
    expected = {"journal_mode": "wal", "synchronous": 2, "busy_timeout": 1234, "foreign_keys": 1}
    with db.connection_context():
        assert _pragmas() == expected
    seen = {}

    def other_thread():
        with db.connection_context():  # peewee opens one connection per thread
            seen.update(_pragmas())

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert seen == expected


def test_two_threads_writing_at_once_never_fail(db_path):
    open_database(str(db_path))
    rounds, start, errors = 60, threading.Barrier(2), []

    def writer(name: str):
        try:
            with db.connection_context():
                start.wait()
                for i in range(rounds):
                    # Read, then write, in one transaction: with a deferred BEGIN two such
                    # transactions in WAL mode fail with SQLITE_BUSY instead of queueing.
                    with db.atomic():
                        row = Setting.get_or_none(Setting.key == "counter")
                        count = row.value if row else 0
                        Setting.insert(key="counter", value=count + 1).on_conflict_replace().execute()
                        chat = Chat.create(title=f"{name}-{i}")
                        Message.create(chat=chat, role="user", content="x")
        except Exception as exc:  # collected: an exception in a thread would not fail the test
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with db.connection_context():
        assert Setting.get_by_id("counter").value == 2 * rounds
        assert Chat.select().count() == Message.select().count() == 2 * rounds


def test_locked_database_is_a_503_then_recovers(start_server):
    server = start_server(env={"NUMI_DB_BUSY_TIMEOUT_MS": "200"})
    api = server.api()
    saved = api.post("/api/chats", {"title": "saved before the lock"}).body
    holder = sqlite3.connect(server.data_dir / "numi.db", isolation_level=None, timeout=5)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        for r in (api.post("/api/chats", {"title": "while locked"}),
                  api.patch(f"/api/chats/{saved['id']}", {"title": "renamed while locked"})):
            assert r.status == 503, r
            err = r.body["error"]
            assert err["code"] == "db_busy"
            assert "busy" in err["message"] and "try again" in err["message"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    created = api.post("/api/chats", {"title": "after the lock"})
    assert created.status == 201
    titles = [c["title"] for c in api.get("/api/chats").body["items"]]
    assert titles == ["after the lock", "saved before the lock"]
