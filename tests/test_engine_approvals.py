"""Approval rules in process (tests/engine.py): allow always, a denial's reason, edited arguments,
and Stop while a call waits. The same rules over the wire: tests/test_protocol_approvals.py and
tests/test_protocol_turns.py."""
from __future__ import annotations

import json

import pytest

from backend.turns.registry import CommandError


def test_allow_always_is_remembered_for_the_chat(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("guarded", {"text": "x"}, "c1")
    engine.model.says("ok")
    engine.model.calls("guarded", {"text": "y"}, "c2")
    engine.model.says("ok")
    engine.turns.send(chat, "r1", "one", [])
    ask = events.until("approval_required")
    engine.turns.approve(chat, ask["approval_id"], "allow_always")
    events.until("turn_end")
    engine.turns.send(chat, "r2", "two", [])
    assert events.until("turn_end")["status"] == "completed"
    assert len(events.of("approval_required")) == 1
    assert [e["ok"] for e in events.of("tool_end")] == [True, True]


def test_deny_with_reason_reaches_the_model(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("guarded", {}, "c1")
    engine.model.says("understood")
    engine.turns.send(chat, "r1", "one", [])
    ask = events.until("approval_required")
    engine.turns.approve(chat, ask["approval_id"], "deny", "too risky")
    assert events.until("turn_end")["status"] == "completed"
    tool_msg = engine.model.requests[1].messages[-1]
    assert tool_msg.role == "tool" and "too risky" in tool_msg.content


def test_edited_arguments_are_what_runs_and_the_model_is_told(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("guarded", {"text": "as asked"}, "c1")
    engine.model.says("ok")
    engine.turns.send(chat, "r1", "go", [])
    ask = events.until("approval_required")
    # The socket hands the edited arguments on as JSON text (backend/protocol.py).
    engine.turns.approve(chat, ask["approval_id"], "allow", arguments=json.dumps({"text": "as edited"}))
    start = events.until("tool_start")
    assert json.loads(start["arguments"]) == {"text": "as edited"}
    end = events.until("tool_end")
    assert json.loads(end["output"].splitlines()[-1]) == {"echo": "as edited"}
    events.until("turn_end")
    result = engine.model.requests[1].messages[-1]
    assert result.role == "tool" and "edited the arguments" in result.content and "as edited" in result.content


def test_stop_while_waiting_for_approval_cancels_the_turn(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("guarded", {"text": "x"}, "c1")
    engine.turns.send(chat, "r1", "q", [])
    ask = events.until("approval_required")
    engine.turns.stop(chat)
    assert events.until("turn_end")["status"] == "cancelled"
    with pytest.raises(CommandError) as gone:
        engine.turns.approve(chat, ask["approval_id"], "allow")
    assert gone.value.code == "not_found"
    msgs = engine.messages(chat)
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[2]["tool_call_id"] == "c1"
    assert len(engine.model.requests) == 1
