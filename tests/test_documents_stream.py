"""What a document call publishes while the model writes it (backend/features/documents/stream.py), in process
with a clock the test moves: doc_open once the title and language are known, deltas that add up to the
content, batched by time and size, the refusals that stop a stream, and what a resumed window is sent."""
from __future__ import annotations

import json

from backend.features.documents import stream as st
from backend.features.documents.stream import DocStreams


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Timers:
    """The timers a DocStreams asks for, run when the test says."""

    def __init__(self):
        self.due: list[tuple[float, object]] = []

    def __call__(self, delay: float, fn) -> None:
        self.due.append((delay, fn))

    def fire(self) -> None:
        due, self.due = self.due, []
        for _delay, fn in due:
            fn()


def make(docs: dict | None = None, timers: Timers | None = None):
    events: list[tuple[str, dict]] = []
    clock = Clock()
    streams = DocStreams(lambda type_, **fields: events.append((type_, fields)) or {},
                         lambda doc_id: (docs or {}).get(doc_id), clock, timers or Timers())
    return streams, events, clock


def deltas(events, call_id=None) -> str:
    return "".join(f["delta"] for t, f in events if t == "doc_delta" and (call_id is None or f["call_id"] == call_id))


def feed(streams, clock, text: str, size: int, call_id="c1", name="doc_create", step: float = 0.0) -> None:
    for i in range(0, len(text), size):
        streams.piece(call_id, name, text[i:i + size])
        clock.now += step


def test_a_create_opens_once_title_and_language_are_known_and_its_deltas_add_up():
    streams, events, clock = make()
    args = json.dumps({"title": "  Rates\n report ", "language": "PY", "content": "line\n" * 500})
    feed(streams, clock, args[:30], 5)
    assert not any(t == "doc_open" for t, _ in events)  # the language is not known yet
    feed(streams, clock, args[30:], 7, step=0.001)
    opened = [f for t, f in events if t == "doc_open"]
    assert len(opened) == 1
    doc_id = opened[0]["doc_id"]
    assert opened[0] == {"doc_id": doc_id, "title": "Rates report", "language": "python", "call_id": "c1"}
    assert doc_id.startswith("doc_") and len(doc_id) == 20 and streams.reserved("c1") == doc_id
    assert deltas(events) == "line\n" * 500  # the content's end sent what was held
    assert all(f["doc_id"] == doc_id for t, f in events if t == "doc_delta")
    assert [t for t, _ in events][0] == "doc_open"


def test_content_written_before_the_title_waits_for_the_open():
    streams, events, clock = make()
    feed(streams, clock, '{"content": "early text", "language": "markdown", ', 4)
    assert events == []
    feed(streams, clock, '"title": "T"}', 3)
    assert [t for t, _ in events] == ["doc_open", "doc_delta"]
    assert deltas(events) == "early text"


def test_without_a_language_a_create_opens_as_plain_text_when_its_arguments_end():
    streams, events, clock = make()
    feed(streams, clock, '{"title": "T", "content": "abc"', 4)
    assert events == []
    feed(streams, clock, "}", 1)
    assert events[0] == ("doc_open", {"doc_id": events[0][1]["doc_id"], "title": "T", "language": "text",
                                      "call_id": "c1"})
    assert deltas(events) == "abc"


def test_deltas_come_at_most_every_50_ms_or_2_kb():
    streams, events, clock = make()
    streams.piece("c1", "doc_create", '{"title": "T", "language": "text", "content": "')
    # 1 000 tokens a second, 4 characters each, for 2 seconds: 2 000 pieces.
    for _ in range(2000):
        streams.piece("c1", "doc_create", "abcd")
        clock.now += 0.001
    sent = [f for t, f in events if t == "doc_delta"]
    assert 30 <= len(sent) <= 45, len(sent)  # ~ one per 50 ms, not 2 000
    assert all(len(f["delta"]) <= st.BATCH_CHARS for f in sent)
    # A fast model: 2 000 pieces of 40 characters within 10 ms: by size, ~2 KB each.
    streams2, events2, clock2 = make()
    streams2.piece("c2", "doc_create", '{"title": "T", "language": "text", "content": "')
    for _ in range(2000):
        streams2.piece("c2", "doc_create", "x" * 40)
        clock2.now += 0.000005
    sizes = [len(f["delta"]) for t, f in events2 if t == "doc_delta"]
    assert 35 <= len(sizes) <= 41 and max(sizes) < st.BATCH_CHARS + 40, (len(sizes), max(sizes))


def test_what_is_held_goes_out_when_the_content_ends_or_the_call_is_about_to_run():
    streams, events, clock = make()
    feed(streams, clock, '{"title": "T", "language": "text", "content": "held', 100)
    assert [t for t, _ in events] == ["doc_open"]  # within 50 ms of the open: held back
    clock.now += 0.01
    feed(streams, clock, " more", 100)
    assert deltas(events) == ""
    streams.starting("c1")
    assert deltas(events) == "held more"
    feed(streams, clock, ' and more"}', 100)
    assert deltas(events) == "held more"  # the call runs: its stream is over


def test_text_held_back_goes_out_when_the_model_pauses():
    timers = Timers()
    streams, events, clock = make(timers=timers)
    feed(streams, clock, '{"title": "T", "language": "text", "content": "first', 100)
    assert deltas(events) == "" and len(timers.due) == 1
    delay, _ = timers.due[0]
    assert 0 < delay <= st.BATCH_S
    clock.now += 0.02
    feed(streams, clock, " second", 100)
    assert len(timers.due) == 1  # one timer at a time
    clock.now += 0.04  # the model pauses: the timer comes 50 ms after the open
    timers.fire()
    assert deltas(events) == "first second" and timers.due == []  # nothing left to send: no new timer
    clock.now += 0.01
    feed(streams, clock, " third", 100)
    clock.now += 0.01
    timers.fire()  # not due yet (20 ms after the last delta): it comes again later
    assert deltas(events) == "first second" and len(timers.due) == 1
    clock.now += 0.05
    timers.fire()
    assert deltas(events) == "first second third"
    streams.starting("c1")
    feed(streams, clock, ' late"}', 100)
    timers.fire()
    assert deltas(events) == "first second third"


def test_streams_that_cannot_succeed_open_nothing():
    for args in ('{"title": "", "language": "text", "content": "x"}',
                 '{"title": "' + "t" * 201 + '", "language": "text", "content": "x"}',
                 '{"title": 5, "language": "text", "content": "x"}',
                 '{"title": "T", "language": 1, "content": "x"}',
                 '{"language": "text", "content": "x"}',
                 'not json at all'):
        streams, events, clock = make()
        feed(streams, clock, args, 3)
        assert events == [], args
        assert streams.reserved("c1") is None


def test_content_past_a_megabyte_stops_the_stream():
    streams, events, clock = make()
    streams.piece("c1", "doc_create", '{"title": "T", "language": "text", "content": "')
    chunk = "é" * 50_000  # 100 000 bytes
    for _ in range(11):
        streams.piece("c1", "doc_create", chunk)
        clock.now += 1
    sent = deltas(events)
    assert len(sent.encode()) <= 1_048_576 and sent == chunk * 10
    streams.starting("c1")
    assert deltas(events) == sent


def test_an_edit_with_whole_content_streams_into_its_document():
    docs = {"doc_aaaaaaaaaaaaaaaa": ("Notes", "markdown")}
    streams, events, clock = make(docs)
    feed(streams, clock, '{"doc_id": "doc_aaaaaaaaaaaaaaaa", "content": "new ', 6, name="doc_edit")
    feed(streams, clock, 'text"}', 6, name="doc_edit")
    assert events[0] == ("doc_open", {"doc_id": "doc_aaaaaaaaaaaaaaaa", "title": "Notes", "language": "markdown",
                                      "call_id": "c1"})
    assert deltas(events) == "new text"
    assert streams.reserved("c1") is None  # an edit reserves no new id


def test_edits_that_do_not_stream():
    docs = {"doc_aaaaaaaaaaaaaaaa": ("Notes", "markdown")}
    for args in ('{"doc_id": "doc_aaaaaaaaaaaaaaaa", "find": "a", "replace": "b"}',
                 '{"doc_id": "doc_bbbbbbbbbbbbbbbb", "content": "not this chat\'s"}',
                 '{"find": "a", "doc_id": "doc_aaaaaaaaaaaaaaaa", "content": "both"}'):
        streams, events, clock = make(docs)
        feed(streams, clock, args, 5, name="doc_edit")
        assert events == [], args
    streams, events, clock = make(docs)
    feed(streams, clock, '{"doc_id": "doc_aaaaaaaaaaaaaaaa", "replace": "b"}', 5, name="other_tool")
    assert events == []


def test_a_snapshot_carries_the_texts_still_being_written_and_drops_them_when_their_call_ends():
    from backend.turns.hub import ChatHub

    hub = ChatHub("c_x", "epoch1")
    publish = lambda type_, **fields: hub.publish(type_, "t_1", **fields)  # noqa: E731
    clock = Clock()
    streams = DocStreams(publish, lambda doc_id: ("Old", "text") if doc_id == "doc_aaaaaaaaaaaaaaaa" else None,
                         clock, Timers())
    publish("turn_start", user_message_id=1, continue_message_id=None)
    feed(streams, clock, '{"title": "New", "language": "html", "content": "<p>one', 4, call_id="a", step=0.06)
    feed(streams, clock, '{"doc_id": "doc_aaaaaaaaaaaaaaaa", "content": "whole', 4, call_id="b", name="doc_edit",
         step=0.06)
    snap = hub._snapshots(hub.turn)[0]
    shown = {d["call_id"]: d for d in snap["documents"]}
    assert shown["a"] == {"doc_id": streams.reserved("a"), "title": "New", "language": "html", "call_id": "a",
                          "content": "<p>one"}
    assert shown["b"] == {"doc_id": "doc_aaaaaaaaaaaaaaaa", "title": "Old", "language": "text", "call_id": "b",
                          "content": "whole"}
    # The call that made its version, and the one that failed, are no longer open.
    streams.starting("a")
    publish("doc_update", doc_id=streams.reserved("a"), version=1, author="model", call_id="a")
    publish("tool_end", call_id="b", name="doc_edit", ok=False, output="no", duration_ms=1)
    assert "documents" not in hub._snapshots(hub.turn)[0]
    feed(streams, clock, '{"title": "Third", "language": "text", "content": "x', 100, call_id="c")
    assert [d["call_id"] for d in hub._snapshots(hub.turn)[0]["documents"]] == ["c"]
    publish("turn_end", status="cancelled")
    assert "documents" not in hub._snapshots(hub.turn)[0]
