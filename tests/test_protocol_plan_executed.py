"""An executed plan is not executed twice unless it changed (CONTRACT §7 `execute_plan`,
docs/PROTOCOL.md "Modes and plans"): the user message that executed it says which plan, in
`accepted` and in GET …/messages; a second execute of the unchanged plan is `not_pending`
with a sentence, and once the model changed the plan it can be executed again."""
from __future__ import annotations

from tests.fakeprovider import script as S
from tests.test_protocol_modes import tooled, turn  # noqa: F401 (tooled: a fixture)
from tests.test_protocol_plans import STEPS, plan_call, planned


def test_an_unchanged_plan_is_not_executed_twice_and_a_changed_one_is(tooled):
    setup = tooled
    chat = setup.chat(title="t", workspace=str(setup.workspace), mode="plan")
    plan_id = planned(setup, chat)["plan_id"]
    # The model answers without touching the plan: it stands as it was executed.
    setup.fake.enqueue([S.text("I could not start.")])
    sock = setup.socket(chat)
    sock.send(type="execute_plan", plan_id=plan_id, request_id="exec-1")
    accepted = sock.until("accepted")
    assert accepted["executes_plan"] == {"plan_id": plan_id, "steps": STEPS}
    t = sock.until("turn_start")["turn_id"]
    assert sock.until("turn_end", turn_id=t)["status"] == "completed"
    user = next(m for m in setup.messages(chat) if m["id"] == accepted["message_id"])
    assert user["executes_plan"] == {"plan_id": plan_id, "steps": STEPS}
    assert all("executes_plan" not in m for m in setup.messages(chat) if m["id"] != user["id"])

    requests = len(setup.fake.requests)
    sock.send(type="execute_plan", plan_id=plan_id, request_id="exec-2")
    refused = sock.until("error")
    assert refused["code"] == "not_pending" and "executed already" in refused["message"]
    assert len(setup.fake.requests) == requests  # no second turn
    assert sum(m["role"] == "user" for m in setup.messages(chat)) == 2

    # The model changes the plan (a step done): it can be executed again.
    working = [dict(STEPS[0], status="done"), STEPS[1]]
    setup.fake.enqueue(plan_call("u1", working), [S.text("Step one is done.")])
    t = turn(sock, "r-more", "do the first step")
    sock.until("turn_end", turn_id=t)
    setup.fake.enqueue([S.text("Going on.")])
    sock.send(type="execute_plan", plan_id=plan_id, request_id="exec-3")
    again = sock.until("accepted", request_id="exec-3")
    assert again["executes_plan"] == {"plan_id": plan_id, "steps": working}
