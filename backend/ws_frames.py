"""What the two sockets share: the Sock they register on, how long a send may block,
a frame's encoding and hanging up. `/ws/<chat_id>` (ws.py) and `/ws/_app` (ws_app.py)
import it and never each other."""
from __future__ import annotations

import json
import logging
import os
import socket

from flask_sock import Sock

from backend.core.text import well_formed
from backend.ws_flow import socket_selector

log = logging.getLogger(__name__)
sock = Sock()


def send_timeout() -> float:
    """Seconds a send may block before a client that stopped reading is dropped."""
    return float(os.environ.get("NUMI_WS_SEND_TIMEOUT", "20"))


def encode(event: dict) -> str:
    """The event as a text frame; never raises, so no event can close a socket.

    A lone surrogate (which UTF-8 cannot carry) becomes U+FFFD. An event that is not
    JSON at all (a value JSON has no form for, NaN, a cycle) goes out as an `error`
    in its place, under its event_id, so the socket and the resume cursor go on.
    """
    try:
        text = json.dumps(event, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        log.exception("a %s event could not be sent as JSON", event.get("type") if isinstance(event, dict) else "")
        return _unsendable(event)
    return well_formed(text)


def _unsendable(event) -> str:
    """An `error` frame standing in for an event that could not be encoded."""
    given = event if isinstance(event, dict) else {}
    kind = given.get("type") if isinstance(given.get("type"), str) else "event"
    common = {k: given[k] for k, types in (("event_id", int), ("turn_id", (str, type(None))), ("epoch", str))
              if k in given and isinstance(given[k], types)}
    frame = {"type": "error", **common, "code": "internal", "retryable": False,
             "message": f"Numi could not send an event ({kind[:40]}) to this window; the details are in the log. "
                        f"Reload the chat to see what was saved."}
    return well_formed(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))


def hang_up(ws, raw) -> None:
    """End the TCP connection itself once the WebSocket is over.

    werkzeug keeps the connection open after the route returns (waiting for
    another request on it), so a close frame sent by the server — too big a
    frame, a missed ping, an unknown chat — would leave the client waiting.
    """
    try:
        if ws.connected:
            ws.close()
    except Exception:
        pass
    try:
        raw.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def init_app(app) -> None:
    # simple-websocket's default selector costs a descriptor per socket.
    app.config.setdefault("SOCK_SERVER_OPTIONS", {})["selector_class"] = socket_selector()
    sock.init_app(app)
