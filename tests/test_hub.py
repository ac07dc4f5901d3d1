"""The per-chat event hub on its own: numbering, replay, snapshots, trimming."""
import pytest

from backend.turns import hub as hubmod
from backend.turns.events import problems
from backend.turns.hub import ChatHub


def turn(h, turn_id="t1", words=("a", "b", "c")):
    h.publish("turn_start", turn_id, user_message_id=1, continue_message_id=None)
    for w in words:
        h.publish("content", turn_id, delta=w, message_id=7)
    h.publish("turn_end", turn_id, status="completed")


def resumed_from_zero(h) -> dict:
    """What a reader resuming from 0 gets when the ring has moved past the turn: one snapshot."""
    sub = h.subscribe()
    sub.resume(0)
    (snap,) = sub.pull()
    return snap


def test_resume_from_zero_replays_the_turn_and_ids_only_grow():
    h = ChatHub("c", "e1")
    h.publish("title_update", None, title="x")
    turn(h)
    sub = h.subscribe()
    assert sub.resume(0)
    events = sub.pull()
    assert [e["type"] for e in events][0] == "turn_start"
    assert "".join(e["delta"] for e in events if e["type"] == "content") == "abc"
    ids = [e["event_id"] for e in events]
    assert ids == sorted(ids) and sub.pull() == []


def test_a_reader_behind_the_ring_gets_one_snapshot(monkeypatch):
    monkeypatch.setattr(hubmod, "LOG_CAPACITY", 5)
    h = ChatHub("c", "e1")
    turn(h, words=[str(i) for i in range(20)])
    snap = resumed_from_zero(h)
    assert snap["type"] == "snapshot" and snap["content"] == "".join(str(i) for i in range(20))
    assert snap["status"] == "complete" and snap["last_event_id"] == h.last_event_id
    assert problems(snap) == []


def test_a_resume_and_a_snapshot_each_ask_once_for_what_waits_to_be_sent_again(monkeypatch):
    # A snapshot carries no waiting question: the socket sends those again after it (ws.py).
    monkeypatch.setattr(hubmod, "LOG_CAPACITY", 5)
    h = ChatHub("c", "e1")
    h.publish("turn_start", "t1", user_message_id=1, continue_message_id=None)
    sub = h.subscribe()
    assert not sub.take_resend()
    sub.resume(0)
    assert sub.take_resend() and not sub.take_resend()
    sub.pull()
    for i in range(3):
        h.publish("content", "t1", delta=str(i), message_id=7)
    assert [e["type"] for e in sub.pull()] == ["content"] * 3 and not sub.take_resend()
    for i in range(10):  # past the ring's end
        h.publish("content", "t1", delta="x", message_id=7)
    assert [e["type"] for e in sub.pull()] == ["snapshot"] and sub.take_resend() and not sub.take_resend()


def test_a_snapshot_keeps_the_turns_sources_and_research_progress(monkeypatch):
    monkeypatch.setattr(hubmod, "LOG_CAPACITY", 5)
    h = ChatHub("c", "e1")
    h.publish("turn_start", "t1", user_message_id=1, continue_message_id=None)
    h.publish("research_progress", "t1", phase="searching", searches=1, found=0, read=0, query="q1")
    h.publish("sources", "t1", kind="web", items=[{"n": 1, "title": "A", "snippet": "", "url": "https://a/"}])
    h.publish("content", "t1", delta="x", message_id=7)
    h.publish("sources", "t1", kind="web", items=[{"n": 2, "title": "B", "snippet": "b", "url": "https://b/"}])
    h.publish("research_progress", "t1", phase="reading", searches=1, found=2, read=1, url="https://b/")
    for w in "abcdef":
        h.publish("content", "t1", delta=w, message_id=9)  # a later reply: the sources are still the turn's
    snap = resumed_from_zero(h)
    assert snap["type"] == "snapshot" and snap["message_id"] == 9 and snap["content"] == "abcdef"
    assert [(s["n"], s["kind"]) for s in snap["sources"]] == [(1, "web"), (2, "web")]
    assert snap["research"] == {"phase": "reading", "searches": 1, "found": 2, "read": 1,
                                "query": "q1", "url": "https://b/"}
    assert problems(snap) == []


def test_a_snapshot_of_a_turn_without_sources_says_nothing_of_them(monkeypatch):
    monkeypatch.setattr(hubmod, "LOG_CAPACITY", 5)
    h = ChatHub("c", "e1")
    turn(h, words=[str(i) for i in range(20)])
    snap = resumed_from_zero(h)
    assert "sources" not in snap and "research" not in snap


def test_a_reader_is_told_when_it_is_falling_behind_and_not_before():
    h = ChatHub("c", "e1")
    sub = h.subscribe()
    h.publish("turn_start", "t1", user_message_id=1, continue_message_id=None)
    for i in range(hubmod.BEHIND - 2):
        h.publish("content", "t1", delta=str(i), message_id=7)
    assert not sub.behind.is_set()
    h.publish("content", "t1", delta="last", message_id=7)  # the BEHIND-th event waiting
    assert sub.behind.is_set()
    assert len(sub.pull()) == hubmod.BEHIND and not sub.behind.is_set()
    h.publish("content", "t1", delta="more", message_id=7)
    assert not sub.behind.is_set()


def test_trim_drops_an_expired_turn_but_keeps_counting(monkeypatch):
    h = ChatHub("c", "e1")
    turn(h)
    last = h.last_event_id
    h.trim()
    assert h.turn is not None  # still replayable: kept
    monkeypatch.setattr(hubmod, "FINISHED_TURN_TTL", -1.0)
    h.trim()
    assert h.turn is None and len(h._log) == 0
    sub = h.subscribe()
    assert not sub.resume(0)  # nothing retained: the socket answers with the stored snapshot
    assert h.publish("title_update", None, title="y")["event_id"] == last + 1


def test_an_old_epoch_resumes_from_the_turn_start():
    h = ChatHub("c", "e2")
    turn(h)
    sub = h.subscribe()
    sub.resume(h.last_event_id + 50, epoch="e1")
    assert "".join(e.get("delta", "") for e in sub.pull()) == "abc"


@pytest.mark.parametrize("type_, fields, said", [
    ("contents", {"delta": "a", "message_id": 7}, "unknown event type 'contents'"),
    ("content", {"delta": "a"}, "content lacks message_id"),
    ("content", {"delta": "a", "message_id": 7, "msg_id": 7}, "content has no field msg_id"),
    ("pong", {}, "pong is answered to one socket, never published"),
    ("error", {"code": "x", "message": "m", "retryable": False, "epoch": "e2"}, "error has no field epoch"),
])
def test_publish_refuses_an_event_its_definition_does_not_allow(type_, fields, said):
    h = ChatHub("c", "e1")
    sub = h.subscribe()
    with pytest.raises(ValueError) as refused:
        h.publish(type_, "t1", **fields)
    assert str(refused.value) == said
    assert h.last_event_id == 0 and sub.pull() == []  # nothing numbered, nothing logged


def test_publish_takes_optional_fields_and_every_defined_type():
    h = ChatHub("c", "e1")
    h.publish("accepted", None, request_id="r", message_id=1, queued=False, attachments=[])
    h.publish("accepted", None, request_id="r", message_id=1, queued=False, attachments=[], steer=False)
    h.publish("active_changed", None, leaf_id=4)
    assert h.last_event_id == 3
