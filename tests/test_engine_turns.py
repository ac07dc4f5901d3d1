"""Turn rules in process (tests/engine.py): a repeated send, Stop, a busy edit, a failed title and
a long chat's trimmed request. The same rules over the wire: tests/test_protocol_turns.py."""
from __future__ import annotations

import time

import pytest

from backend.core.errors import ProviderError
from backend.features import compaction
from backend.store import settings
from backend.store.db import db
from backend.store.history import link_in_order_sql
from backend.store.models import ModelEntry
from backend.turns.registry import CommandError
from tests.engine import Engine, Gate, plugin_tools


def test_stop_keeps_partial_text_as_cancelled(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.says("partial ", gate)
    engine.turns.send(chat, "r1", "go", [])
    gate.wait_reached()
    engine.turns.stop(chat)
    assert events.until("turn_end")["status"] == "cancelled"
    assert events.of("error")[-1]["code"] == "cancelled"
    last = engine.messages(chat)[-1]
    assert (last["role"], last["status"], last["content"]) == ("assistant", "cancelled", "partial ")


def test_edit_while_running_is_busy(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.says(gate)
    user_id = engine.turns.send(chat, "r1", "q", [])["message_id"]
    gate.wait_reached()
    with pytest.raises(CommandError) as busy:
        engine.turns.edit(chat, user_id, "x")
    assert busy.value.code == "busy"
    engine.turns.stop(chat)
    events.until("turn_end")


def test_a_failed_title_never_fails_the_turn(engine):
    chat = engine.chat(title="")
    events = engine.events(chat)
    engine.model.says("the answer")
    engine.model.fails(ProviderError("Bad request from the provider.", status=400))
    engine.turns.send(chat, "r1", "q", [])
    assert events.until("turn_end")["status"] == "completed"
    engine.wait_for_titles()
    assert len(engine.model.requests) == 2  # the answer, then the title
    assert not events.of("title_update")
    assert engine.messages(chat)[-1]["status"] == "complete"


def test_a_long_chat_sends_its_newest_turns_and_says_how_many_were_left_out(tmp_path):
    engine = Engine(tmp_path, tools=plugin_tools(), supports_tools=False)
    try:
        chat = engine.chat(title="long")
        # 300 turns written straight into the database, plus a run of failed replies
        # that carry nothing (the request skips them): 900 rows in all.
        rows, t = [], time.time() - 10_000
        for i in range(300):
            rows += [(chat, "user", f"q{i}", "complete", t + 3 * i), (chat, "assistant", f"a{i}", "complete", t + 3 * i + 1),
                     (chat, "assistant", "", "error", t + 3 * i + 2)]
        with db.atomic():
            for row in rows:
                db.execute_sql("INSERT INTO message (chat_id, role, content, status, created_at) VALUES (?, ?, ?, ?, ?)", row)
            for statement, args in link_in_order_sql(chat):
                db.execute_sql(statement, args)
        # Tokens are the budget (no message cap): a window too small for the whole chat leaves
        # the oldest turns out when compaction is off, and the turn says so.
        ModelEntry.update(context_window=2000).where(ModelEntry.id == engine.model_id).execute()
        settings.put(compaction.SETTING, {"auto": False})
        events = engine.events(chat)
        engine.model.says("ok")
        engine.turns.send(chat, "r1", "newest", [])
        trimmed = events.until("context_trimmed")
        assert events.until("turn_end")["status"] == "completed"
        # tokens_before counts the whole branch (600 usable messages), not only the rows read.
        assert trimmed["tokens_before"] > 2.5 * trimmed["tokens_after"], trimmed
        request = engine.model.requests[0]
        sent = [(m.role, m.content) for m in request.messages if m.role != "system"]
        # Whole turns, the newest last: the first message sent is a question, q<first>.
        assert sent[-1] == ("user", "newest")
        assert [c for _, c in sent[-3:-1]] == ["q299", "a299"]
        first = int(sent[0][1][1:])
        assert sent[0][0] == "user" and 0 < first < 290
        assert len(sent) == 2 * (300 - first) + 1
        # Everything above q<first> is left out: `first` turns of 3 rows (the failed empty
        # replies are counted too: they are messages of the branch the model does not see).
        assert trimmed["messages_omitted"] == 3 * first
        system = [request.system] + [m.content for m in request.messages if m.role == "system"]
        assert any(f"the {3 * first} oldest messages" in s for s in system), system
    finally:
        engine.close()
