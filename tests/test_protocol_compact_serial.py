"""The "Summarize now" (POST /api/chats/{id}/compact, CONTRACT §6) as a command of its chat, over the
real server: a slow summary holds only its own chat, a message sent meanwhile waits for it and
then runs on the summary, Stop ends it, and a provider that trickles is cut off at the time cap."""
from __future__ import annotations

import threading
import time

from tests.fakeprovider import script as S


def two_turns(setup, tag: str):
    """A chat of two short turns (enough for a summary) and its socket."""
    chat = setup.chat(title=tag)
    sock = setup.socket(chat)
    for i in range(2):
        setup.fake.enqueue([S.text(f"{tag} answer {i}")])
        sock.send(type="send", request_id=f"{tag}-{i}", content=f"{tag} question {i}")
        start = sock.until("turn_start")
        assert sock.until("turn_end", turn_id=start["turn_id"])["status"] == "completed"
    return chat, sock


class Compacting:
    """A POST …/compact on its own thread (it answers when the summary is written)."""

    def __init__(self, api, chat: str):
        self.answer = None
        self.thread = threading.Thread(target=lambda: setattr(self, "answer", api.post(f"/api/chats/{chat}/compact")),
                                       daemon=True)
        self.thread.start()

    def result(self, timeout: float = 10.0):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"the summary request did not answer within {timeout}s"
        return self.answer


def compaction_of(setup, chat: str):
    return setup.api.get(f"/api/chats/{chat}/context").body["compaction"]


def test_a_slow_summary_holds_only_its_own_chat(setup):
    a, _ = two_turns(setup, "a")
    b, _ = two_turns(setup, "b")
    setup.fake.enqueue([S.hang(), S.text("SUMMARY-A")])
    slow = Compacting(setup.api, a)
    setup.fake.wait_hanging()
    # Another chat summarizes while the first one's provider still has not answered …
    setup.fake.enqueue([S.text("SUMMARY-B")])
    started = time.monotonic()
    r = setup.api.post(f"/api/chats/{b}/compact")
    assert r.status == 200, r
    assert r.body["summary"] == "SUMMARY-B" and time.monotonic() - started < 5
    assert compaction_of(setup, b)["summary"] == "SUMMARY-B"
    # … while a second summary of the same chat is refused until the first ends.
    again = setup.api.post(f"/api/chats/{a}/compact")
    assert again.status == 409 and again.body["error"]["code"] == "busy", again
    assert "summary" in again.body["error"]["message"]
    setup.fake.release()
    done = slow.result()
    assert done.status == 200 and done.body["summary"] == "SUMMARY-A", done
    assert compaction_of(setup, a)["summary"] == "SUMMARY-A"


def test_a_message_sent_during_a_summary_waits_for_it_then_runs_on_it(setup):
    chat, sock = two_turns(setup, "a")
    asked = len(setup.fake.requests)
    setup.fake.enqueue([S.hang(), S.text("SUMMARY-A")])
    slow = Compacting(setup.api, chat)
    setup.fake.wait_hanging()
    setup.fake.enqueue([S.text("answered after the summary")])
    sock.send(type="send", request_id="during", content="a question while it summarizes")
    accepted = sock.until("accepted", request_id="during")
    assert accepted["queued"] is True
    assert [i["message_id"] for i in sock.until("queue")["items"]] == [accepted["message_id"]]
    waiting = setup.messages(chat)[-1]
    assert (waiting["id"], waiting["status"]) == (accepted["message_id"], "queued")
    # Nothing else may change the chat meanwhile.
    sock.send(type="continue")
    busy = sock.until("error")
    assert busy["code"] == "busy" and "summary" in busy["message"]
    assert len(setup.fake.requests) == asked + 1  # the summary's request only: no turn started
    setup.fake.release()
    assert slow.result().status == 200
    start = sock.until("turn_start")
    assert start["user_message_id"] == accepted["message_id"]
    assert sock.until("turn_end", turn_id=start["turn_id"])["status"] == "completed", sock.of("error")
    # The turn ran on the summary: its request carries it, and the question is kept and answered.
    sent = setup.fake.requests[-1].body["messages"]
    assert "SUMMARY-A" in sent[0]["content"] and sent[-1]["content"] == "a question while it summarizes"
    msgs = setup.messages(chat)
    assert [(m["role"], m["content"], m["status"]) for m in msgs[-2:]] == [
        ("user", "a question while it summarizes", "complete"), ("assistant", "answered after the summary", "complete")]
    assert len(msgs) == 6


def test_stop_ends_a_running_summary_and_changes_nothing(setup):
    chat, sock = two_turns(setup, "a")
    setup.fake.enqueue([S.hang(), S.text("never used")])
    slow = Compacting(setup.api, chat)
    setup.fake.wait_hanging()
    sock.send(type="stop")
    r = slow.result(5)
    assert r.status == 409 and r.body["error"]["code"] == "cancelled", r
    assert "stopped" in r.body["error"]["message"] and "Nothing was changed" in r.body["error"]["message"]
    assert compaction_of(setup, chat) is None
    setup.fake.release()
    # The chat is free again: a summary and a turn both run.
    setup.fake.enqueue([S.text("SUMMARY-AGAIN")])
    assert setup.api.post(f"/api/chats/{chat}/compact").status == 200
    setup.fake.enqueue([S.text("still here")])
    sock.send(type="send", request_id="after", content="go on")
    start = sock.until("turn_start")
    assert sock.until("turn_end", turn_id=start["turn_id"])["status"] == "completed"


def test_a_trickling_summary_ends_at_the_time_cap_and_changes_nothing(setup_with):
    setup = setup_with({"NUMI_SUMMARY_SECONDS": "1"})
    chat, _ = two_turns(setup, "a")
    # A word every 0.2 s for 20 s: the provider's own timeout never fires, the cap does.
    setup.fake.enqueue([S.delay(0.2)] + [S.text("slow ") for _ in range(100)])
    started = time.monotonic()
    r = setup.api.post(f"/api/chats/{chat}/compact")
    took = time.monotonic() - started
    assert r.status == 504 and r.body["error"]["code"] == "compaction_failed", r
    assert "within 1 seconds" in r.body["error"]["message"] and "Nothing was changed" in r.body["error"]["message"]
    assert took < 5
    assert compaction_of(setup, chat) is None
    # A summary that comes in time is kept under the same cap.
    setup.fake.enqueue([S.text("SUMMARY-QUICK")])
    r = setup.api.post(f"/api/chats/{chat}/compact")
    assert r.status == 200 and compaction_of(setup, chat)["summary"] == "SUMMARY-QUICK", r
