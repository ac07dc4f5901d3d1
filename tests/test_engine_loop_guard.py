"""The loop guard (CONTRACT §7) in process (tests/engine.py): calls that differ are no loop, and
three same calls in one step run none of them. The whole rule over the wire, with Continue:
tests/test_protocol_loop_guard.py."""
from __future__ import annotations


def tool_rows(engine, chat) -> dict[str, dict]:
    return {m["tool_call_id"]: m for m in engine.messages(chat) if m["role"] == "tool"}


def test_calls_that_differ_are_not_a_loop(engine):
    chat = engine.chat()
    events = engine.events(chat)
    # Three calls of one tool, none the same as parsed JSON: another value, true is not 1, "1" is not 1.
    for call_id, args in (("c1", {"text": "a", "n": 1}), ("c2", {"text": "a", "n": True}),
                          ("c3", {"text": "a", "n": "1"}), ("c4", {"text": "b", "n": 1})):
        engine.model.calls("upper", args, call_id)
    engine.model.says("finished")
    engine.turns.send(chat, "r1", "vary", [])
    assert events.until("turn_end")["status"] == "completed", events.of("error")
    ends = events.of("tool_end")
    assert all(e["ok"] for e in ends) and len(ends) == 4


def test_three_same_calls_in_one_step_run_none_of_them(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls_each([(f"c{i}", "upper", {"text": "x"}) for i in (1, 2, 3)])
    engine.turns.send(chat, "r1", "all at once", [])
    assert events.until("error")["code"] == "loop_detected"
    assert events.until("turn_end")["status"] == "limit"
    assert events.of("tool_start") == []
    rows = tool_rows(engine, chat)
    assert set(rows) == {"c1", "c2", "c3"} and all(r["tool_error"] for r in rows.values())
    assert rows["c1"]["content"].startswith("Not run: the reply was stopped because upper was called 3 times")
    assert len(engine.model.requests) == 1
