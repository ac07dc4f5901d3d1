"""The web_fetch tool: one http(s) page as text, within size, time and redirect caps.

Every hop, the first included, resolves its host itself, refuses an address of the
person's own network unless they allowed that URL (backend/tools/fetch_guard.py), and
connects to the address it checked, confirming the peer before a byte is sent: a DNS
answer that changes between the check and the connection cannot slip through.

The download runs in its own thread so that Stop and the time cap never wait
on it: a name lookup cannot be interrupted, only abandoned. Stop shuts the
socket down (closing alone does not wake a read blocked in another thread on
Linux), and every read is bounded by what is left of the time cap, so a server
that trickles bytes forever is cut off on time.
"""
from __future__ import annotations

import base64
import http.client
import socket
import ssl
import sys
import threading
import time
import urllib.request
import zlib
from dataclasses import dataclass, field
from email.message import Message
from typing import Callable, Collection
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from backend.core.tools import Tool
from backend.core.types import ToolSpec
from backend.tools import fetch_guard
from backend.tools.fetch_guard import PrivateAddress
from backend.tools.html_text import decode, html_to_text, sniff_charset

__all__ = ["MAX_REDIRECTS", "NAME", "PrivateAddress", "fetch", "fetch_tool"]

NAME = "web_fetch"

MAX_REDIRECTS = 5
_CHUNK = 64 * 1024
_ERROR_BODY_BYTES = 64 * 1024  # an error page is read only for an excerpt
_EXCERPT_CHARS = 300
_GRACE_S = 1.0  # past the cap, how long the download gets to hand over what it read
_REDIRECT_CODES = {301, 302, 303, 307, 308}
_USER_AGENT = "Mozilla/5.0 (compatible; Numi web_fetch)"
_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5"

_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_TEXT_TYPES = {"application/json", "application/xml", "application/javascript",
               "application/x-javascript", "application/ecmascript", "application/yaml",
               "application/x-yaml", "application/toml", "application/x-ndjson", "application/sql",
               "application/graphql", "application/x-sh", "application/x-tex", "application/rtf"}
# Servers label plain files like this too; the bytes decide.
_UNLABELLED_TYPES = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}
_ARCHIVES = {"application/zip", "application/gzip", "application/x-gzip", "application/x-tar",
             "application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar",
             "application/x-bzip2", "application/x-xz", "application/zstd"}

DESCRIPTION = (
    "Fetch a web page (http or https) and read it as text: title, headings, paragraphs, lists, "
    "code blocks, and links written as `text (url)`. Plain text, JSON and Markdown come back as "
    "they are; images, PDFs and other binary files are refused. Redirects are followed. Long pages "
    "are cut, with a note saying so.")


def fetch_tool(max_bytes: int = 2_000_000, max_chars: int = 50_000, timeout: float = 20.0,
               allowed: Callable[[], Collection[str]] = frozenset) -> Tool:
    """The web_fetch tool; each call needs the person's approval by default. It changes nothing
    (a GET), so plan mode offers it, still asking. `allowed()` gives, at each call, the addresses
    of the person's own network it may read (see fetch())."""
    spec = ToolSpec(name=NAME, description=DESCRIPTION, parameters={
        "type": "object",
        "properties": {"url": {"type": "string",
                               "description": "The full http:// or https:// address of the page."}},
        "required": ["url"],
        "additionalProperties": False,
    })

    def run(args: dict, cancel) -> str:
        return fetch(args.get("url"), cancel, max_bytes=max_bytes, max_chars=max_chars, timeout=timeout,
                     allowed_private=frozenset(allowed()))

    return Tool(spec, run, concurrent=True, needs_approval=True, read_only=True)


def fetch(url, cancel=None, *, max_bytes: int = 2_000_000, max_chars: int = 50_000,
          timeout: float = 20.0, allowed_private: Collection[str] = frozenset()) -> str:
    """The page at url described as text; raises ValueError with a sentence a person can act on
    (PrivateAddress when a hop leads into the person's own network).

    allowed_private: exact urls (fetch_guard.exact) and origins (fetch_guard.origin) the person
    allowed on their own network; any other hop to a non-public address is refused."""
    url = _requested_url(url)
    job = _Download(url, max_bytes, timeout, frozenset(allowed_private))
    worker = threading.Thread(target=job.run, name="web-fetch", daemon=True)
    unregister = cancel.on_cancel(job.stop) if cancel is not None else (lambda: None)
    try:
        worker.start()
        # The download keeps its own time; this wait is the backstop for a lookup that hangs.
        if not job.finished.wait(timeout + _GRACE_S):
            job.stop()
            worker.join(_GRACE_S)
    finally:
        unregister()
    if cancel is not None and cancel.is_set():
        raise ValueError(f"Stopped: the fetch of {url} was cancelled before it finished.")
    if job.page is None and job.error is None:
        host = urlsplit(url).hostname
        if not job.connected:
            raise ValueError(f"Could not reach {host}: no connection within {timeout:g} seconds. "
                             f"Check the address or your connection.")
        raise ValueError(f"{host} did not answer within {timeout:g} seconds. "
                         f"Try again later, or check the address.")
    if job.error is not None:
        raise job.error
    return _describe(job.page, url, max_chars)


# -- the download (runs in the worker thread)

class _Stopped(Exception):
    """The fetch was stopped from outside; nobody reads its result."""


@dataclass
class _Page:
    url: str
    status: int
    reason: str
    headers: Message
    body: bytes
    notes: list[str] = field(default_factory=list)

    @property
    def content_type(self) -> str:
        """The media type alone, lower case; empty when the server sent none."""
        return self.headers.get_content_type() if self.headers.get("Content-Type") else ""


class _Download:
    """One fetch with its redirects; stop() from any thread aborts it."""

    def __init__(self, url: str, max_bytes: int, timeout: float, allowed: frozenset[str] = frozenset()):
        self.url, self.max_bytes, self.timeout, self.allowed = url, max_bytes, timeout, allowed
        self.deadline = time.monotonic() + timeout
        self.finished = threading.Event()  # the download ended, or stop() was called
        self.page: _Page | None = None
        self.error: ValueError | None = None
        self.connected = False  # a connection was made at least once
        self._lock = threading.Lock()
        self._stopped = False
        self._conn: http.client.HTTPConnection | None = None
        self._sock: socket.socket | None = None
        self._response: http.client.HTTPResponse | None = None

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            sock = self._sock
        _shutdown(sock)
        self.finished.set()

    def run(self) -> None:
        try:
            self.page = self._follow()
        except ValueError as exc:  # PrivateAddress included
            self.error = exc
        except _Stopped:
            pass
        except Exception as exc:  # a thread's crash would vanish; hand it to the caller instead
            self.error = ValueError(f"Fetching {self.url} failed: {type(exc).__name__}: {exc}")
        finally:
            self._close()
            self.finished.set()

    def _follow(self) -> _Page:
        url, seen = self.url, [self.url]
        for hop in range(MAX_REDIRECTS + 1):
            parts = urlsplit(url)
            proxy = self._connect(parts, url, None if hop == 0 else seen[0])
            response = self._request(parts, proxy)
            location = response.getheader("Location")
            if response.status not in _REDIRECT_CODES or not location:
                return self._page(url, response)
            target = urljoin(url, location.strip())
            scheme = urlsplit(target).scheme.lower()
            if scheme not in ("http", "https"):
                raise ValueError(f"{url} redirected to {target}, which web_fetch does not follow: "
                                 f"only http and https addresses can be fetched.")
            target = fetch_guard.exact(target)
            if target in seen:
                raise ValueError(f"{seen[0]} redirects in a loop ({url} -> {target}). "
                                 f"The site is misconfigured; try another address for the page.")
            if hop == MAX_REDIRECTS:
                raise ValueError(f"{seen[0]} redirected more than {MAX_REDIRECTS} times (last to "
                                 f"{target}). Fetch the final address directly, or try another page.")
            seen.append(target)
            self._close()
            url = target
        raise AssertionError("unreachable")  # the last hop either returns or raises

    def _connect(self, parts, url: str, redirected_from: str | None) -> tuple | None:
        """Open a connection for the address, through the proxy if one is set; returns that proxy.

        The host is looked up here and every address checked before any connection is tried;
        directly, the connection goes to a checked address (the name still names the site
        for Host and TLS) and its peer is checked again before anything is sent."""
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        trusted = fetch_guard.allows(self.allowed, url)
        if fetch_guard.local_name(host) and not trusted:
            raise fetch_guard.refusal(url, host, redirected_from)
        proxy = _proxy_for(parts.scheme, host)
        try:
            addresses = fetch_guard.resolve(host, port)
        except (OSError, UnicodeError) as exc:
            if proxy is None:
                raise self._failure(exc, host, port, connecting=True) from None
            addresses = []  # the proxy looks the name up: nothing here says it is private
        if not trusted:
            private = next((a[4][0] for a in addresses if not fetch_guard.is_public(a[4][0])), None)
            if private is not None:
                raise fetch_guard.refusal(url, private, redirected_from)
        if proxy is not None and any(fetch_guard.is_loopback(a[4][0]) for a in addresses):
            proxy = None  # this computer is never reached through a proxy
        try:
            wait = self._time_left()
        except TimeoutError as exc:
            raise self._failure(exc, host, port, connecting=True) from None
        if proxy is None:
            conn = (http.client.HTTPSConnection(host, port, timeout=wait, context=_ssl_context())
                    if parts.scheme == "https" else http.client.HTTPConnection(host, port, timeout=wait))
            conn._create_connection = self._pinned(addresses, url, trusted, redirected_from)
            where = host
        else:
            proxy_host, proxy_port, auth = proxy
            if parts.scheme == "https":
                conn = http.client.HTTPSConnection(proxy_host, proxy_port, timeout=wait,
                                                   context=_ssl_context())
                conn.set_tunnel(host, port, headers=auth)
            else:
                conn = http.client.HTTPConnection(proxy_host, proxy_port, timeout=wait)
            where = f"the proxy {proxy_host}:{proxy_port}"
        with self._lock:
            if self._stopped:
                raise _Stopped
            self._conn = conn
        try:
            conn.connect()
        except (PrivateAddress, _Stopped):
            raise
        except Exception as exc:
            raise self._failure(exc, where, port, connecting=True) from None
        with self._lock:
            # The response may take the socket from the connection; keep it for stop().
            self._sock = conn.sock
            self.connected = True
            if self._stopped:
                raise _Stopped
        return proxy

    def _pinned(self, addresses: list[tuple], url: str, trusted: bool, redirected_from: str | None):
        """http.client's connect function, going only to the checked addresses, in order."""
        def connect(_address, timeout, source_address=None) -> socket.socket:
            error: Exception = OSError(f"no address to connect to for {url}")
            for family, kind, proto, _, sockaddr in addresses:
                if self._was_stopped():
                    raise _Stopped
                sock = socket.socket(family, kind, proto)
                try:
                    sock.settimeout(timeout)
                    if source_address:
                        sock.bind(source_address)
                    with self._lock:
                        self._sock = sock  # Stop can cut a connection attempt short
                    sock.connect(sockaddr)
                    peer = _peer_ip(sock)
                    if peer is None or (not trusted and not fetch_guard.is_public(peer)):
                        raise fetch_guard.refusal(url, peer or sockaddr[0], redirected_from)
                    return sock
                except PrivateAddress:
                    sock.close()
                    raise
                except OSError as exc:
                    sock.close()
                    error = exc
            raise error
        return connect

    def _request(self, parts, proxy: tuple | None) -> http.client.HTTPResponse:
        headers = {"User-Agent": _USER_AGENT, "Accept": _ACCEPT, "Accept-Encoding": "gzip, deflate",
                   "Connection": "close"}
        if proxy is not None and parts.scheme == "http":
            # A plain-http proxy is sent the whole address; https goes through its tunnel instead.
            target = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))
            headers.update(proxy[2])
        else:
            target = urlunsplit(("", "", parts.path or "/", parts.query, ""))
        try:
            self._sock.settimeout(self._time_left())
            self._conn.request("GET", target, headers=headers)
            response = self._conn.getresponse()
        except Exception as exc:
            raise self._failure(exc, parts.hostname, None, connecting=False) from None
        self._response = response
        return response

    def _page(self, url: str, response: http.client.HTTPResponse) -> _Page:
        page = _Page(url, response.status, response.reason or "", response.headers, b"")
        kind = _kind(page.content_type)
        if response.status < 400 and kind == "binary":
            # Refused before the body is read: no point downloading what cannot be used.
            raise ValueError(_binary_refusal(url, page.content_type))
        limit = self.max_bytes if response.status < 400 else min(self.max_bytes, _ERROR_BODY_BYTES)
        page.body = self._read_body(url, response, limit, page.notes)
        return page

    def _read_body(self, url: str, response, limit: int, notes: list[str]) -> bytes:
        """Up to limit bytes of the body, in chunks; a note in notes says when it was cut and why."""
        encoding = (response.getheader("Content-Encoding") or "").strip().lower()
        inflate = None
        if encoding in ("gzip", "x-gzip", "deflate"):
            inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
        elif encoding not in ("", "identity"):
            raise ValueError(f"{url} was sent compressed as {encoding!r}, which web_fetch cannot read.")
        body, received, broken = bytearray(), 0, False

        def out_of_time() -> None:
            notes.append(f"[download stopped at the {self.timeout:g}-second time limit after "
                         f"{len(body)} bytes; the rest was not read]")

        while True:
            left = self._left()
            if left <= 0:
                out_of_time()
                break
            try:
                self._sock.settimeout(left)
                # One past the cap tells "exactly the cap" from "more than the cap".
                chunk = response.read1(min(_CHUNK, limit + 1 - len(body)) if inflate is None else _CHUNK)
            except TimeoutError:
                out_of_time()
                break
            except (OSError, http.client.HTTPException):
                chunk, broken = b"", True
            if not chunk and self._was_stopped():
                if self._left() > 0:
                    raise _Stopped
                out_of_time()  # the caller's backstop cut it
                break
            if broken:
                notes.append(f"[the connection broke after {len(body)} bytes; the page may be incomplete]")
                break
            if not chunk:
                break
            received += len(chunk)
            if inflate is not None:
                try:
                    chunk = inflate.decompress(chunk, limit + 1 - len(body))
                except zlib.error as exc:
                    raise ValueError(f"{url} sent a compressed body that could not be unpacked ({exc}). "
                                     f"Try again later.") from None
                if inflate.unconsumed_tail:
                    chunk += b"\0"  # more is waiting: count it as past the cap
            body += chunk
            if len(body) > limit or received > limit:
                del body[limit:]
                notes.append(f"[download stopped at {limit} bytes; the rest was not read]")
                break
        return bytes(body)

    def _failure(self, exc: Exception, where: str, port: int | None, *, connecting: bool) -> Exception:
        """The sentence for a failed connect or request; _Stopped if we were stopped."""
        if self._was_stopped() and self._left() > 0:
            return _Stopped()
        if isinstance(exc, TimeoutError) or self._left() <= 0:
            if connecting:
                return ValueError(f"Could not reach {where}: no connection within {self.timeout:g} "
                                  f"seconds. Check the address or your connection.")
            return ValueError(f"{where} did not answer within {self.timeout:g} seconds. "
                              f"Try again later, or check the address.")
        if isinstance(exc, socket.gaierror):
            why = f" ({exc.strerror})" if exc.strerror else ""
            return ValueError(f"Could not reach {where}: its name could not be looked up{why}. "
                              f"Check the address or your connection.")
        if isinstance(exc, ConnectionRefusedError):
            on_port = f" on port {port}" if port else ""
            return ValueError(f"Could not reach {where}: the connection was refused (nothing is "
                              f"listening{on_port}). Check the address or your connection.")
        if isinstance(exc, ssl.SSLCertVerificationError):
            return ValueError(f"Could not verify the secure connection to {where}: "
                              f"{exc.verify_message or exc}. Check the address; the site's "
                              f"certificate is not trusted.")
        if isinstance(exc, ssl.SSLError):
            return ValueError(f"The secure connection to {where} failed ({exc.reason or exc}). "
                              f"Try again later, or try http:// if the site has no https.")
        if isinstance(exc, (http.client.RemoteDisconnected, http.client.BadStatusLine)):
            return ValueError(f"{where} closed the connection without a valid answer. "
                              f"Try again later, or check the address.")
        if isinstance(exc, http.client.HTTPException):
            return ValueError(f"{where} sent an answer web_fetch could not read "
                              f"({type(exc).__name__}: {exc}). Try again later.")
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc) or type(exc).__name__
            return ValueError(f"Could not reach {where}: {reason}. Check the address or your connection.")
        return ValueError(f"Fetching from {where} failed ({type(exc).__name__}: {exc}). Try again later.")

    def _was_stopped(self) -> bool:
        with self._lock:
            return self._stopped

    def _left(self) -> float:
        return self.deadline - time.monotonic()

    def _time_left(self) -> float:
        """Seconds left for the next network step; TimeoutError when the cap is spent."""
        left = self._left()
        if left <= 0:
            raise TimeoutError
        return left

    def _close(self) -> None:
        with self._lock:
            response, conn = self._response, self._conn
            self._response = self._conn = self._sock = None
        for thing in (response, conn):
            if thing is not None:
                try:
                    thing.close()
                except Exception:
                    pass  # closing a broken connection may fail again; it is gone either way


def _shutdown(sock: socket.socket | None) -> None:
    if sock is None:
        return
    try:
        # The plain socket's shutdown, also for TLS: it wakes the reader without an SSL exchange.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed or never connected


# -- addresses

def _requested_url(value) -> str:
    """The url argument checked and normalized; ValueError says what is wrong with it."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError("web_fetch needs a url: the full http:// or https:// address of the page.")
    url = value.strip()
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        given = f"{scheme}: addresses" if scheme else f"{url!r} (no scheme)"
        raise ValueError(f"web_fetch fetches only http:// and https:// addresses, not {given}. "
                         f"Give the page's full address, starting with https://.")
    return fetch_guard.exact(url)


def _proxy_for(scheme: str, host: str) -> tuple[str, int, dict] | None:
    """(host, port, auth headers) of the http proxy the environment sets for this address, if any."""
    if host in ("localhost", "::1") or host.startswith("127."):
        return None  # this computer is never reached through a proxy
    proxy = urllib.request.getproxies().get(scheme)
    try:
        if not proxy or urllib.request.proxy_bypass(host):
            return None
    except Exception:
        return None  # an unreadable bypass list: go direct rather than fail
    if "://" not in proxy:
        proxy = "http://" + proxy
    parts = urlsplit(proxy)
    if parts.scheme != "http" or not parts.hostname:
        return None  # https and socks proxies are not spoken here
    auth = {}
    if parts.username:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        auth["Proxy-Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    return parts.hostname, parts.port or 80, auth


def _peer_ip(sock: socket.socket | None) -> str | None:
    try:
        return sock.getpeername()[0] if sock is not None else None
    except OSError:
        return None


_ssl_lock = threading.Lock()
_ssl_ctx: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    global _ssl_ctx
    with _ssl_lock:
        if _ssl_ctx is None:
            _ssl_ctx = ssl.create_default_context()
            if sys.platform in ("win32", "darwin"):
                # Python there does not read the system's certificates; truststore (already
                # installed for the model providers) does. Without it, Python's own defaults.
                try:
                    import truststore
                    _ssl_ctx = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                except ImportError:
                    pass
        return _ssl_ctx


# -- what the model reads

def _kind(content_type: str) -> str:
    """'html', 'text', 'unknown' (let the bytes decide) or 'binary'."""
    if content_type in _HTML_TYPES:
        return "html"
    if content_type.startswith("text/") or content_type in _TEXT_TYPES \
            or content_type.endswith(("+json", "+xml")):
        return "text"
    if content_type in _UNLABELLED_TYPES:
        return "unknown"
    return "binary"


def _sniff(body: bytes) -> str:
    head = body[:1024]
    start = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return "html"
    if b"\0" in head:
        return "binary"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a character cut at the end of the sample is fine
            return "binary"
    return "text"


def _binary_refusal(url: str, content_type: str) -> str:
    major = content_type.split("/")[0]
    what = {"image": "an image", "audio": "audio", "video": "a video", "font": "a font"}.get(major)
    if content_type == "application/pdf":
        what = "a PDF document"
    elif content_type in _ARCHIVES:
        what = "an archive"
    label = f"{what} ({content_type})" if what else (content_type or "binary data of unknown type")
    return (f"{url} is {label}, not a web page or text; web_fetch reads only HTML and text. "
            f"Look for an HTML or text version of it.")


def _readable(page: _Page, kind: str) -> tuple[str, str]:
    """(title, text) of a page whose kind is html or text."""
    charset = page.headers.get_content_charset()
    if kind == "html":
        doc = html_to_text(decode(page.body, charset or sniff_charset(page.body)), page.url)
        return doc.title, doc.text
    return "", decode(page.body, charset or sniff_charset(page.body[:4])).strip()


def _describe(page: _Page, requested: str, max_chars: int) -> str:
    kind = _kind(page.content_type)
    if kind == "unknown":
        kind = _sniff(page.body)
    if page.status >= 400:
        raise ValueError(_http_error(page, kind))
    if kind == "binary":
        raise ValueError(_binary_refusal(page.url, page.content_type))
    title, text = _readable(page, kind)
    lines = [f"URL: {page.url}"]
    if page.url != requested:
        lines.append(f"Redirected from: {requested}")
    lines.append(f"Status: {page.status} {page.reason}".rstrip())
    lines.append(f"Content-Type: {page.headers.get('Content-Type') or 'not given'}")
    if title:
        lines.append(f"Title: {title}")
    lines.extend(page.notes)
    if not text:
        text = "(the page has no readable text)"
    elif len(text) > max_chars:
        text = text[:max_chars] + f"\n\n[text cut at {max_chars} of {len(text)} characters]"
    return "\n".join(lines) + "\n\n" + text


_HTTP_ADVICE = {401: "It needs a login, which web_fetch cannot give.",
                403: "The site refused access; it may block automated requests.",
                404: "Check the address.", 410: "The page was removed.",
                429: "The site is limiting requests; try again later."}


def _http_error(page: _Page, kind: str) -> str:
    if page.status in _HTTP_ADVICE:
        advice = _HTTP_ADVICE[page.status]
    elif page.status >= 500:
        advice = "The server failed; try again later."
    else:
        advice = "The request was refused; check the address."
    message = f"{page.url} answered {page.status} {page.reason}".rstrip() + f". {advice}"
    if kind in ("html", "text"):
        excerpt = " ".join(_readable(page, kind)[1].split())
        if len(excerpt) > _EXCERPT_CHARS:
            excerpt = excerpt[:_EXCERPT_CHARS].rstrip() + "…"
        if excerpt:
            message += f' The page said: "{excerpt}"'
    return message
