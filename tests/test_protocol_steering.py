"""Steering: a `send` with mode "steer" while a turn runs joins it at the next model step."""
from __future__ import annotations

from tests.fakeprovider import script as S


def queue_becomes(sock, items) -> None:
    """Wait for the queue to read `items` (a queue event may come before or after `accepted`)."""
    while not (sock.of("queue") and sock.of("queue")[-1]["items"] == items):
        sock.until("queue")


def test_a_steering_message_lands_at_the_next_step(setup):
    chat = setup.chat(title="t")
    # Step 1 writes, waits for the test, then asks for a tool; step 2 answers.
    setup.fake.enqueue([S.text("Looking"), S.hang(), S.tool_call(0, "c1", "upper", '{"text": "abc"}')],
                       [S.text("Done, in French.")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="find it")
    setup.fake.wait_hanging(1, timeout=15)
    sock.send(type="send", request_id="r2", content="answer in French", mode="steer")
    accepted = sock.until("accepted", request_id="r2")
    assert accepted["queued"] is True and accepted["steer"] is True
    queue_becomes(sock, [{"message_id": accepted["message_id"], "preview": "answer in French", "steer": True}])
    setup.fake.release()
    steered = sock.until("steered")
    assert steered["queued_id"] == accepted["message_id"] and steered["content"] == "answer in French"
    queue_becomes(sock, [])
    end = sock.until("turn_end")
    assert end["status"] == "completed"
    assert len(sock.of("turn_start")) == 1  # no second turn: it joined this one
    second = setup.fake.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "user"]
    assert second[-1]["content"] == "answer in French"
    stored = setup.messages(chat)
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "find it"), ("assistant", "Looking"), ("tool", "ABC"),
        ("user", "answer in French"), ("assistant", "Done, in French.")]
    assert stored[3]["id"] == steered["message_id"]


def test_steering_a_last_step_becomes_the_next_turn(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.hang(), S.text("One reply")], [S.text("Second reply")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="first")
    setup.fake.wait_hanging(1, timeout=15)
    # Sent before the reply's first word: its row is older than the reply's, yet the
    # history keeps the order things were said in.
    sock.send(type="send", request_id="r2", content="and this", mode="steer")
    queued = sock.until("accepted", request_id="r2")["message_id"]
    setup.fake.release()
    first_end = sock.until("turn_end")
    second_start = sock.until("turn_start")
    second_end = sock.until("turn_end")
    assert (first_end["status"], second_end["status"]) == ("completed", "completed")
    assert not sock.of("steered")
    # It keeps its id and joins the branch after the reply it was to steer.
    assert second_start["user_message_id"] == queued
    stored = setup.messages(chat)
    assert [m["content"] for m in stored] == ["first", "One reply", "and this", "Second reply"]
    assert stored[2]["id"] == queued and stored[2]["parent_id"] == stored[1]["id"]
    assert [m["content"] for m in setup.fake.requests[1].body["messages"]] == ["first", "One reply", "and this"]


def test_steering_with_nothing_running_is_an_ordinary_send(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("hi")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hello", mode="steer")
    accepted = sock.until("accepted")
    assert accepted["queued"] is False and accepted["steer"] is False
    assert sock.until("turn_end")["status"] == "completed"


def test_a_discarded_steering_message_is_not_sent(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("a"), S.hang(), S.tool_call(0, "c1", "upper", '{"text": "x"}')], [S.text("b")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    setup.fake.wait_hanging(1, timeout=15)
    sock.send(type="send", request_id="r2", content="never mind", mode="steer")
    queued = sock.until("accepted", request_id="r2")["message_id"]
    sock.send(type="queue_discard", message_id=queued)
    queue_becomes(sock, [])
    setup.fake.release()
    sock.until("turn_end")
    assert "never mind" not in str(setup.fake.requests[1].body["messages"])
    assert not sock.of("steered")
