"""The WebSocket endpoint `/ws/<chat_id>`: parse frames, dispatch commands, write events.

One writer per socket: simple-websocket's send takes no lock, so only this
handler's thread sends; a reader thread takes frames in and hands answers
over, through bounded queues that slow a flooding client down (ws_flow.py).
Events come from the chat's hub, pulled by the writer at its own pace.
"""
from __future__ import annotations

import logging
import os
import threading
import time

from flask import request
from simple_websocket import ConnectionClosed

from backend import protocol
from backend.runtime import runtime
from backend.store.db import is_busy_error, release_connection, short_connection
from backend.turns import snapshot
from backend.turns.events import make as make_event
from backend.turns.registry import CommandError
from backend.ws_flow import CLOSED_CHECK_S, Answers, Inbox
from backend.ws_frames import encode, hang_up, send_timeout, sock

log = logging.getLogger(__name__)
CLOSE_UNKNOWN_CHAT = 4404
# A socket that says nothing after connecting is sent live events after this long.
START_GRACE_S = 1.0
# Text frames go out at most this often while a model writes fast (0: no pacing). A
# model can write a thousand deltas a second; a window draws sixty frames, and text
# that grows thirty times a second reads as continuous. Holding the next text frame
# until this much time has passed since the last lets coalesce() merge what arrives
# meanwhile, so the client parses and applies one frame where it would have had thirty.
TEXT_PACE_S = 0.033  # NUMI_WS_TEXT_PACE_MS sets another, read when a socket opens
# At ordinary rates each delta goes out as soon as it comes (a hold of a few ms merges
# a burst read in one go): a model writing a hundred deltas a second must not see its
# text wait up to the text pace. The long pace starts once the deltas come faster than
# FAST_DELTAS_PER_S, and ends with the first frame whose deltas came slower.
QUICK_PACE_S = 0.008
FAST_DELTAS_PER_S = 250.0


def text_pace_s() -> float:
    """The text pace this process runs with (its environment, else TEXT_PACE_S)."""
    raw = os.environ.get("NUMI_WS_TEXT_PACE_MS")
    return float(raw) / 1000 if raw else TEXT_PACE_S
TEXT_TYPES = ("content", "reasoning")


class TextPacer:
    """How long the writer holds its next frame: see TEXT_PACE_S and QUICK_PACE_S."""

    def __init__(self, pace: float | None = None, quick: float = QUICK_PACE_S,
                 fast_rate: float = FAST_DELTAS_PER_S):
        pace = text_pace_s() if pace is None else pace
        self.fast_pace, self.quick_pace, self.fast_rate = pace, min(quick, pace), fast_rate
        self.pace = quick
        self.last: float | None = None  # when the last text frame went out (monotonic)

    def hold(self, now: float) -> float:
        return 0.0 if self.last is None else max(0.0, self.last + self.pace - now)

    def sent(self, deltas: int, now: float) -> None:
        """A frame carrying `deltas` text deltas (merged, or none) went out at `now`."""
        if not deltas:
            return
        if self.last is not None:
            rate = deltas / max(now - self.last, 1e-6)
            self.pace = self.fast_pace if rate >= self.fast_rate else self.quick_pace
        self.last = now


def coalesce(events: list[dict]) -> list[dict]:
    """Merge runs of text deltas of one message into one event (the last id stands for the run).

    Under load the writer wakes with many deltas pending; one frame for the run
    keeps a fast stream from costing a frame per token. At low rates every
    delta is sent alone, so latency is unchanged.
    """
    out: list[dict] = []
    for event in events:
        prev = out[-1] if out else None
        if (prev is not None and event["type"] in ("content", "reasoning") and prev["type"] == event["type"]
                and prev.get("message_id") == event.get("message_id") and prev["turn_id"] == event["turn_id"]):
            merged = dict(event)
            merged["delta"] = prev["delta"] + event["delta"]
            out[-1] = merged
        else:
            out.append(event)
    return out


class Connection:
    def __init__(self, ws, turns, chat_id: str):
        self.ws, self.turns, self.chat_id = ws, turns, chat_id
        self.hub = turns.hub(chat_id)
        self.sub = self.hub.subscribe()
        # Answers to this socket's frames; the reader waits while it is full (ws_flow.py).
        self.direct = Answers(self.sub.wake.set)
        self.closed = False
        self.started = threading.Event()  # set once the client said what it wants

    def serve(self) -> None:
        raw = self.ws.sock
        self.inbox = Inbox(self.ws)
        if self.ws.ping_interval:
            # A client that stops reading blocks send(); the timeout drops it (it may resume later).
            raw.settimeout(send_timeout())
        reader = threading.Thread(target=self._read, name=f"ws-read-{self.chat_id}", daemon=True)
        reader.start()
        try:
            # Live events wait for the client's first frame (or a short grace):
            # a `resume` that came after live events had been sent would replay
            # behind them and the client would see text twice or out of order.
            # Nothing is lost meanwhile; the cursor stays at the connect point.
            self.started.wait(START_GRACE_S)
            pacer = TextPacer()
            while True:
                self.sub.wake.wait()
                self.sub.wake.clear()
                if self.closed:
                    break
                hold = pacer.hold(time.monotonic())
                if hold > 0:
                    self.sub.behind.wait(hold)  # cut short before the ring could overtake it
                # Hub events first: a direct answer (an error for a frame) must not
                # overtake events the hub published before that frame was handled.
                pulled = self.sub.pull()
                events = coalesce(pulled) + self.direct.take()
                for event in events:
                    self.ws.send(encode(event))
                pacer.sent(sum(e["type"] in TEXT_TYPES for e in pulled), time.monotonic())
                if self.sub.take_resend():
                    # After the replay or the snapshot just sent, never before: published earlier, a
                    # snapshot standing in for events the ring no longer holds would fold it away.
                    self.turns.resend_questions(self.chat_id)  # published: the next pull sends it
        except (ConnectionClosed, OSError):
            pass
        finally:
            self.closed = True
            self.hub.unsubscribe(self.sub)
            self.direct.close()  # a reader waiting for room gives up
            self.inbox.close()

    def _push(self, event: dict) -> None:
        # Waits while the writer is behind: a burst of frames is answered, never dropped.
        self.direct.put(event)

    def _direct(self, type_: str, **fields) -> dict:
        """An event for this socket alone, numbered among the hub's."""
        return make_event(type_, event_id=self.hub.next_direct_id(), turn_id=None, epoch=self.hub.epoch, **fields)

    def _error(self, code: str, message: str) -> None:
        self._push(self._direct("error", code=code, message=message, retryable=False))

    def _read(self) -> None:
        while not self.closed:
            try:
                text = self.inbox.receive(timeout=CLOSED_CHECK_S)
            except ConnectionClosed:
                break
            if text is None:
                if not self.ws.connected:
                    break
                continue
            try:
                self._handle(protocol.parse(text))
            except protocol.BadFrame as exc:
                self._error("bad_request", str(exc))
            except CommandError as exc:
                self._error(exc.code, exc.message)
            except Exception as exc:
                if is_busy_error(exc):
                    self._error("db_busy", "The database is busy (another program holds it locked). "
                                           "Nothing was saved; send again in a moment.")
                    continue
                log.exception("socket command failed in chat %s", self.chat_id)
                self._error("internal", "Numi could not handle that request; the details are in the log.")
            finally:
                self.started.set()
        self.closed = True
        self.started.set()
        self.sub.wake.set()

    def _handle(self, frame: dict) -> None:
        # A socket holds no database connection while idle: sockets would otherwise
        # cost descriptors (db and -wal) each, and hit the open-file limit long before
        # threads or memory run short.
        with short_connection():
            self._dispatch(frame)

    def _dispatch(self, frame: dict) -> None:
        kind, reg, chat = frame["type"], self.turns, self.chat_id
        if kind == "ping":
            self._push(make_event("pong"))
        elif kind == "send":
            answer = reg.send(chat, frame["request_id"], frame["content"], frame.get("attachments") or [],
                              steer=frame.get("mode") == "steer", research=frame.get("research") is True,
                              compare=frame.get("compare"), image=frame.get("image") is True)
            if answer.pop("duplicate"):
                # A resend after a lost answer: repeat the answer to this socket, change nothing.
                self._push(self._direct("accepted", **answer))
        elif kind == "stop":
            reg.stop(chat, bool(frame.get("clear_queue")))
        elif kind == "resume":
            self.resume(frame["after_event_id"], frame.get("epoch"))
        elif kind == "edit":
            reg.edit(chat, frame["message_id"], frame["content"], frame.get("request_id"))
        elif kind == "regenerate":
            reg.regenerate(chat, frame["message_id"], frame.get("model_id"), frame.get("request_id"))
        elif kind == "continue":
            reg.continue_(chat)
        elif kind == "approve":
            reg.approve(chat, frame["approval_id"], frame["decision"], frame.get("reason") or "",
                        frame.get("arguments"))
        elif kind == "queue_discard":
            reg.queue_discard(chat, frame["message_id"])
        elif kind == "answer":
            reg.answer(chat, frame["question_id"], frame.get("answers"), bool(frame.get("dismissed")))
        elif kind == "execute_plan":
            reg.execute_plan(chat, frame["plan_id"], frame.get("request_id"))

    def resume(self, after_event_id: int, epoch: str | None) -> None:
        if not self.sub.resume(after_event_id, epoch):
            for snap in self._stored_snapshots():
                self._push(snap)
        # A question still waiting is sent again as a new event, after what the replay holds
        # (CONTRACT §7): the client may have missed it, or lost it with a reload. The writer
        # sends it after its next pull (Subscription.resend).
        self.sub.wake.set()

    def _stored_snapshots(self) -> list[dict]:
        """No turn is retained in memory: the newest reply as saved stands in for its events."""
        return snapshot.stored(self.hub, self.chat_id, self.turns.queue_items(self.chat_id))


@sock.route("/ws/<chat_id>")
def chat_socket(ws, chat_id):
    raw = ws.sock
    try:
        if not runtime().turns.open_chat(chat_id):
            ws.close(reason=CLOSE_UNKNOWN_CHAT, message="No chat with that id.")
            return
        connection = Connection(ws, runtime().turns, chat_id)
        start = _start_point()
        if isinstance(start, str):
            connection._error("bad_request", start)  # and the socket starts live
        elif start is not None:
            # Resuming at connect time, before any live event is sent, leaves no
            # window in which live events could overtake the replay.
            connection.resume(*start)
            connection.started.set()
        release_connection()  # the request's own; the writer never queries
        connection.serve()
    finally:
        hang_up(ws, raw)


def _start_point() -> tuple[int, str | None] | str | None:
    """`?after_event_id=N[&epoch=E]` on the upgrade URL: a resume done at connect time.

    None without one; a message for the client when the value is not a count.
    """
    value = request.args.get("after_event_id")
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 18:  # "²" is a digit int() refuses
        return "\"after_event_id\" in the address must be a whole number, 0 or more; the socket starts live."
    return int(value), request.args.get("epoch") or None
