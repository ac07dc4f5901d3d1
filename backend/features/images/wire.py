"""What both image backends share on the wire: a request that Stop or the time cap cuts, and
answers read with a cap on their size.

A request is made with an HTTP client whose sockets can be shut down from another thread
(backend/providers' StreamControl): Stop (the turn's cancel) and the overall time cap shut them,
which wakes a read blocked on a silent server, so a call never outlives either. Bodies are read
in chunks and refused the moment they pass what an image within the limits could need, so a
server that sends too much costs at most that much memory; a Content-Length over it is refused
before anything is read.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Iterable, Iterator

from backend.core.text import well_formed
from backend.features.images import picture
from backend.providers import StreamControl, api_failure

DEFAULT_TIMEOUT_S = 300.0  # a local Stable Diffusion on a CPU, or a large GPT image, takes minutes
JSON_SLACK = 1024 * 1024  # an answer's JSON around its base64 image: the prompt echoed, settings, info
ERROR_BODY_BYTES = 64 * 1024  # of an error answer, read for its message


class DrawFailed(ValueError):
    """No image came back; the message is a sentence for the model (and the person, on the tool's card)."""

    def __init__(self, message: str):
        super().__init__(well_formed(message))


def timeout_s() -> float:
    """How long one drawing may take in all (NUMI_IMAGE_TIMEOUT_S; read at each use: tests shorten it)."""
    try:
        return max(0.1, float(os.environ.get("NUMI_IMAGE_TIMEOUT_S", DEFAULT_TIMEOUT_S)))
    except ValueError:
        return DEFAULT_TIMEOUT_S


def body_cap() -> int:
    """The most a JSON answer holding one image may weigh."""
    return picture.max_base64_chars() + JSON_SLACK


class Guard:
    """One drawing's client and its cut-offs: the turn's Stop and the overall time cap both shut
    its sockets (`why` then says which came first)."""

    def __init__(self, cancel, timeout: float):
        self.control = StreamControl()
        self.timeout = timeout
        self.why: str | None = None  # "stopped" | "timeout"
        self._http = None
        self._timer = threading.Timer(timeout, self._cut, args=("timeout",))
        self._timer.daemon = True
        self._timer.start()
        self._unregister = cancel.on_cancel(lambda: self._cut("stopped")) if cancel is not None else (lambda: None)

    def client(self):
        """The drawing's httpx2 client (made once; its read timeout the whole cap)."""
        if self._http is None:
            self._http = self.control.http_client(self.timeout)
        return self._http

    def _cut(self, why: str) -> None:
        if self.why is None:
            self.why = why
        self.control.abort()

    def close(self) -> None:
        self._timer.cancel()
        self._unregister()
        if self._http is not None:
            self._http.close()


def read_capped(chunks: Iterable[bytes], length: str | None, cap: int, what: str) -> bytes:
    """A body read whole, refused (picture.NotAnImage) when its Content-Length or its bytes pass `cap`."""
    if length is not None and length.strip().isdigit() and int(length) > cap:
        raise picture.NotAnImage(picture.too_large_sentence(what))
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > cap:
            raise picture.NotAnImage(picture.too_large_sentence(what))
    return bytes(out)


def json_answer(body: bytes, what: str) -> dict:
    """The JSON object an answer is; DrawFailed when it is none."""
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        raise DrawFailed(f"{what} is not JSON{_quoted(body)}, so it holds no image.") from None
    if not isinstance(value, dict):
        raise DrawFailed(f"{what} is not a JSON object, so it holds no image.")
    return value


def sse_events(chunks: Iterable[bytes], line_cap: int, total_cap: int, what: str) -> Iterator[dict]:
    """The JSON objects of a server-sent event stream (`data:` lines; events joined by blank lines),
    each line at most `line_cap` bytes and the whole stream `total_cap`."""
    buffer, data, total, scanned = bytearray(), [], 0, 0
    for chunk in chunks:
        total += len(chunk)
        if total > total_cap:
            raise picture.NotAnImage(picture.too_large_sentence(what))
        buffer += chunk
        while True:
            end = buffer.find(b"\n", scanned)  # only what came since: a long line is searched once
            if end < 0:
                scanned = len(buffer)
                if len(buffer) > line_cap:
                    raise picture.NotAnImage(picture.too_large_sentence(what))
                break
            line = bytes(buffer[:end]).rstrip(b"\r")
            del buffer[:end + 1]
            scanned = 0
            if line.startswith(b"data:"):
                data.append(line[6:] if line.startswith(b"data: ") else line[5:])
            elif not line and data:
                yield from _event(b"\n".join(data), what)
                data = []
    if buffer.strip().startswith(b"data:"):
        line = bytes(buffer).strip()
        data.append(line[6:] if line.startswith(b"data: ") else line[5:])
    if data:
        yield from _event(b"\n".join(data), what)


def _event(payload: bytes, what: str) -> Iterator[dict]:
    if payload.strip() == b"[DONE]":
        return
    try:
        event = json.loads(payload)
    except (ValueError, RecursionError):
        raise DrawFailed(f"{what} sent an event that is not JSON{_quoted(payload)}.") from None
    if isinstance(event, dict):
        yield event


def _quoted(body: bytes) -> str:
    text = " ".join(body[:200].decode("utf-8", "replace").split())
    return f" ({text[:80]!r})" if text else ""


# The upstream's words in an error answer, and as a clause: shared with the other features that call a
# provider's API (backend/providers/api_failure.py).
upstream_message = api_failure.upstream_message
said = api_failure.said
