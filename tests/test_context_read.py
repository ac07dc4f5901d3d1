"""A request reads only the newest rows of a long chat, and chooses what it would from the whole history."""
from __future__ import annotations

import json
import random

import pytest

from backend.core.history import fit
from backend.store import history
from backend.store.db import db
from backend.store.models import Chat
from backend.turns import context
from backend.turns.context import HISTORY_READ, history_rows, left_out, newest_turns, with_attachments

BUDGET = 10_000_000  # tokens: a window that holds every message of these chats


def _write(chat_id: str, turns: list[list[tuple]]) -> None:
    Chat.create(id=chat_id, title="t")
    rows = []
    for turn in turns:
        rows.extend((chat_id, role, content, calls, call_id, status) for role, content, calls, call_id, status in turn)
    db.execute_sql("BEGIN")
    for row in rows:
        db.execute_sql("INSERT INTO message (chat_id, role, content, tool_calls_json, tool_call_id, status, created_at)"
                       " VALUES (?, ?, ?, ?, ?, ?, 0)", row)
    db.execute_sql("COMMIT")
    history.link_in_order(chat_id)


def _agentic_turns(rng: random.Random, n: int) -> list[list[tuple]]:
    """Turns of every shape: plain, failed (empty) replies, and tool loops of up to 60 calls."""
    turns = []
    for i in range(n):
        turn = [("user", f"q{i}", None, None, "complete")]
        for step in range(rng.choice((0, 0, 1, 3, 60))):
            call = f"c{i}_{step}"
            turn.append(("assistant", "", json.dumps([{"id": call, "name": "t", "arguments": "{}"}]), None, "complete"))
            turn.append(("tool", f"r{i}_{step}", None, call, "complete"))
        if rng.random() < 0.2:
            turn.append(("assistant", "", None, None, "error"))  # a failed reply: skipped
        turn.append(("assistant", f"a{i}", None, None, "complete"))
        turns.append(turn)
    return turns


def _whole_history_window(chat_id: str, budget: int = BUDGET):
    rows = [r for r in history_rows(chat_id) if context.usable(r)]
    return fit(with_attachments(rows, None, None), budget)


@pytest.mark.parametrize("budget", [BUDGET, 3_000])
@pytest.mark.parametrize("seed", range(12))
def test_the_newest_rows_give_the_window_the_whole_history_gives(store, seed, budget):
    rng = random.Random(seed)
    chat_id = f"c_{seed}"
    _write(chat_id, _agentic_turns(rng, rng.randint(20, 400)))
    rows, length = newest_turns(chat_id, budget=budget)
    assert length == len(history_rows(chat_id))
    window = fit(with_attachments(rows, None, None), budget)
    whole = _whole_history_window(chat_id, budget)
    assert window.messages == whole.messages
    assert window.messages[0].role == "user"
    # What is left out is every message above the window's first on the branch.
    branch = history_rows(chat_id)
    first_sent = next(r for r in branch if r.role == "user" and r.content == window.messages[0].content)
    assert left_out(rows, window) == branch.index(first_sent) == first_sent.depth


def test_a_long_chat_is_read_from_its_newest_rows_only(store):
    chat_id = "c_long"
    _write(chat_id, [[("user", f"q{i}", None, None, "complete"), ("assistant", f"a{i}", None, None, "complete")]
                     for i in range(2000)])
    rows, _ = newest_turns(chat_id, budget=1_000)  # a full window: far fewer tokens than the chat
    assert len(rows) <= HISTORY_READ and rows[0].content.startswith("q")
    assert rows[0].depth == 4000 - len(rows)


def test_a_long_chat_that_fits_is_read_whole(store):
    chat_id = "c_fits"
    _write(chat_id, [[("user", f"q{i}", None, None, "complete"), ("assistant", f"a{i}", None, None, "complete")]
                     for i in range(300)])
    rows, _ = newest_turns(chat_id, budget=BUDGET)
    assert len(rows) == 600 and fit(with_attachments(rows, None, None), BUDGET).omitted == 0


