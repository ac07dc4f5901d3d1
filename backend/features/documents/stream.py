"""A document's text published while the model writes the call that makes it (CONTRACT §9 events).

Each `doc_create` call, and each `doc_edit` call with a whole `content`, is read as its argument
JSON arrives (partial_json.py). Once a create's title and language are known, the document's id
is reserved (the run then uses it) and `doc_open` {doc_id, title, language, call_id} goes out;
an edit opens once its doc_id names a document of this chat and its `content` has begun (a
find/replace edit is not streamed). Then `doc_delta` {doc_id, delta, call_id} carries the
content as it arrives, batched: at most one event per BATCH_S seconds or per BATCH_CHARS
characters (a model writing 1 000 tokens a second makes about 20 events a second, not 1 000),
and at once when the content's string ends or the call is about to run. Text held back goes out
BATCH_S after the last event even when the model pauses (a timer: the next piece may be long in
coming). A call's deltas add up
to its content: a create's whole text, an edit's whole new text.

A stream stops (no more events) when its call cannot succeed: a title that is no text, empty or
over the limit, content past 1 MB, a document that is not this chat's, broken JSON. The run then
fails, and the client drops what it showed on the call's `tool_end` with `ok: false`.

A window that resumes gets these events again by the turn's replay; one that fell behind the
event log gets a snapshot, which carries each text still being written (`documents`:
backend/turns/hub.py folds these events for it), and the deltas after it go on from there.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from backend.features.documents import tools
from backend.features.documents.partial_json import PartialObject
from backend.features.documents.store import new_id

BATCH_S = 0.05
BATCH_CHARS = 2048
NEVER = ("", "")  # what `_create_shown` and `_edit_shown` give for a call that cannot succeed


class _Call:
    """One call's stream."""

    def __init__(self, call_id: str, name: str):
        self.call_id, self.name = call_id, name
        keys = ("title", "language", "content") if name == tools.CREATE else ("doc_id", "content")
        self.reader = PartialObject(keys)
        self.doc_id: str | None = None
        self.opened = False
        self.stopped = False  # publishes nothing more (it cannot succeed, or it ran)
        self.pending: list[str] = []  # content read but not published
        self.pending_chars = 0
        self.size = 0  # its bytes of UTF-8
        self.last = 0.0  # when its last event went out


def _timer(delay: float, fn: Callable[[], None]) -> None:
    timer = threading.Timer(delay, fn)
    timer.daemon = True
    timer.start()


class DocStreams:
    """The streams of one turn's document calls. `publish(type, **fields)` is the turn's;
    `lookup(doc_id)` gives (title, language) of a document of the turn's chat, or None;
    `schedule(delay, fn)` runs fn later on another thread (what sends held text in a pause)."""

    def __init__(self, publish: Callable[..., dict], lookup: Callable[[str], tuple[str, str] | None],
                 clock: Callable[[], float] = time.monotonic,
                 schedule: Callable[[float, Callable[[], None]], None] = _timer):
        self.publish, self.lookup, self.clock, self.schedule = publish, lookup, clock, schedule
        self._calls: dict[str, _Call] = {}
        # The turn's thread reads the arguments, a timer's sends held text: one at a time, and
        # publishing inside, so each call's deltas go out in order.
        self._lock = threading.Lock()
        self._armed = False  # a timer is due

    def piece(self, call_id: str, name: str, delta: str) -> None:
        """A piece of a call's arguments."""
        if name not in (tools.CREATE, tools.EDIT):
            return
        with self._lock:
            call = self._calls.get(call_id)
            if call is None:
                call = self._calls[call_id] = _Call(call_id, name)
            if call.stopped:
                return
            for key, text in call.reader.feed(delta):
                if key == "content":
                    self._read(call, text)
            reader = call.reader
            if not call.opened and not call.stopped:
                self._open(call)
            if call.opened and not call.stopped:
                self._push(call, force="content" in reader.ended or reader.closed)
            if reader.broken:
                call.stopped = True

    def reserved(self, call_id: str) -> str | None:
        """The document id a create's stream reserved (its doc_open named it), or None."""
        with self._lock:
            call = self._calls.get(call_id)
            return call.doc_id if call is not None and call.name == tools.CREATE and call.opened else None

    def starting(self, call_id: str) -> None:
        """The call is about to run: what is still held goes out, and the stream ends."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None:
                return
            if call.opened and not call.stopped:
                self._push(call, force=True)
            call.stopped = True

    def _due(self) -> None:
        """The timer: send what was held back BATCH_S ago or more."""
        with self._lock:
            self._armed = False
            now = self.clock()
            for call in self._calls.values():
                if call.opened and not call.stopped and call.pending and now - call.last >= BATCH_S * 0.99:
                    self._push(call, force=True)
            self._arm()

    def _arm(self) -> None:
        """Have the timer come when the oldest held text is due (inside the lock)."""
        waiting = [c.last for c in self._calls.values() if c.opened and not c.stopped and c.pending]
        if waiting and not self._armed:
            self._armed = True
            self.schedule(max(0.0, min(waiting) + BATCH_S - self.clock()), self._due)

    def _read(self, call: _Call, text: str) -> None:
        call.size += len(text.encode("utf-8", "surrogatepass"))
        if call.size > tools.CONTENT_MAX_BYTES:
            call.stopped = True  # the run refuses it: nothing past the limit goes out
            return
        call.pending.append(text)
        call.pending_chars += len(text)

    def _open(self, call: _Call) -> None:
        reader = call.reader
        if call.name == tools.CREATE:
            shown = self._create_shown(reader)
        else:
            shown = self._edit_shown(call, reader)
        if shown is None:
            return
        if shown is NEVER:
            call.stopped = True
            return
        title, language = shown
        if call.name == tools.CREATE:
            call.doc_id = new_id()
        call.opened = True
        call.last = self.clock()
        self.publish("doc_open", doc_id=call.doc_id, title=title, language=language, call_id=call.call_id)

    @staticmethod
    def _create_shown(reader: PartialObject) -> tuple[str, str] | None:
        """A create's title and language once known; NEVER when it cannot succeed; None: not yet."""
        if "title" in reader.not_text or "language" in reader.not_text:
            return NEVER
        language_known = "language" in reader.ended or (reader.closed and "language" not in reader.seen)
        if "title" not in reader.ended or not language_known:
            return NEVER if reader.closed else None
        title = tools.clean_title(reader.text("title"))
        if not title or len(title) > tools.TITLE_MAX:
            return NEVER
        language, _ = tools.language_of({"language": reader.text("language")})
        return title, language

    def _edit_shown(self, call: _Call, reader: PartialObject) -> tuple[str, str] | None:
        """An edit's document's title and language once it is known to stream; NEVER when it will not."""
        if {"find", "replace"} & reader.seen or reader.not_text:
            return NEVER
        if "doc_id" not in reader.ended or "content" not in reader.values:
            return NEVER if reader.closed else None
        found = self.lookup(reader.text("doc_id"))
        if found is None:
            return NEVER
        call.doc_id = reader.text("doc_id")
        return found

    def _push(self, call: _Call, force: bool) -> None:
        """Publish the content held back, when it is time to."""
        if not call.pending:
            return
        now = self.clock()
        if not force and call.pending_chars < BATCH_CHARS and now - call.last < BATCH_S:
            self._arm()
            return
        delta = "".join(call.pending)
        call.pending, call.pending_chars, call.last = [], 0, now
        self.publish("doc_delta", doc_id=call.doc_id, delta=delta, call_id=call.call_id)
