"""The turn engine's rules in process (tests/engine.py): send, queue, steer, stop, edit,
regenerate, approvals and questions, with no server or socket in between. The same rules
over the wire: tests/test_protocol_turns.py, test_protocol_steering.py,
test_protocol_approvals.py and test_protocol_questions.py."""
from __future__ import annotations

import json

import pytest

from backend.store.models import Message
from backend.turns.registry import CommandError
from tests.engine import Engine, Gate, echo_tool


@pytest.fixture
def engine(tmp_path):
    e = Engine(tmp_path)
    yield e
    e.close()


def branch(chat_id: str) -> list[tuple[str, str, str]]:
    """The chat's saved messages (not those dropped from its queue), oldest first: (role, content, status)."""
    rows = Message.select().where((Message.chat == chat_id) & Message.deleted_at.is_null()).order_by(Message.id)
    return [(m.role, m.content, m.status) for m in rows]


def test_a_reply_streams_is_saved_and_ends_the_turn(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.says("Hello", ", world")
    accepted = engine.turns.send(chat, "r1", "Hi", [])
    assert accepted["queued"] is False
    start = events.until("turn_start", user_message_id=accepted["message_id"])
    assert "".join(e["delta"] for e in events.of("content")) in ("", "Hello", "Hello, world")
    done = events.until("done")
    events.until("turn_end", status="completed")
    assert "".join(e["delta"] for e in events.of("content") if e["turn_id"] == start["turn_id"]) == "Hello, world"
    assert branch(chat) == [("user", "Hi", "complete"), ("assistant", "Hello, world", "complete")]
    assert Message.get_by_id(done["message_id"]).content == "Hello, world"
    # The request the model got: the person's message, after the system text.
    assert [m.content for m in engine.model.requests[0].messages] == ["Hi"]


def test_a_send_while_a_reply_runs_queues_and_starts_after_it(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.says("first", gate, " answer")
    engine.model.says("second answer")
    engine.turns.send(chat, "r1", "one", [])
    gate.wait_reached()
    queued = engine.turns.send(chat, "r2", "two", [])
    assert queued["queued"] is True
    assert events.until("queue")["items"][0]["message_id"] == queued["message_id"]
    gate.open()
    events.until("turn_end", status="completed")
    second = events.until("turn_start", user_message_id=queued["message_id"])
    events.until("turn_end", status="completed", turn_id=second["turn_id"])
    assert branch(chat) == [("user", "one", "complete"), ("assistant", "first answer", "complete"),
                            ("user", "two", "complete"), ("assistant", "second answer", "complete")]
    # The queued message's request carried the whole branch before it.
    assert [m.content for m in engine.model.requests[1].messages] == ["one", "first answer", "two"]


def test_the_same_request_id_twice_is_one_message(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.says("once")
    first = engine.turns.send(chat, "same", "Hi", [])
    again = engine.turns.send(chat, "same", "Hi", [])
    assert again["duplicate"] is True and again["message_id"] == first["message_id"]
    events.until("turn_end")
    assert [r for r, _, _ in branch(chat)] == ["user", "assistant"]


def test_stop_keeps_what_was_written_and_drops_the_queue_when_asked(engine):
    chat = engine.chat()
    events = engine.events(chat)
    gate = Gate()
    engine.model.says("partial", gate, " never sent")
    engine.turns.send(chat, "r1", "go", [])
    gate.wait_reached()
    queued = engine.turns.send(chat, "r2", "later", [])
    assert engine.turns.stop(chat, clear_queue=True) is True
    events.until("turn_end", status="cancelled")
    assert events.of("queue")[-1]["items"] == []
    assert branch(chat)[:2] == [("user", "go", "complete"), ("assistant", "partial", "cancelled")]
    assert Message.get_by_id(queued["message_id"]).deleted_at is not None  # dropped, never sent
    assert engine.turns.stop(chat) is False  # nothing runs now


def test_a_steering_message_reaches_the_running_turn_after_its_tool_step(tmp_path):
    ran = []
    engine = Engine(tmp_path, tools=[echo_tool(ran=ran)])
    try:
        chat = engine.chat(mode="auto")
        events = engine.events(chat)
        gate = Gate()
        # The first step waits until the steering message is queued, then calls a tool …
        engine.model.calls("echo", {"text": "x"}, gate=gate)
        engine.model.says("steered answer")  # and the next step reads the steering message.
        engine.turns.send(chat, "r1", "start", [])
        gate.wait_reached()
        steer = engine.turns.send(chat, "r2", "also this", [], steer=True)
        assert steer["queued"] is True
        gate.open()
        steered = events.until("steered", queued_id=steer["message_id"])
        events.until("turn_end", status="completed")
        assert ran == [{"text": "x"}]
        contents = [m.content for m in engine.model.requests[-1].messages]
        assert contents[-1] == "also this" and "start" in contents
        assert Message.get_by_id(steered["message_id"]).content == "also this"
    finally:
        engine.close()


def test_edit_makes_a_new_version_answered_by_a_new_turn(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.says("about cats")
    sent = engine.turns.send(chat, "r1", "cats?", [])
    events.until("turn_end")
    engine.model.says("about dogs")
    engine.turns.edit(chat, sent["message_id"], "dogs?")
    branched = events.until("branched")
    assert branched["content"] == "dogs?" and branched["versions"]["count"] == 2
    events.until("turn_end", status="completed")
    # Both versions are kept; the request of the new one carried only it.
    assert [m.content for m in engine.model.requests[-1].messages] == ["dogs?"]
    assert {c for r, c, _ in branch(chat) if r == "user"} == {"cats?", "dogs?"}
    with pytest.raises(CommandError) as refused:
        engine.turns.edit(chat, branched["message_id"] + 1, "a reply is not mine")
    assert refused.value.code == "bad_request"


def test_regenerate_writes_a_sibling_reply_and_is_refused_while_busy(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.says("first take")
    engine.turns.send(chat, "r1", "q", [])
    done = events.until("done")
    events.until("turn_end")
    gate = Gate()
    engine.model.says("second", gate, " take")
    engine.turns.regenerate(chat, done["message_id"])
    gate.wait_reached()
    with pytest.raises(CommandError) as busy:
        engine.turns.regenerate(chat, done["message_id"])
    assert busy.value.code == "busy"
    gate.open()
    events.until("turn_end", status="completed")
    replies = [c for r, c, _ in branch(chat) if r == "assistant"]
    assert replies == ["first take", "second take"]


def test_an_approval_waits_for_the_person_and_a_denial_reaches_the_model(tmp_path):
    ran = []
    engine = Engine(tmp_path, tools=[echo_tool(needs_approval=True, ran=ran)])
    try:
        chat = engine.chat(mode="edit")
        events = engine.events(chat)
        engine.model.calls("echo", {"text": "one"}, call_id="c1")
        engine.model.calls("echo", {"text": "two"}, call_id="c2")
        engine.model.says("done")
        engine.turns.send(chat, "r1", "go", [])
        first = events.until("approval_required", call_id="c1")
        assert engine.turns.is_awaiting(chat)
        assert engine.turns.pending_approvals(chat) == [{"approval_id": first["approval_id"], "name": "echo"}]
        engine.turns.approve(chat, first["approval_id"], "allow")
        second = events.until("approval_required", call_id="c2")
        engine.turns.approve(chat, second["approval_id"], "deny", "not that one")
        events.until("turn_end", status="completed")
        assert ran == [{"text": "one"}]
        tool_results = [m for m in engine.model.requests[-1].messages if m.role == "tool"]
        assert "echo: one" in tool_results[0].content and "not that one" in tool_results[1].content
        with pytest.raises(CommandError) as gone:
            engine.turns.approve(chat, second["approval_id"], "allow")
        assert gone.value.code == "not_found"
    finally:
        engine.close()


def test_stopping_a_turn_that_waits_for_approval_denies_the_call(tmp_path):
    ran = []
    engine = Engine(tmp_path, tools=[echo_tool(needs_approval=True, ran=ran)])
    try:
        chat = engine.chat(mode="edit")
        events = engine.events(chat)
        engine.model.calls("echo", {"text": "x"})
        engine.turns.send(chat, "r1", "go", [])
        events.until("approval_required")
        engine.turns.stop(chat)
        events.until("turn_end", status="cancelled")
        assert ran == [] and not engine.turns.is_awaiting(chat)
    finally:
        engine.close()


def test_a_question_waits_for_its_answer_and_the_answer_reaches_the_model(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("ask_user", {"items": [{"key": "color", "prompt": "Which color?", "kind": "choice",
                                                   "options": [{"value": "r", "label": "Red"},
                                                               {"value": "b", "label": "Blue"}]}]})
    engine.model.says("Blue it is")
    engine.turns.send(chat, "r1", "paint it", [])
    asked = events.until("question")
    assert engine.turns.is_asking(chat)
    with pytest.raises(CommandError) as bad:
        engine.turns.answer(chat, asked["question_id"], {"color": "green"}, False)
    assert bad.value.code == "bad_request"
    engine.turns.answer(chat, asked["question_id"], {"color": "b"}, False)
    events.until("turn_end", status="completed")
    result = json.loads([m for m in engine.model.requests[-1].messages if m.role == "tool"][0].content)
    assert result["status"] == "answered" and result["answers"][0]["answer"] == "b"
    with pytest.raises(CommandError) as gone:
        engine.turns.answer(chat, asked["question_id"], {"color": "b"}, False)
    assert gone.value.code == "not_pending"
