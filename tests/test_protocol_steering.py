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
