"""Steering in process (tests/engine.py): a steering message sent on a turn's last step, with
nothing running, and discarded before it lands. The same rules over the wire:
tests/test_protocol_steering.py."""
from __future__ import annotations

from tests.engine import Gate


def test_steering_a_last_step_becomes_the_next_turn(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.says(gate, "One reply")
    engine.model.says("Second reply")
    engine.turns.send(chat, "r1", "first", [])
    gate.wait_reached()
    # Sent before the reply's first word: its row is older than the reply's, yet the
    # history keeps the order things were said in.
    queued = engine.turns.send(chat, "r2", "and this", [], steer=True)["message_id"]
    gate.open()
    first_end = events.until("turn_end")
    second_start = events.until("turn_start")
    second_end = events.until("turn_end")
    assert (first_end["status"], second_end["status"]) == ("completed", "completed")
    assert not events.of("steered")
    # It keeps its id and joins the branch after the reply it was to steer.
    assert second_start["user_message_id"] == queued
    stored = engine.messages(chat)
    assert [m["content"] for m in stored] == ["first", "One reply", "and this", "Second reply"]
    assert stored[2]["id"] == queued and stored[2]["parent_id"] == stored[1]["id"]
    assert [m.content for m in engine.model.requests[1].messages] == ["first", "One reply", "and this"]


def test_steering_with_nothing_running_is_an_ordinary_send(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.says("hi")
    answer = engine.turns.send(chat, "r1", "hello", [], steer=True)
    assert answer["queued"] is False
    accepted = events.until("accepted")
    assert accepted["queued"] is False and accepted["steer"] is False
    assert events.until("turn_end")["status"] == "completed"


def test_a_discarded_steering_message_is_not_sent(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.calls("upper", {"text": "x"}, "c1", gate=gate, text="a")
    engine.model.says("b")
    engine.turns.send(chat, "r1", "go", [])
    gate.wait_reached()
    queued = engine.turns.send(chat, "r2", "never mind", [], steer=True)["message_id"]
    engine.turns.queue_discard(chat, queued)
    assert events.of("queue")[-1]["items"] == []
    gate.open()
    events.until("turn_end")
    assert "never mind" not in str([m.content for m in engine.model.requests[1].messages])
    assert not events.of("steered")
