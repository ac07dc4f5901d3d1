"""Questions (`ask_user`, CONTRACT §7) in process (tests/engine.py): dismissed, arguments that are
no question, Stop while one waits, and the time limit the person set. The same rules over the
wire (answers, refusals, resume, quitting): tests/test_protocol_questions.py."""
from __future__ import annotations

import json

import pytest

from backend.features import questions
from backend.store import settings
from backend.turns.registry import CommandError
from tests.test_protocol_questions import ITEMS


def start(engine, *after: str):
    """A chat whose turn asks ITEMS, then says `after`; (chat id, its events, the `question` event)."""
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("ask_user", {"items": ITEMS}, "q1", text="One moment.")
    for text in after:
        engine.model.says(text)
    engine.turns.send(chat, "r1", "set it up", [])
    return chat, events, events.until("question")


def result_sent(engine) -> dict:
    """The ask_user call's result as the model read it in the next request."""
    sent = engine.model.requests[-1].messages[-1]
    assert sent.role == "tool"
    return json.loads(sent.content)


def test_a_dismissed_question_tells_the_model_and_the_turn_goes_on(engine):
    chat, events, question = start(engine, "I will assume PostgreSQL.")
    engine.turns.answer(chat, question["question_id"], None, True)
    assert events.until("turn_end")["status"] == "completed"
    result = result_sent(engine)
    assert result["status"] == "dismissed" and "dismissed the question without answering" in result["message"]
    assert engine.messages(chat)[-1]["content"] == "I will assume PostgreSQL."


def test_arguments_that_are_no_question_become_an_error_the_model_reads(engine):
    chat = engine.chat()
    events = engine.events(chat)
    twice = [{"key": "a", "prompt": "One?", "kind": "text"}, {"key": "a", "prompt": "Two?", "kind": "text"}]
    engine.model.calls("ask_user", {"items": twice}, "q1")
    engine.model.calls("ask_user", {"items": [{"key": "k", "prompt": "Pick", "kind": "choice"}]}, "q2")
    engine.model.says("Sorry.")
    engine.turns.send(chat, "r1", "ask me", [])
    assert events.until("turn_end")["status"] == "completed"
    assert not events.of("question")
    ends = events.of("tool_end")
    assert [e["ok"] for e in ends] == [False, False]
    assert "repeats the key 'a'" in ends[0]["output"]
    assert 'give "options"' in ends[1]["output"]
    sent = engine.model.requests[1].messages[-1]
    assert sent.role == "tool" and "repeats the key" in sent.content


def test_stop_while_a_question_waits_ends_the_turn_cancelled(engine):
    chat, events, question = start(engine)
    engine.turns.stop(chat)
    assert events.until("turn_end")["status"] == "cancelled"
    tool = [m for m in engine.messages(chat) if m["role"] == "tool"][0]
    assert json.loads(tool["content"])["status"] == "stopped"
    with pytest.raises(CommandError) as gone:
        engine.turns.answer(chat, question["question_id"], None, True)
    assert gone.value.code == "not_pending"


def test_questions_time_out_only_with_a_limit_the_person_set(engine):
    assert questions.timeout_s() is None  # no limit unless the person sets one
    settings.put(questions.SETTING, {"timeout_s": 1})
    chat, events, question = start(engine, "I went ahead with SQLite.")
    assert question["timeout_s"] == 1
    assert events.until("turn_end")["status"] == "completed"
    result = result_sent(engine)
    assert result["status"] == "no_answer" and "did not answer within the 1 s" in result["message"]
    with pytest.raises(CommandError) as gone:
        engine.turns.answer(chat, question["question_id"], None, True)
    assert gone.value.code == "not_pending"
