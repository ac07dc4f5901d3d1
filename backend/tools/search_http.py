"""One HTTP request to a search backend, bounded in time and size, that Stop abandons at once.

The request runs in its own thread, as web_fetch's download does: a name lookup or a
read cannot be interrupted, only left behind, so Stop and the time cap never wait on
it. Every failure to get an HTTP answer becomes a `SearchError` with a sentence; an
HTTP answer of any status is handed back for the backend to read.
"""
from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import threading
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from email.message import Message
from itertools import accumulate
from urllib.parse import urlsplit

from backend.core.errors import Explained
from backend.core.text import well_formed

MAX_BODY_BYTES = 4 * 1024 * 1024  # a page of results is a few KB; more is not a search answer
MAX_JSON_DEPTH = 64  # arrays and objects inside each other; a page of results nests about six deep
_GRACE_S = 1.0  # past the cap, how long the request gets to hand over what it has
_USER_AGENT = "Numi web_search"


class SearchError(Explained):
    """A search that gave no results; `message` says why."""

    def __init__(self, message: str):
        # It quotes what the service said, which is saved and sent to every socket.
        super().__init__(well_formed(message))


class TooDeep(ValueError):
    """JSON nested deeper than MAX_JSON_DEPTH levels, left unread."""


def json_of(body: bytes):
    """The JSON value of an answer's body; ValueError when it is not JSON, TooDeep when it nests too deeply."""
    if _depth(body) > MAX_JSON_DEPTH:
        raise TooDeep(f"nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.loads(body.decode("utf-8"))
    except RecursionError:  # the parser's own limit, should it come first
        raise TooDeep(f"nested more than {MAX_JSON_DEPTH} levels deep") from None


_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_NESTING = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _depth(body: bytes) -> int:
    """How deep the body's arrays and objects nest (brackets in strings do not count); 0 when too few
    brackets to pass MAX_JSON_DEPTH."""
    if body.count(b"[") + body.count(b"{") <= MAX_JSON_DEPTH:
        return 0  # too few to go deeper than the limit, whatever the strings hold
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKET)
    return max(accumulate(_NESTING[b] for b in brackets), default=0)


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    headers: Message
    body: bytes

    @property
    def content_type(self) -> str:
        return self.headers.get_content_type() if self.headers.get("Content-Type") else ""


def request(service: str, method: str, url: str, *, headers: dict, body: bytes | None = None,
            timeout: float, cancel=None) -> Answer:
    """Send one request; the answer whatever its status, or SearchError saying why there is none."""
    if cancel is not None and cancel.is_set():
        # Stopped already: nothing goes out (the worker below would send it after we return).
        raise SearchError(f"Stopped: the search on {service} was cancelled before it started.")
    job = _Job(urllib.request.Request(url, data=body, method=method,
                                      headers={"User-Agent": _USER_AGENT, "Accept-Encoding": "gzip, deflate",
                                               **headers}), timeout)
    worker = threading.Thread(target=job.run, name="web-search", daemon=True)
    unregister = cancel.on_cancel(job.finished.set) if cancel is not None else (lambda: None)
    try:
        worker.start()
        job.finished.wait(timeout + _GRACE_S)
    finally:
        unregister()
    host = urlsplit(url).hostname or url
    if cancel is not None and cancel.is_set():
        raise SearchError(f"Stopped: the search on {service} was cancelled before it finished.")
    if job.answer is not None:
        return job.answer
    if job.error is not None:
        raise SearchError(_failure(job.error, service, host, timeout))
    raise SearchError(f"{service} ({host}) did not answer within {timeout:g} seconds. "
                      f"Try again later, or check your connection.")


class _NoCloseHeader:
    """Sends no `Connection: close`, which urllib adds to every request.

    SearXNG's limiter (on in its container image) answers 429 to a search that
    carries it, taking it for a bot. The socket is still closed once the answer is
    read: urllib lets go of it itself.
    """

    def putheader(self, header, *values):
        if header.lower() != "connection":
            super().putheader(header, *values)


class _HTTP(_NoCloseHeader, http.client.HTTPConnection):
    pass


class _HTTPS(_NoCloseHeader, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_HTTP, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_HTTPS, req, context=self._context)


_opener = urllib.request.build_opener(_HTTPHandler, _HTTPSHandler)


class _Job:
    def __init__(self, req: urllib.request.Request, timeout: float):
        self.req, self.timeout = req, timeout
        self.finished = threading.Event()
        self.answer: Answer | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            try:
                response = _opener.open(self.req, timeout=self.timeout)
            except urllib.error.HTTPError as exc:  # an answer all the same: the backend reads it
                response = exc
            with response:
                self.answer = Answer(response.status, response.reason or "", response.headers,
                                     _read(response))
        except Exception as exc:  # handed to the caller, who says what it means
            self.error = exc
        finally:
            self.finished.set()


def _read(response) -> bytes:
    """The body, unpacked when sent compressed, at most MAX_BODY_BYTES."""
    raw = response.read(MAX_BODY_BYTES + 1)
    encoding = (response.headers.get("Content-Encoding") or "").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        try:
            inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
            raw = inflate.decompress(raw, MAX_BODY_BYTES + 1)
        except zlib.error as exc:
            raise _Unreadable(f"a compressed answer that could not be unpacked ({exc})") from None
    if len(raw) > MAX_BODY_BYTES:
        raise _Unreadable(f"an answer larger than {MAX_BODY_BYTES // (1024 * 1024)} MB")
    return raw


class _Unreadable(Exception):
    """The answer came but cannot be read; the message says what it was."""


def _failure(exc: BaseException, service: str, host: str, timeout: float) -> str:
    """The sentence for a request that got no readable HTTP answer."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    check = "Check your connection, or the address in Settings → Web search."
    if isinstance(exc, _Unreadable):
        return f"{service} sent {exc}. Try again later."
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return f"{service} ({host}) did not answer within {timeout:g} seconds. Try again later, or check your connection."
    if isinstance(reason, socket.gaierror):
        return f"Could not reach {service}: the name {host} could not be looked up. {check}"
    if isinstance(reason, ConnectionRefusedError):
        return f"Could not reach {service} at {host}: the connection was refused (nothing is listening). {check}"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return (f"Could not verify the secure connection to {service} at {host}: "
                f"{reason.verify_message or reason}. Check the address; the certificate is not trusted.")
    if isinstance(reason, ssl.SSLError):
        return f"The secure connection to {service} at {host} failed ({reason.reason or reason}). {check}"
    if isinstance(exc, (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError)):
        return f"{service} ({host}) closed the connection without an answer. Try again later."
    if isinstance(reason, OSError):
        why = reason.strerror or str(reason) or type(reason).__name__
        return f"Could not reach {service} at {host}: {why}. {check}"
    return f"The search on {service} failed ({type(exc).__name__}: {exc}). Try again later."
