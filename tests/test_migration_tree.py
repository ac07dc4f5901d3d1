"""Migration 11: a database of the previous schema becomes a tree without losing or mixing a message."""
from __future__ import annotations

import time

import pytest

from backend.store import history, lines
from backend.store.db import db, open_database
from backend.store.models import Chat, Message


@pytest.fixture
def old_db(database_at):
    return database_at(10)


def _rows(old, chat_id, rows):
    """(role, content, status, deleted_at) in id order, as schema 10 kept them; their ids."""
    old.execute_sql("INSERT INTO chat (id, title, created_at, updated_at) VALUES (?, ?, 0, 0)", (chat_id, chat_id))
    ids = []
    for role, content, status, deleted_at in rows:
        cur = old.execute_sql("INSERT INTO message (chat_id, role, content, status, created_at, deleted_at) "
                              "VALUES (?, ?, ?, ?, 0, ?)", (chat_id, role, content, status, deleted_at))
        ids.append(cur.lastrowid)
    return ids


def _open(path, old):
    old.close()
    open_database(str(path))
    db.connect(reuse_if_open=True)


def _branch(chat_id):
    return [(m.role, m.content) for m in history.branch_of(chat_id)]


def test_a_linear_chat_becomes_one_branch(old_db):
    path, old = old_db
    ids = _rows(old, "c_lin", [("user", "q1", "complete", None), ("assistant", "a1", "complete", None),
                               ("user", "q2", "complete", None), ("assistant", "", "complete", None),
                               ("tool", "out", "complete", None), ("assistant", "a2", "interrupted", None)])
    _open(path, old)
    assert _branch("c_lin") == [("user", "q1"), ("assistant", "a1"), ("user", "q2"), ("assistant", ""),
                                ("tool", "out"), ("assistant", "a2")]
    rows = {m.id: m for m in Message.select()}
    assert [rows[i].parent_id for i in ids] == [None] + ids[:-1]
    assert [rows[i].depth for i in ids] == list(range(6))
    assert [rows[i].active_child_id for i in ids] == ids[1:] + [None]
    assert Chat.get_by_id("c_lin").active_leaf_id == ids[-1]
    assert all(v["count"] == 1 for v in history.versions(history.branch_of("c_lin")).values())


def test_hidden_runs_become_older_versions_and_discarded_queued_messages_stay_hidden(old_db):
    path, old = old_db
    # q1 → a1 was regenerated twice (a1, then a1b hidden, a1c live); then q2 → a2 was edited
    # (the run a2, q3, a3 hidden at 20.0); a queued message was discarded at 30.0.
    ids = _rows(old, "c_ver", [
        ("user", "q1", "complete", None),
        ("assistant", "a1", "complete", 10.0),
        ("assistant", "a1b", "complete", 11.0),
        ("assistant", "a1c", "complete", None),
        ("user", "q2", "complete", None),
        ("assistant", "a2", "complete", 20.0),
        ("user", "q3", "complete", 20.0),
        ("assistant", "a3", "complete", 20.0),
        ("user", "never sent", "queued", 30.0),
        ("assistant", "a2 again", "complete", None),
    ])
    q1, a1, a1b, a1c, q2, a2, q3, a3, dropped, a2b = ids
    _open(path, old)
    assert _branch("c_ver") == [("user", "q1"), ("assistant", "a1c"), ("user", "q2"), ("assistant", "a2 again")]
    rows = {m.id: m for m in Message.select()}
    assert {i: rows[i].parent_id for i in (a1, a1b, a1c)} == {a1: q1, a1b: q1, a1c: q1}
    assert (rows[a2].parent_id, rows[q3].parent_id, rows[a3].parent_id, rows[a2b].parent_id) == (q2, a2, q3, q2)
    assert all(rows[i].deleted_at is None for i in ids if i != dropped)
    assert rows[dropped].deleted_at == 30.0 and rows[dropped].parent_id is None
    # The lines the migration drew are the ones a relink draws from the same links.
    drawn = {m.id: (m.line_id, bool(m.line_exit)) for m in Message.select()}
    lines.relink("c_ver")
    assert {m.id: (m.line_id, bool(m.line_exit)) for m in Message.select()} == drawn
    assert drawn[a1][0] == drawn[q1][0] != drawn[a1c][0]  # a1, the first child, continues q1's line
    shown = history.branch_of("c_ver")
    assert history.versions(shown)[a1c] == {"index": 3, "count": 3, "ids": [a1, a1b, a1c]}
    assert history.versions(shown)[a2b]["ids"] == [a2, a2b]
    # The old version is whole again: switching to it shows it down to its end.
    leaf = history.switch("c_ver", a2)
    assert leaf == a3 and _branch("c_ver")[-3:] == [("assistant", "a2"), ("user", "q3"), ("assistant", "a3")]
    # Under q1's reply the leaf active last is now a3; back to the newer version of q2's reply.
    assert history.switch("c_ver", a1c) == a3
    assert history.switch("c_ver", a2b) == a2b and history.switch("c_ver", q1) == a2b


def test_chats_do_not_mix_and_an_empty_chat_has_no_leaf(old_db):
    path, old = old_db
    a = _rows(old, "c_a", [("user", "a-q", "complete", None)])
    b = _rows(old, "c_b", [("user", "b-q", "complete", None), ("assistant", "b-a", "complete", 5.0)])
    _rows(old, "c_empty", [])
    _open(path, old)
    assert _branch("c_a") == [("user", "a-q")] and _branch("c_b") == [("user", "b-q")]
    assert Message.get_by_id(b[1]).parent_id == b[0] and Message.get_by_id(a[0]).parent_id is None
    assert Chat.get_by_id("c_empty").active_leaf_id is None and _branch("c_empty") == []


def test_a_long_history_upgrades_in_linear_time(old_db):
    """20 000 messages: each message's active child is found by one grouped pass, not by
    scanning every message once per message (which took 38 s here, and a day for a million)."""
    path, old = old_db
    with old.atomic():
        old.execute_sql("INSERT INTO chat (id, title, created_at, updated_at) VALUES ('c_long', 't', 0, 0)")
        old.cursor().executemany("INSERT INTO message (chat_id, role, content, created_at) "
                                 "VALUES ('c_long', ?, 'x', 0)", [("user", "assistant")[i % 2:i % 2 + 1]
                                                                  for i in range(20_000)])
    started = time.monotonic()
    _open(path, old)
    assert time.monotonic() - started < 5
    first = Message.select().order_by(Message.id).first()
    assert first.active_child_id == first.id + 1 and history.active_leaf("c_long") == first.id + 19_999
