"""Plans (CONTRACT §7) in process (tests/engine.py): update_plan's events and saved plan, steps
that are no plan, and update_plan offered while a plan runs. Executing a plan, over the wire:
tests/test_protocol_plans.py."""
from __future__ import annotations

from backend.store import chats

STEPS = [{"text": "Read notes.txt", "status": "pending"},
         {"text": "Add a heading to notes.txt", "status": "pending"}]


def offered(request) -> set[str]:
    return {t.name for t in request.tools}


def planned(engine, chat, events) -> dict:
    """One plan proposed in the chat (2 pending steps); its plan event."""
    engine.model.calls("update_plan", {"steps": STEPS}, "p1", text="Here is my plan.")
    engine.model.says("Shall I go ahead?")
    engine.turns.send(chat, "r-plan", "plan it", [])
    event = events.until("plan")
    events.until("turn_end")
    return event


def test_update_plan_sends_plan_events_and_saves_the_plan_on_its_message(engine):
    chat = engine.chat(mode="plan")
    events = engine.events(chat)
    event = planned(engine, chat, events)
    assert event["steps"] == STEPS and event["plan_id"]
    rows = engine.messages(chat)
    caller = next(m for m in rows if m["role"] == "assistant" and m["tool_calls"])
    assert caller["tool_calls"][0]["name"] == "update_plan" and event["message_id"] == caller["id"]
    assert caller["plan"] == {"plan_id": event["plan_id"], "steps": STEPS}
    assert all(m["plan"] is None for m in rows if m["id"] != caller["id"])
    result = next(m for m in rows if m["role"] == "tool")
    assert "saved" in result["content"] and "Stop here" in result["content"]
    # It ran without asking, and the model read its result.
    assert not events.of("approval_required")
    assert "saved" in engine.model.requests[1].messages[-1].content

    # A later update keeps the plan's id; the new step's message carries the new state.
    changed = STEPS + [{"text": "Check the result", "status": "pending"}]
    engine.model.calls("update_plan", {"steps": changed}, "p2", text="Here is my plan.")
    engine.model.says("Updated.")
    engine.turns.send(chat, "r2", "add a check", [])
    again = events.until("plan")
    events.until("turn_end")
    assert again["plan_id"] == event["plan_id"] and again["steps"] == changed
    assert [m["plan"]["steps"] for m in engine.messages(chat) if m["plan"]] == [STEPS, changed]


def test_steps_that_are_not_a_plan_are_refused_to_the_model_and_the_turn_goes_on(engine):
    chat = engine.chat(mode="plan")
    events = engine.events(chat)
    bad = [{"steps": []}, {"steps": [{"text": "x", "status": "in_progress"}]}, {"steps": [{"text": " ", "status": "done"}]},
           {"steps": [{"text": "x", "status": "done"}] * 51}, {"steps": "do it"}]
    engine.model.calls_each([(f"b{i}", "update_plan", args) for i, args in enumerate(bad)])
    engine.model.says("sorry")
    engine.turns.send(chat, "r1", "go", [])
    assert events.until("turn_end")["status"] == "completed"
    ends = events.of("tool_end")
    assert len(ends) == len(bad) and not any(e["ok"] for e in ends)
    assert "pending, active, done" in ends[1]["output"] and "at most 50" in ends[3]["output"]
    assert not events.of("plan") and all(m["plan"] is None for m in engine.messages(chat))


def test_update_plan_stays_offered_while_the_plan_runs_until_the_mode_changes(engine):
    chat = engine.chat(mode="plan")
    events = engine.events(chat)
    plan_id = planned(engine, chat, events)["plan_id"]
    for text in ("Step one first.", "Going on.", "Plain."):
        engine.model.says(text)
    engine.turns.execute_plan(chat, plan_id)
    events.until("turn_end")
    assert chats.mode(chat) == "edit"
    # Not done yet: a turn the person starts still has update_plan.
    engine.turns.send(chat, "r2", "go", [])
    events.until("turn_end")
    assert "update_plan" in offered(engine.model.requests[-1])
    engine.set_mode(chat, "auto")
    engine.turns.send(chat, "r3", "go", [])
    events.until("turn_end")
    assert "update_plan" not in offered(engine.model.requests[-1])
