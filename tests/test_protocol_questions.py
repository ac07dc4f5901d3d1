"""Questions (`ask_user`, CONTRACT §7) through the real server and the fake provider's scripted
tool calls: answered, refused answers, re-sent after a reconnect, and interrupted when Numi quits
or is killed. Dismissed, stopped and out of time are engine rules: tests/test_engine_questions.py."""
from __future__ import annotations

import json

import pytest

from tests.fakeprovider import script as S
from tests.numi_client import AppSocket

ITEMS = [
    {"key": "db", "prompt": "Which database?", "kind": "choice", "allow_other": True,
     "options": [{"value": "pg", "label": "PostgreSQL"}, {"value": "lite", "label": "SQLite"}]},
    {"key": "extras", "prompt": "Which extras?", "kind": "multi",
     "options": [{"value": "auth", "label": "Sign-in"}, {"value": "search", "label": "Search"}]},
    {"key": "notes", "prompt": "Anything else?", "kind": "text"},
]


def ask(call_id: str = "q1", items=ITEMS) -> list[dict]:
    return [S.text("One moment."), S.tool_call(0, call_id, "ask_user", json.dumps({"items": items}))]


@pytest.fixture
def tooled(setup):
    """The fake model calls tools, so it is offered ask_user."""
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    return setup


def start(setup, script, *after) -> tuple[str, object, dict]:
    """A chat whose turn asks; (chat id, its socket, the `question` event)."""
    chat = setup.chat(title="t")
    setup.fake.enqueue(script, *after)
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="set it up")
    return chat, sock, sock.until("question")


def result_sent(setup) -> dict:
    """The ask_user call's result as the model read it in the next request."""
    sent = setup.fake.requests[-1].body["messages"][-1]
    assert sent["role"] == "tool"
    return json.loads(sent["content"])


def test_answers_reach_the_model_as_the_calls_result(tooled):
    setup = tooled
    app = AppSocket(setup.server)
    chat, sock, question = start(setup, ask(), [S.text("PostgreSQL it is.")])
    # The items as the model gave them (every field there), for the call that asked.
    assert question["call_id"] == "q1" and question["question_id"].startswith("q_")
    assert question["items"][2] == {"key": "notes", "prompt": "Anything else?", "kind": "text", "options": [],
                                    "allow_other": False}
    assert question["items"][1]["allow_other"] is False and "timeout_s" not in question  # no limit was set
    assert not sock.of("approval_required")  # asking needs no approval
    offered = {t["function"]["name"] for t in setup.fake.requests[0].body["tools"]}
    assert "ask_user" in offered
    # The chat list (and the tray) know the chat waits for the person.
    app.chat(chat, running=True, awaiting_answer=True)
    assert setup.api.get(f"/api/chats/{chat}").body["awaiting_answer"] is True

    sock.send(type="answer", question_id=question["question_id"],
              answers={"db": "MariaDB, the one we run", "extras": ["search", "auth", "search"], "notes": "  none "})
    end = sock.until("tool_end", call_id="q1")
    assert end["ok"] is True and end["name"] == "ask_user"
    assert sock.until("turn_end")["status"] == "completed"
    assert result_sent(setup) == {"status": "answered", "answers": [
        {"key": "db", "question": "Which database?", "answer": "MariaDB, the one we run", "in_their_own_words": True},
        {"key": "extras", "question": "Which extras?", "answer": ["search", "auth"]},
        {"key": "notes", "question": "Anything else?", "answer": "none"},
    ]}
    app.chat(chat, running=True, awaiting_answer=False)
    tool = [m for m in setup.messages(chat) if m["role"] == "tool"][0]
    assert tool["status"] == "complete" and tool["tool_call_id"] == "q1"
    # Answering again: nothing waits any more.
    sock.send(type="answer", question_id=question["question_id"], dismissed=True)
    assert sock.until("error")["code"] == "not_pending"


def test_answers_that_do_not_fit_are_refused_and_the_question_still_waits(tooled):
    setup = tooled
    chat, sock, question = start(setup, ask(), [S.text("ok")])
    qid = question["question_id"]
    good = {"db": "pg", "extras": [], "notes": ""}
    refused = [
        ({**good, "extras": ["auth", "billing"]}, "bad_request", "Pick only from the options of \u201cWhich extras?\u201d"),
        ({"db": "pg", "extras": []}, "bad_request", "Answer \u201cAnything else?\u201d too"),
        ({**good, "colour": "red"}, "bad_request", "no item \u201ccolour\u201d"),
        ({**good, "db": "  "}, "bad_request", "Pick an option of \u201cWhich database?\u201d, or write your own"),
        ({**good, "extras": "auth"}, "bad_request", "must be a list of texts"),
        ({**good, "notes": 3}, "bad_request", "must be a text or a list of texts"),  # the frame itself
    ]
    for answers, code, says in refused:
        sock.send(type="answer", question_id=qid, answers=answers)
        error = sock.until("error")
        assert error["code"] == code and says in error["message"], (answers, error)
    for frame in ({"question_id": qid}, {"question_id": qid, "dismissed": False},
                  {"question_id": qid, "answers": good, "dismissed": True}, {"question_id": qid, "dismissed": "true"},
                  {"answers": good}):
        sock.send(type="answer", **frame)
        assert sock.until("error")["code"] == "bad_request", frame
    sock.send(type="answer", question_id="q_unknown", answers=good)
    assert sock.until("error")["code"] == "not_pending"
    assert not sock.of("tool_end")  # nothing was answered yet
    sock.send(type="answer", question_id=qid, answers={**good, "notes": "x" * 10_001})
    assert "longer than 10,000 characters" in sock.until("error")["message"]
    sock.send(type="answer", question_id=qid, answers=good)
    assert sock.until("turn_end")["status"] == "completed"
    assert [a["answer"] for a in result_sent(setup)["answers"]] == ["pg", [], ""]


def test_a_waiting_question_is_sent_again_to_a_socket_that_resumes(tooled):
    setup = tooled
    chat, sock, question = start(setup, ask(), [S.text("ok")])
    sock.close()
    # A reload: the new socket had seen the question already (its cursor is past it), and
    # still hears it again, as a new event.
    again = setup.socket(chat)
    again.send(type="resume", after_event_id=question["event_id"], epoch=question["epoch"])
    repeat = again.until("question")
    assert repeat["question_id"] == question["question_id"] and repeat["items"] == question["items"]
    assert repeat["event_id"] > question["event_id"] and repeat["turn_id"] == question["turn_id"]
    again.close()
    # Resuming at connect time does the same.
    third = setup.socket(chat, query=f"after_event_id={repeat['event_id']}&epoch={question['epoch']}")
    assert third.until("question")["event_id"] > repeat["event_id"]
    third.send(type="answer", question_id=question["question_id"], answers={"db": "lite", "extras": ["auth"],
                                                                            "notes": "small"})
    assert third.until("turn_end")["status"] == "completed"
    assert result_sent(setup)["answers"][0] == {"key": "db", "question": "Which database?", "answer": "lite"}


def test_a_socket_far_behind_gets_the_waiting_question_after_its_snapshot(setup_with):
    # The log keeps 64 events; the reply streams 150 deltas before it asks. A window resuming
    # from the turn's start is past the log's end: one snapshot stands in for what it missed, and
    # the waiting question, sent again, must follow it rather than be folded away.
    setup = setup_with({"NUMI_EVENT_LOG_CAPACITY": "64"})
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    chunks = [S.text(f"w{i} ") for i in range(150)]
    chat, sock, question = start(setup, chunks + ask()[1:], [S.text("ok")])
    sock.close()
    again = setup.socket(chat)
    again.send(type="resume", after_event_id=1, epoch=question["epoch"])
    snap = again.until("snapshot")
    assert snap["content"].startswith("w0 w1 ") and snap["last_event_id"] >= question["event_id"]
    repeat = again.until("question")
    assert repeat["question_id"] == question["question_id"] and repeat["event_id"] > snap["last_event_id"]
    again.send(type="answer", question_id=question["question_id"], answers={"db": "pg", "extras": [], "notes": ""})
    assert again.until("turn_end")["status"] == "completed"


def test_the_time_limit_setting_is_checked(setup):
    for body, says in (({"questions": {"timeout_s": 0}}, "from 1 to"), ({"questions": {"timeout_s": 1.5}}, "whole"),
                       ({"questions": {"timeout_s": "60"}}, "whole"), ({"questions": {"limit": 60}}, "Unknown"),
                       ({"questions": 60}, "Must be an object"), ({"questions": None}, "cannot be null")):
        r = setup.api.patch("/api/settings", body)
        assert r.status == 422, (body, r)
        field, message = next(iter(r.body["error"]["fields"].items()))
        assert field.startswith("questions") and says in message, (body, r.body)
    assert setup.api.patch("/api/settings", {"questions": {"timeout_s": 600}}).body["questions"]["timeout_s"] == 600
    assert setup.api.patch("/api/settings", {"questions": {"timeout_s": None}}).body["questions"]["timeout_s"] is None
    assert setup.api.get("/api/settings").body["questions"] == {"timeout_s": None}


@pytest.mark.parametrize("how", ["kill9", "sigterm"])
def test_a_question_waiting_when_numi_ends_leaves_an_interrupted_turn(tooled, how):
    setup = tooled
    chat, sock, question = start(setup, ask())
    if how == "kill9":
        setup.server.kill9()
    else:
        assert setup.server.terminate() < 10
    setup.server.start()
    setup.api = setup.server.api()
    rows = setup.messages(chat)
    asked, result = rows[-2], rows[-1]
    assert asked["role"] == "assistant" and asked["status"] == "interrupted" and asked["content"] == "One moment."
    assert result["role"] == "tool" and result["status"] == "interrupted" and result["tool_call_id"] == "q1"
    # Continue goes on: the model reads that no answer came.
    setup.fake.enqueue([S.text("Shall I ask again?")])
    sock = setup.socket(chat)
    sock.send(type="continue")
    assert sock.until("turn_end")["status"] == "completed"
    sent = setup.fake.requests[-1].body["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "q1"
    assert "Numi was closed before" in sent[-1]["content"]
