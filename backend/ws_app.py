"""The WebSocket endpoint `/ws/_app`: app-wide chat events for every window's chat list.

The frames come from backend/app_events.py. Like `/ws/<chat_id>`, one writer
per socket (this handler's thread) and a reader thread for the client's
frames; the token, Host and Origin checks already ran in security.py's
before_request, as for every `/ws/*` upgrade. The rule is static, so werkzeug
prefers it to `/ws/<chat_id>` (chat ids start with "c_" anyway).
"""
from __future__ import annotations

import json
import logging
import threading

from simple_websocket import ConnectionClosed

from backend.runtime import runtime
from backend.store.db import release_connection
from backend.turns.events import APP_EVENTS, make
from backend.ws_flow import CLOSED_CHECK_S, Inbox
from backend.ws_frames import encode, hang_up, send_timeout, sock

log = logging.getLogger(__name__)
# The first frame, queued before any change can be: from here on nothing is
# missed, so a client reads GET /api/chats once after it (changes made before
# it arrived are in that list).
READY = make("ready", APP_EVENTS)


@sock.route("/ws/_app")
def app_socket(ws):
    raw = ws.sock
    release_connection()  # the request's own: this socket never queries
    events = runtime().app_events
    sub = events.subscribe(first=READY)
    try:
        _serve(ws, raw, sub)
    except (ConnectionClosed, OSError):
        pass
    finally:
        events.unsubscribe(sub)
        hang_up(ws, raw)


def _serve(ws, raw, sub) -> None:
    inbox = Inbox(ws)
    if ws.ping_interval:
        # A client that stops reading blocks send(); past the timeout it is dropped
        # (its queue meanwhile stays bounded, and reconnecting re-reads the list).
        raw.settimeout(send_timeout())
    reader = threading.Thread(target=_read, args=(ws, inbox, sub), name="ws-read-app", daemon=True)
    reader.start()
    try:
        while True:
            frames = sub.take()
            if not frames:
                return  # closed: the client left, or the server is shutting down
            for frame in frames:
                ws.send(encode(frame))
    finally:
        inbox.close()


def _read(ws, inbox, sub) -> None:
    """Answer `ping`; anything else is a bad_request (the socket stays open)."""
    while not sub.closed:
        try:
            text = inbox.receive(timeout=CLOSED_CHECK_S)
        except ConnectionClosed:
            break
        if text is None:
            if not ws.connected:
                break
            continue
        problem = _check(text)
        # reply, not put: a burst of pings waits for the writer instead of being dropped for a resync.
        sub.reply(make("pong", APP_EVENTS) if problem is None
                  else make("error", APP_EVENTS, code="bad_request", message=problem, retryable=False))
    sub.close()  # wakes the writer, which ends the socket


def _check(text) -> str | None:
    """None for a valid `ping` frame, else a sentence saying what is wrong."""
    try:
        frame = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):  # nesting deep enough to exhaust the parser's stack too
        return "The frame is not valid JSON."
    if not isinstance(frame, dict):
        return "Frames must be text holding one JSON object."
    if frame.get("type") != "ping":
        return f"Unknown frame type {frame.get('type')!r}; this socket only takes ping."
    return None
