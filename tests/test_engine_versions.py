"""Versions and branches (CONTRACT §5) in process (tests/engine.py): switching, regenerate (with
another model, from a later step), a queued message's parent and Continue on an older branch.
The same rules over the wire: tests/test_protocol_versions.py and test_protocol_regenerate_with.py."""
from __future__ import annotations

import pytest

from backend.turns.registry import CommandError
from tests.engine import Gate


def texts(items):
    return [(m["role"], m["content"]) for m in items]


def test_switching_returns_to_the_leaf_last_active_under_a_version(engine):
    # A chat where the first question was edited: q1 → a1, then q1' → a2 (active).
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.says("a1")
    engine.model.says("a2")
    engine.turns.send(chat, "r1", "q1", [])
    events.until("turn_end")
    first = engine.messages(chat)
    engine.turns.edit(chat, first[0]["id"], "q1 better", "e1")
    new_user = events.until("branched")["message_id"]
    events.until("turn_end")

    engine.model.says("a1 follow-up")
    assert engine.turns.switch(chat, first[0]["id"]) == first[1]["id"]
    items = engine.messages(chat)
    assert texts(items) == [("user", "q1"), ("assistant", "a1")]
    assert items[0]["versions"]["index"] == 1
    # Carrying on on the old branch: the model sees that branch.
    engine.turns.send(chat, "r2", "more on a1", [])
    events.until("turn_end")
    assert [m.content for m in engine.model.requests[-1].messages] == ["q1", "a1", "more on a1"]
    deep = engine.messages(chat)
    assert texts(deep)[-2:] == [("user", "more on a1"), ("assistant", "a1 follow-up")]
    # Away and back: the old branch comes back with its newest leaf.
    engine.turns.switch(chat, new_user)
    newer = engine.messages(chat)
    assert texts(newer) == [("user", "q1 better"), ("assistant", "a2")]
    engine.turns.switch(chat, first[0]["id"])
    assert [m["id"] for m in engine.messages(chat)] == [m["id"] for m in deep]
    # Other windows hear of each switch.
    assert [e["leaf_id"] for e in events.of("active_changed")] == [first[1]["id"], newer[-1]["id"], deep[-1]["id"]]


def test_branched_names_the_model_a_regenerate_asked_for(engine):
    chat = engine.chat()
    other = engine.add_model("fake-other")
    events = engine.events(chat)
    for text in ("one", "two", "three"):
        engine.model.says(text)
    engine.turns.send(chat, "r1", "q", [])
    events.until("turn_end")
    reply = engine.messages(chat)[1]
    engine.turns.regenerate(chat, reply["id"], model_id=other)
    events.until("turn_end")
    assert events.of("branched")[-1]["model_id"] == other
    assert engine.model.requests[-1].model == "fake-other"
    engine.turns.regenerate(chat, reply["id"])
    events.until("turn_end")
    assert events.of("branched")[-1]["model_id"] is None  # the chat's model


def test_regenerate_on_a_later_step_makes_a_sibling_of_the_turns_first_reply(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("upper", {"text": "x"}, "call_a")
    engine.model.says("X it is")
    engine.model.says("again")
    engine.turns.send(chat, "r1", "use a tool", [])
    events.until("turn_end")
    items = engine.messages(chat)
    assert [m["role"] for m in items] == ["user", "assistant", "tool", "assistant"]
    engine.turns.regenerate(chat, items[3]["id"])
    events.until("turn_end")
    now = engine.messages(chat)
    assert texts(now) == [("user", "use a tool"), ("assistant", "again")]
    assert now[1]["versions"]["ids"] == [items[1]["id"], now[1]["id"]]


def test_a_queued_message_gets_its_parent_when_its_turn_starts(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.says(gate)
    engine.model.says("second")
    engine.turns.send(chat, "r1", "first", [])
    gate.wait_reached()
    queued = engine.turns.send(chat, "r2", "waiting", [])
    listed = engine.messages(chat)
    assert listed[-1]["id"] == queued["message_id"] and listed[-1]["status"] == "queued"
    assert listed[-1]["parent_id"] is None
    engine.turns.stop(chat)
    events.until("turn_start", user_message_id=queued["message_id"])
    events.until("turn_end", status="completed")
    items = engine.messages(chat)
    assert [m["content"] for m in items if m["role"] == "user"] == ["first", "waiting"]
    at = [m["id"] for m in items].index(queued["message_id"])
    assert items[at]["parent_id"] == items[at - 1]["id"]
    assert items[-1]["parent_id"] == queued["message_id"]


def test_continue_finishes_a_stopped_reply_on_an_older_branch(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.says("half of it", gate)
    engine.model.says("a fresh answer")
    engine.model.says(", and the rest")
    engine.turns.send(chat, "r1", "q", [])
    gate.wait_reached()
    engine.turns.stop(chat)
    assert events.until("turn_end")["status"] == "cancelled"
    stopped = engine.messages(chat)[1]
    assert (stopped["status"], stopped["content"]) == ("cancelled", "half of it")
    engine.turns.regenerate(chat, stopped["id"])
    events.until("turn_end")
    assert texts(engine.messages(chat)) == [("user", "q"), ("assistant", "a fresh answer")]
    engine.turns.switch(chat, stopped["id"])
    engine.turns.continue_(chat)
    start = events.until("turn_start")
    end = events.until("turn_end")
    assert start["continue_message_id"] == stopped["id"] and end["status"] == "completed"
    items = engine.messages(chat)
    assert texts(items) == [("user", "q"), ("assistant", "half of it, and the rest")]
    assert items[1]["versions"] == {"index": 1, "count": 2, "ids": [stopped["id"], items[1]["versions"]["ids"][1]]}


def test_regenerate_with_an_unknown_model_is_not_found_and_keeps_the_reply(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.says("one")
    engine.turns.send(chat, "r1", "q", [])
    reply_id = events.until("done")["message_id"]
    events.until("turn_end")
    before = engine.messages(chat)
    with pytest.raises(CommandError) as refused:
        engine.turns.regenerate(chat, reply_id, model_id="m_gone")
    assert refused.value.code == "not_found" and "m_gone" in refused.value.message
    assert engine.messages(chat) == before
