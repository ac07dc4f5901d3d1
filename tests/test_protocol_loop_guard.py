"""The loop guard (CONTRACT §7) through the real server and the fake provider's scripted tool
calls: the same call three times in a turn ends it with `loop_detected` and `turn_end` `limit`
before the third runs (the rule's own cases: tests/test_engine_loop_guard.py); Continue goes on,
with the model told not to repeat it."""
from __future__ import annotations

from tests.fakeprovider import script as S


def upper(call_id: str, arguments: str, index: int = 0) -> dict:
    return S.tool_call(index, call_id, "upper", arguments)


def tool_rows(setup, chat) -> dict[str, dict]:
    return {m["tool_call_id"]: m for m in setup.messages(chat) if m["role"] == "tool"}


def test_the_third_same_call_ends_the_turn_before_it_runs_and_continue_goes_on(setup):
    chat = setup.chat(title="t")
    # The same call written three ways: key order, spacing and 1 vs 1.0 do not make it another.
    setup.fake.enqueue([upper("c1", '{"text": "a", "n": 1}')], [upper("c2", '{"n": 1.0, "text": "a"}')],
                       [upper("c3", '{ "text":"a","n":1 }')], [S.text("Done another way.")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go round")
    turn = sock.until("turn_start")["turn_id"]
    error = sock.until("error", turn_id=turn)
    assert error["code"] == "loop_detected" and error["retryable"] is False
    assert "upper" in error["message"] and "3 times" in error["message"] and "Continue" in error["message"]
    assert sock.until("turn_end", turn_id=turn)["status"] == "limit"

    # The third call never ran: no tool_start, a tool_end saying why, and no fourth request.
    assert [e["call_id"] for e in sock.of("tool_start", turn)] == ["c1", "c2"]
    ends = {e["call_id"]: e for e in sock.of("tool_end", turn)}
    assert ends["c1"]["ok"] and ends["c1"]["output"] == "A"
    assert not ends["c3"]["ok"] and ends["c3"]["output"].startswith("Not run: this is the third call of upper")
    assert len(setup.fake.requests) == 3
    rows = tool_rows(setup, chat)
    assert rows["c3"]["tool_error"] and "Do not call it again" in rows["c3"]["content"]
    asked = [m for m in setup.messages(chat) if m["role"] == "assistant"][-1]
    assert asked["error"]["code"] == "loop_detected" and asked["status"] == "complete"

    # Continue: a new step from the history as it stands, where the model reads why it stopped.
    sock.send(type="continue")
    turn = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end", turn_id=turn)["status"] == "completed", sock.of("error", turn)
    sent = setup.fake.requests[-1].body["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "c3"
    assert "Do not call it again with the same arguments" in sent[-1]["content"]
    assert setup.messages(chat)[-1]["content"] == "Done another way."
