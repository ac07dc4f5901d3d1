"""Plans (CONTRACT §7) through the real server and the fake provider's scripted tool calls:
execute_plan → edit mode and a turn that reads the plan as the model's own proposal. update_plan's
events, its refusals and its offer while a plan runs: tests/test_engine_plans.py."""
from __future__ import annotations

import json

from backend.features.plans import EXECUTE_TEXT, QUOTE_HEAD
from backend.turns.modes import EXECUTING_NOTE
from tests.fakeprovider import script as S
from tests.numi_client import AppSocket
from tests.test_protocol_modes import offered, tooled, turn  # noqa: F401 (tooled: a fixture)

STEPS = [{"text": "Read notes.txt", "status": "pending"},
         {"text": "Add a heading to notes.txt", "status": "pending"}]


def plan_call(call_id: str, steps: list[dict]) -> list[dict]:
    return [S.text("Here is my plan."), S.tool_call(0, call_id, "update_plan", json.dumps({"steps": steps}))]


def planned(setup, chat) -> dict:
    """A chat in plan mode with one plan proposed (2 pending steps); its plan event."""
    setup.fake.enqueue(plan_call("p1", STEPS), [S.text("Shall I go ahead?")])
    sock = setup.socket(chat)
    t = turn(sock, "r-plan", "plan it")
    event = sock.until("plan", turn_id=t)
    sock.until("turn_end", turn_id=t)
    sock.close()
    return event


def test_execute_plan_switches_to_edit_and_quotes_the_plan_as_the_models_own(tooled):
    setup = tooled
    chat = setup.chat(title="t", workspace=str(setup.workspace), mode="plan")
    plan_id = planned(setup, chat)["plan_id"]
    app = AppSocket(setup.server)
    working = [{"text": STEPS[0]["text"], "status": "done"}, {"text": STEPS[1]["text"], "status": "active"}]
    setup.fake.enqueue(plan_call("x1", working),
                       [S.tool_call(0, "w1", "edit_file", json.dumps({"path": "notes.txt", "old_text": "inside",
                                                                        "new_text": "# Notes\ninside"}))],
                       plan_call("x2", [dict(s, status="done") for s in STEPS]), [S.text("All done.")])
    sock = setup.socket(chat)
    sock.send(type="execute_plan", plan_id=plan_id, request_id="exec-1")
    accepted = sock.until("accepted")
    assert accepted["request_id"] == "exec-1" and accepted["queued"] is False
    started = sock.until("turn_start")
    t = started["turn_id"]
    assert started["user_message_id"] == accepted["message_id"]
    assert app.chat(chat, mode="edit")["mode"] == "edit"
    updates = [sock.until("plan", turn_id=t), sock.until("plan", turn_id=t)]
    assert sock.until("turn_end", turn_id=t)["status"] == "completed"
    # Edit mode: the file change ran without asking, and the plan kept its id while it ran.
    assert not sock.of("approval_required") and (setup.workspace / "notes.txt").read_text() == "# Notes\ninside\n"
    assert [u["plan_id"] for u in updates] == [plan_id, plan_id]
    assert setup.api.get(f"/api/chats/{chat}").body["mode"] == "edit"

    first = setup.fake.requests[2]
    sent = first.body["messages"]
    # The person's message says to go ahead; the plan comes before it, in the model's own words.
    assert sent[-1] == {"role": "user", "content": EXECUTE_TEXT}
    quote = sent[-2]
    assert quote["role"] == "assistant" and quote["content"].startswith(QUOTE_HEAD)
    assert all(s["text"] in quote["content"] for s in STEPS)
    assert not any(s["text"] in m.get("content", "") for m in sent if m["role"] == "user" for s in STEPS)
    assert "update_plan" in offered(first) and "write_file" in offered(first)
    assert EXECUTING_NOTE in sent[0]["content"]
    # Saved as the person's message: the words they sent, nothing of the plan.
    user = [m for m in setup.messages(chat) if m["role"] == "user"][-1]
    assert user["id"] == accepted["message_id"] and user["content"] == EXECUTE_TEXT

    # Every step done: the next turn is offered no update_plan, nor told about a running plan.
    setup.fake.enqueue([S.text("hi")])
    sock.until("turn_end", turn_id=turn(sock, "r-after"))
    after = setup.fake.requests[-1]
    assert "update_plan" not in offered(after) and EXECUTING_NOTE not in after.body["messages"][0]["content"]
    # A reload shows the plan where each update left it.
    shown = [m["plan"]["steps"] for m in setup.messages(chat) if m["plan"]]
    assert shown[-1] == [dict(s, status="done") for s in STEPS] and len(shown) == 3


def test_execute_plan_refuses_an_unknown_or_finished_plan_and_waits_for_a_running_reply(tooled):
    setup = tooled
    chat = setup.chat(title="t", mode="plan")
    plan_id = planned(setup, chat)["plan_id"]
    sock = setup.socket(chat)
    sock.send(type="execute_plan", plan_id="p_nope")
    assert sock.until("error")["code"] == "not_pending"
    for frame in ({"type": "execute_plan"}, {"type": "execute_plan", "plan_id": 7}):
        sock.send(**frame)
        assert sock.until("error")["code"] == "bad_request"
    # While a reply runs (one waiting for an approval) it is busy; an unknown id still is not_pending.
    assert setup.api.patch(f"/api/chats/{chat}", {"mode": "ask"}).status == 200
    setup.fake.enqueue([S.tool_call(0, "g1", "guarded", '{"text": "x"}')], [S.text("ok")])
    t = turn(sock, "r1")
    ask = sock.until("approval_required", turn_id=t)
    sock.send(type="execute_plan", plan_id=plan_id)
    assert sock.until("error")["code"] == "busy"
    sock.send(type="execute_plan", plan_id="p_nope")
    assert sock.until("error")["code"] == "not_pending"
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=t)
    assert setup.api.get(f"/api/chats/{chat}").body["mode"] == "ask"  # nothing was executed
    # A plan whose every step is done has nothing left to execute.
    assert setup.api.patch(f"/api/chats/{chat}", {"mode": "plan"}).status == 200
    setup.fake.enqueue(plan_call("d1", [dict(s, status="done") for s in STEPS]), [S.text("done")])
    t = turn(sock, "r2")
    done = sock.until("plan", turn_id=t)
    sock.until("turn_end", turn_id=t)
    assert done["plan_id"] == plan_id
    sock.send(type="execute_plan", plan_id=plan_id)
    assert sock.until("error")["code"] == "not_pending"
    # The next plan after a finished one is a new plan.
    setup.fake.enqueue(plan_call("n1", STEPS), [S.text("new")])
    t = turn(sock, "r3")
    assert sock.until("plan", turn_id=t)["plan_id"] != plan_id
    sock.until("turn_end", turn_id=t)
