"""`tool_progress` events of running calls: the newest state, at most four times a second.

A call reports as often as it likes (each chunk of a command's output, each MCP
progress notification); a client needs only what the tool row shows: the time
so far, the last lines of output, the latest progress figures. So a call's
reports are merged, published at most every INTERVAL seconds, and the newest
state left over is published when the interval is up: nothing is lost but the
states in between. Nothing is published in a call's first INTERVAL (a quick
call's row needs no progress) nor after its `tool_end`.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from typing import Callable

INTERVAL = 0.25  # seconds between two events of one call
MAX_LINES, MAX_CHARS = 20, 2_000  # the output an event carries: its last lines

log = logging.getLogger(__name__)


def _number(value) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def last_lines(text: str) -> str:
    """The end of `text` as a terminal would show it: at most MAX_LINES lines and MAX_CHARS
    characters, each line as its last carriage return left it (a progress bar redrawn)."""
    kept = text[-MAX_CHARS:]
    ended = kept.endswith("\n")
    lines = kept.split("\n")
    if ended:
        lines.pop()
    lines = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines[-MAX_LINES:]]
    return "\n".join(lines) + ("\n" if ended else "")


class CallProgress:
    """One running call: what it reported last, and when its last event went out."""

    def __init__(self, call_id: str, name: str, publish: Callable[..., object],
                 clock: Callable[[], float] = time.monotonic):
        self.call_id, self.name = call_id, name
        self._publish, self._clock = publish, clock
        self._lock = threading.Lock()
        self._started = self._sent = clock()
        self._output = ""  # the kept end of what it printed (more than an event shows)
        self._figures: dict = {}  # progress, total, message (MCP)
        self._pending = False
        self._timer: threading.Timer | None = None
        self._closed = False

    def report(self, output=None, progress=None, total=None, message=None) -> None:
        output = output if isinstance(output, str) else ""
        progress = _number(progress)
        with self._lock:
            if self._closed:
                return
            if output:
                self._output = (self._output + output)[-2 * MAX_CHARS:]
            if progress is not None:
                # MCP: progress must increase; a figure going back is a stale notification.
                if progress <= self._figures.get("progress", -math.inf):
                    if not output:
                        return
                else:
                    self._figures = {"progress": progress, "total": _number(total),
                                     "message": message if isinstance(message, str) else ""}
            elif not output:
                return
            self._pending = True
            self._send_or_wait()

    def close(self) -> None:
        """The call ended: nothing more is published for it (its `tool_end` says the rest)."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _send_or_wait(self) -> None:
        """Under the lock: send what is pending now if INTERVAL has passed, else once it has."""
        wait = self._sent + INTERVAL - self._clock()
        if wait > 0:
            if self._timer is None:
                self._timer = threading.Timer(wait, self._flush)
                self._timer.daemon = True
                self._timer.start()
            return
        if self._timer is not None:
            # A timer that is late (a loaded machine) must not send again right after this.
            self._timer.cancel()
            self._timer = None
        self._send()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._pending and not self._closed:
                try:
                    # The timer may have run after a send in report() anyway: wait again then.
                    self._send_or_wait()
                except Exception:
                    log.exception("progress of call %s could not be published", self.call_id)

    def _send(self) -> None:
        # Under the lock, so close() cannot slip a tool_end in before this event.
        now = self._clock()
        fields: dict = {"elapsed_ms": int((now - self._started) * 1000)}
        if self._output:
            fields["output"] = last_lines(self._output)
        fields.update(self._figures)
        self._publish("tool_progress", call_id=self.call_id, name=self.name, **fields)
        self._sent, self._pending = now, False


class Progress:
    """The running calls of one turn, by call id."""

    def __init__(self, publish: Callable[..., object]):
        self._publish = publish
        self._calls: dict[str, CallProgress] = {}
        self._lock = threading.Lock()

    def start(self, call_id: str, name: str) -> None:
        with self._lock:
            self._calls[call_id] = CallProgress(call_id, name, self._publish)

    def report(self, call_id: str, fields: dict) -> None:
        """What a call reported; never raises into the tool that reported it."""
        with self._lock:
            call = self._calls.get(call_id)
        if call is None:
            return
        try:
            call.report(**{k: fields.get(k) for k in ("output", "progress", "total", "message")})
        except Exception:
            log.exception("progress of call %s could not be published", call_id)

    def end(self, call_id: str) -> None:
        with self._lock:
            call = self._calls.pop(call_id, None)
        if call is not None:
            call.close()
