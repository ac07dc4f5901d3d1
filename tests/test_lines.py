"""The tree's line walks agree with plain parent and active-child walks, whatever the edits and switches."""
from __future__ import annotations

import random

import pytest

from backend.store import history, lines
from backend.store.db import db, open_database
from backend.store.models import Chat, Message


@pytest.fixture
def store(tmp_path):
    open_database(str(tmp_path / "numi.db"))
    db.connect(reuse_if_open=True)
    db.execute_sql("PRAGMA synchronous = OFF")  # a test's file: no need to wait for the disk
    yield
    db.close()


def rows() -> dict[int, Message]:
    return {m.id: m for m in Message.select()}


def naive_path(all_rows, leaf):
    out = []
    while leaf is not None:
        out.append(leaf)
        leaf = all_rows[leaf].parent_id
    return out[::-1]


def naive_leaf(all_rows, node):
    while all_rows[node].active_child_id is not None:
        node = all_rows[node].active_child_id
    return node


def check(chat_id: str, rng: random.Random) -> None:
    all_rows = rows()
    leaf = history.active_leaf(chat_id)
    branch = naive_path(all_rows, leaf)
    assert history.path_ids(leaf) == branch
    assert [r.id for r in history.path(leaf, 7)] == branch[-7:]
    assert [r.id for r in history.request_rows(chat_id, newest=5)] == branch[-5:]
    # The active branch is the chain of active children from its root.
    assert naive_leaf(all_rows, branch[0]) == leaf
    for node in rng.sample(list(all_rows), min(8, len(all_rows))):
        assert lines.leaf_under(node) == naive_leaf(all_rows, node)
    # What is kept step by step is what a bulk relink computes.
    before = {m.id: (m.line_id, bool(m.line_exit)) for m in all_rows.values()}
    lines.relink(chat_id)
    assert {m.id: (m.line_id, bool(m.line_exit)) for m in Message.select()} == before


@pytest.mark.parametrize("seed", range(8))
def test_random_edits_regenerates_and_switches(store, seed):
    rng = random.Random(seed)
    Chat.create(id="c", title="t")
    for _ in range(120):
        all_rows = rows()
        roll = rng.random()
        if not all_rows or roll < 0.5:
            history.append_to_branch("c", role=rng.choice(("user", "assistant", "tool")), content="x")
        elif roll < 0.75:
            target = rng.choice(list(all_rows.values()))  # a new version of any message
            history.append("c", target.parent_id, role=target.role, content="v")
        else:
            leaf = history.switch("c", rng.choice(list(all_rows)))
            assert history.active_leaf("c") == leaf
        check("c", rng)


def test_a_long_line_is_read_in_few_queries(store):
    Chat.create(id="c", title="t")
    parent = None
    for i in range(3000):
        parent = history.append("c", parent, role="user" if i % 2 == 0 else "assistant", content=str(i)).id
    mid = history.path_ids(parent)[1500]
    history.append("c", history.by_ids([mid])[mid].parent_id, role="assistant", content="other")
    assert len(lines.chain(parent)) == 1 and len(lines.chain(history.active_leaf("c"))) == 2
    assert history.switch("c", mid) == parent
    assert history.path_ids(parent)[-1] == parent and len(history.path_ids(parent)) == 3000


def test_no_tree_operation_reads_the_whole_message_table(store):
    """Every statement of an append, an edit, a switch and a branch read finds its rows by index.

    A query on parent_id alone once read every message of every chat per append: 80 ms a
    turn in a million-message history.
    """
    Chat.create(id="c", title="t")
    Chat.create(id="other", title="o")
    for chat in ("c", "other"):
        parent = None
        for i in range(40):
            parent = history.append(chat, parent, role="user" if i % 2 == 0 else "assistant", content=str(i)).id
    statements: list[str] = []
    db.connection().set_trace_callback(statements.append)
    try:
        leaf = history.active_leaf("c")
        ids = history.path_ids(leaf)
        history.append("c", ids[10], role="assistant", content="a version")  # an edit's sibling
        history.append_to_branch("c", role="user", content="more")
        history.switch("c", ids[11])
        history.branch_page("c", 5)
        history.request_rows("c", newest=30)
        history.versions(history.path(leaf, 10))
        lines.leaf_under(ids[0])
    finally:
        db.connection().set_trace_callback(None)
    checked = 0
    for sql in statements:
        if not sql.lstrip().upper().startswith(("SELECT", "UPDATE", "INSERT", "WITH", "DELETE")):
            continue
        plan = " | ".join(row[3] for row in db.execute_sql("EXPLAIN QUERY PLAN " + sql).fetchall())
        assert "SCAN message" not in plan.replace("SCAN message_fts", ""), (sql, plan)
        checked += 1
    assert checked > 20
