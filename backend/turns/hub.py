"""Per-chat event hubs: the numbered event log that sockets read from.

Producers (turn threads) only append; each socket's own handler thread pulls
what it has not sent yet. A slow or silent socket therefore never slows a turn
and never grows memory: the log is a bounded ring, and a reader that fell
behind it gets one `snapshot` of the turn instead of the events it missed.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Any

from backend.core.status import COMPLETE, COMPLETED, ERROR, FAILED, STREAMING
from backend.turns import snapshot
from backend.turns.events import CHAT_EVENTS, ResearchState, refusal

# Events kept per chat (the contract asks for at least 500). A reader's writer thread
# can stall (the GIL, a full socket) while a local model writes a hundred thousand
# deltas a second; a smaller log let the relay benchmark's readers fall off its end
# mid-reply (docs/BENCHMARKS.md). A full log is held only while a turn is retained.
LOG_CAPACITY = 16384
# A socket holding its next frame back (ws.py paces text) stops waiting once this many
# events wait for it: a pace must never be what pushes a reader past the ring's end
# (a model can write thousands of deltas in one pace, and a snapshot of the whole
# reply would then stand in for them).
BEHIND = LOG_CAPACITY // 8
FINISHED_TURN_TTL = 180.0  # seconds a finished turn stays replayable


# A research turn's newest progress (backend/features/research/), as a snapshot carries it.
RESEARCH_FIELDS = frozenset(ResearchState.__annotations__)
# What a snapshot folds of the documents feature's events: the texts still being written.
DOCUMENT_EVENTS = frozenset({"doc_open", "doc_delta", "doc_update", "tool_end"})


class ReplyView:
    """One reply's message as it streams: its text, reasoning and tool calls so far."""

    __slots__ = ("message_id", "content", "reasoning", "changes", "tool_calls")

    def __init__(self, message_id: int | None = None):
        self.message_id = message_id
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.changes = 0  # text deltas applied to this message so far
        self.tool_calls: list[dict] = []

    def text(self) -> tuple[str, str]:
        """The message's content and reasoning so far (joined once: later calls add only what is new)."""
        content, reasoning = "".join(self.content), "".join(self.reasoning)
        self.content, self.reasoning = [content] if content else [], [reasoning] if reasoning else []
        return content, reasoning


class TurnView:
    """The in-progress state of a turn's current assistant message (what a snapshot shows); a
    compare's turn (CONTRACT §10) keeps one per model, keyed by the `model_id` its events carry.

    The server's one copy of a streaming reply's text: the turn saves its row from here
    (runner.Partial), so what is saved and what a snapshot shows come from the same deltas.
    """

    __slots__ = ("turn_id", "first_event_id", "replies", "compare", "status", "ended_at", "sources",
                 "research", "documents")

    def __init__(self, turn_id: str | None, first_event_id: int, compare: list[dict] | None = None):
        self.turn_id, self.first_event_id = turn_id, first_event_id
        self.compare = compare  # a compare's [{"model_id", "message_id"}], in its columns' order
        self.replies: dict[str | None, ReplyView] = (
            {c["model_id"]: ReplyView(c["message_id"]) for c in compare} if compare else {None: ReplyView()})
        # A MessageStatus; after its turn_end, that event's outcome as a message status (LIMIT stays as is).
        self.status: str = STREAMING
        self.ended_at: float | None = None
        # The turn's, not the message's: its sources and research progress span its replies.
        self.sources: list[dict] = []
        self.research: dict | None = None
        # Document texts the turn's calls are writing (backend/features/documents/), by call id:
        # opened by doc_open, grown by doc_delta, done at the call's doc_update or tool_end.
        self.documents: dict[str, dict] = {}

    @property
    def reply(self) -> ReplyView:
        """The reply a single-model turn streams (a compare's first column)."""
        return next(iter(self.replies.values()))

    def apply(self, event: dict) -> None:
        kind = event["type"]
        if kind in ("content", "reasoning", "tool_preparing", "tool_start"):
            key = event.get("model_id") if self.compare else None
            reply = self.replies.get(key)
            if reply is None:
                return  # not one of the compare's models (never published so)
            if event.get("message_id") != reply.message_id:
                reply = self.replies[key] = ReplyView(event.get("message_id"))
            if kind == "content":
                reply.content.append(event["delta"])
                reply.changes += 1
            elif kind == "reasoning":
                reply.reasoning.append(event["delta"])
                reply.changes += 1
            elif kind == "tool_start":
                reply.tool_calls.append({"id": event["call_id"], "name": event["name"],
                                         "arguments": event["arguments"]})
        elif kind == "sources":
            self.sources.extend({**item, "kind": event["kind"]} for item in event["items"])
        elif kind == "research_progress":
            self.research = {**(self.research or {}),
                             **{k: v for k, v in event.items() if k in RESEARCH_FIELDS}}
        elif kind in DOCUMENT_EVENTS:
            self._document(kind, event)
        elif kind == "turn_end":
            self.status = {COMPLETED: COMPLETE, FAILED: ERROR}.get(event["status"], event["status"])
            self.ended_at = time.monotonic()
            self.documents.clear()

    def find(self, message_id: int) -> ReplyView | None:
        return next((r for r in self.replies.values() if r.message_id == message_id), None)

    def _document(self, kind: str, event: dict) -> None:
        call_id = event.get("call_id")
        if not isinstance(call_id, str):
            return  # a person's doc_update: no call of the turn
        if kind == "doc_open":
            self.documents[call_id] = {"doc_id": event["doc_id"], "title": event["title"],
                                       "language": event["language"], "call_id": call_id,
                                       "content": [event.get("content", "")]}
        elif kind == "doc_delta" and call_id in self.documents:
            self.documents[call_id]["content"].append(event["delta"])
        else:  # its doc_update or tool_end: the version is saved, or the call failed
            self.documents.pop(call_id, None)

    def open_documents(self) -> list[dict]:
        """The documents being written, as a snapshot carries them (each text joined once)."""
        out = []
        for doc in self.documents.values():
            doc["content"] = ["".join(doc["content"])]
            out.append({**doc, "content": doc["content"][0]})
        return out


def _log_capacity() -> int:
    """LOG_CAPACITY, or NUMI_EVENT_LOG_CAPACITY (read per hub: a test shrinks it in a server it
    starts, to see a reader fall off the log's end)."""
    raw = os.environ.get("NUMI_EVENT_LOG_CAPACITY", "")
    return max(16, int(raw)) if raw.isdigit() else LOG_CAPACITY


class Subscription:
    def __init__(self, hub: "ChatHub", cursor: int):
        self.hub = hub
        self.cursor = cursor  # the last event id this socket has been given
        self.wake = threading.Event()
        self.wake.set()
        self.behind = threading.Event()  # BEHIND events or more wait for this socket
        # Set when it resumes and when a snapshot stands in for events it fell behind: what waits
        # for the person (a question) is then sent again, since a snapshot does not carry it.
        self.resend = False

    def pull(self) -> list[dict]:
        return self.hub._pull(self)

    def take_resend(self) -> bool:
        """Whether what waits for the person must be sent again now (once per resume or snapshot)."""
        with self.hub._lock:
            wanted, self.resend = self.resend, False
            return wanted

    def resume(self, after_event_id: int, epoch: str | None = None) -> bool:
        """Point the cursor at what the client missed; False when no turn is retained.

        An id from another epoch (the server restarted) means nothing here: the
        client gets the retained turn from its start.
        """
        if epoch is not None and epoch != self.hub.epoch:
            after_event_id = 0
        return self.hub._resume(self, after_event_id)


class ChatHub:
    def __init__(self, chat_id: str, epoch: str):
        self.chat_id, self.epoch = chat_id, epoch
        self._lock = threading.Lock()
        self._log: deque[dict] = deque(maxlen=_log_capacity())
        self._last_id = 0
        self._subs: set[Subscription] = set()
        self.turn: TurnView | None = None

    @property
    def last_event_id(self) -> int:
        return self._last_id

    def publish(self, type_: str, turn_id: str | None = None, **fields) -> dict:
        """Number the event and log it for every reader; ValueError for a type or field not in events.py."""
        # Read at each publish: the features' events join the table when they register.
        spec = CHAT_EVENTS.get(type_)
        # Runs per delta: one set comparison when the event has just its required fields
        # (every delta), two when it has optional ones; the details only when it fails.
        # A hub numbers and logs every chat event but those without an event_id (pong).
        if spec is None or not spec.common or (fields.keys() != spec.required_keys
                                               and not spec.required_keys <= fields.keys() <= spec.keys):
            raise ValueError(f"{type_} is answered to one socket, never published"
                             if spec is not None and not spec.common else refusal(type_, fields))
        with self._lock:
            self._last_id += 1
            event = {"type": type_, "event_id": self._last_id, "turn_id": turn_id, "epoch": self.epoch, **fields}
            if type_ == "turn_start":
                self.turn = TurnView(turn_id, self._last_id, fields.get("compare"))
            if self.turn is not None and turn_id == self.turn.turn_id:
                self.turn.apply(event)
            self._log.append(event)
            subs = list(self._subs)
        for sub in subs:
            # Setting an already-set Event still takes its lock and notifies; per
            # token that adds up. The writer clears the flag before it pulls, so
            # a flag seen set means this event will be in its next pull.
            if not sub.wake.is_set():
                sub.wake.set()
            if event["event_id"] - sub.cursor >= BEHIND and not sub.behind.is_set():
                sub.behind.set()
        return event

    def reply_text(self, message_id: int, seen: int | None = None) -> tuple[str, str, int] | None:
        """The streaming message's content, reasoning and count of deltas so far; None when the
        running turn streams no such message, or when its count is still `seen`."""
        with self._lock:
            reply = self.turn.find(message_id) if self.turn is not None else None
            if reply is None or reply.changes == seen:
                return None
            return (*reply.text(), reply.changes)

    def next_direct_id(self) -> int:
        """An id for an event meant for one socket only (a bad_request answer)."""
        with self._lock:
            self._last_id += 1
            return self._last_id

    def subscribe(self) -> Subscription:
        with self._lock:
            sub = Subscription(self, self._last_id)
            self._subs.add(sub)
            return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs.discard(sub)

    @property
    def subscriber_count(self) -> int:
        return len(self._subs)

    def trim(self) -> None:
        """Forget a finished turn's events once they are no longer replayable.

        Event ids keep counting (they must only grow within this process); only
        the log goes, so a long day of chats does not keep every token in memory.
        """
        with self._lock:
            turn = self.turn
            if turn is not None and self._retained_turn() is None:
                self._log.clear()
                self.turn = None

    def _retained_turn(self) -> TurnView | None:
        turn = self.turn
        if turn is None:
            return None
        if turn.ended_at is not None and time.monotonic() - turn.ended_at > FINISHED_TURN_TTL:
            return None
        return turn

    def _resume(self, sub: Subscription, after_event_id: int) -> bool:
        with self._lock:
            sub.resend = True
            turn = self._retained_turn()
            if turn is None:
                sub.cursor = self._last_id
                return False
            sub.cursor = max(after_event_id, turn.first_event_id - 1) if after_event_id else turn.first_event_id - 1
            sub.cursor = min(sub.cursor, self._last_id)
        sub.wake.set()
        return True

    def _pull(self, sub: Subscription) -> list[dict]:
        with self._lock:
            sub.behind.clear()
            if sub.cursor >= self._last_id:
                return []
            oldest = self._log[0]["event_id"] if self._log else self._last_id + 1
            if sub.cursor < oldest - 1:
                # Fell behind the ring: one snapshot stands in for every missed event.
                sub.cursor = self._last_id
                sub.resend = True
                return self._snapshots(self.turn) if self.turn is not None else []
            events = []
            for event in reversed(self._log):  # a pull is usually a few events: walk from the end
                if event["event_id"] <= sub.cursor:
                    break
                events.append(event)
            events.reverse()
            sub.cursor = self._last_id
            return events

    def _snapshots(self, turn: TurnView) -> list[dict]:
        """The turn's state as snapshots: one, or a compare's one per reply (each with its model_id)."""
        extra: dict[str, Any] = {"sources": list(turn.sources)} if turn.sources else {}
        if turn.research is not None:
            extra["research"] = dict(turn.research)
        if turn.documents:
            extra["documents"] = turn.open_documents()
        out = []
        for key, reply in turn.replies.items():
            content, reasoning = reply.text()
            model = {"model_id": key} if key is not None else {}
            out.append(snapshot.build(self, turn.turn_id, reply.message_id, content, reasoning,
                                      list(reply.tool_calls), turn.status, **extra, **model))
        return out
