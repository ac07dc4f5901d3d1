"""The one-shot loopback listener an MCP sign-in's browser comes back to (RFC 8252 §7.3).

It listens on 127.0.0.1 only, on a port the system picks, for one GET of
/callback. The `state` must be the one Numi sent (compared in constant time);
a callback without it, or with another, gets an error page and ends the
sign-in, since it did not come from the authorization Numi asked for. The page
for the good callback waits for the token exchange, so it says how the
sign-in really ended. Nothing of the request is logged: its query carries the
authorization code.
"""
from __future__ import annotations

import asyncio
import html
import secrets
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from backend.tools.mcp_config import McpAuthError

PATH = "/callback"
READ_TIMEOUT = 10.0  # seconds a connection may take to send its request line and headers
MAX_HEADER_LINES = 100
MAX_LINE = 8192
DONE = "You can close this tab and return to Numi."


class LoopbackListener:
    """Listen for one authorization redirect; `code()` waits for it, `finish()` gives the page its outcome."""

    def __init__(self, server: str):
        self.server = server
        self._state: str | None = None
        self._listener: asyncio.Server | None = None
        loop = asyncio.get_running_loop()
        self._code: asyncio.Future = loop.create_future()
        self._outcome: asyncio.Future = loop.create_future()
        self._outcome_wait = 30.0

    async def open(self, port: int = 0) -> int:
        """Start listening (on `port` when it is free, else on any); returns the port."""
        try:
            self._listener = await asyncio.start_server(self._handle, "127.0.0.1", port)
        except OSError:
            if not port:
                raise
            self._listener = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self._listener.sockets[0].getsockname()[1]

    def redirect_uri(self, port: int) -> str:
        return f"http://127.0.0.1:{port}{PATH}"

    def expect(self, state: str | None, outcome_wait: float) -> None:
        """The state the authorization request carries; the page waits up to `outcome_wait` s for the result."""
        self._state, self._outcome_wait = state, outcome_wait

    async def code(self, timeout: float) -> AuthorizationCodeResult:
        """The authorization code once the browser comes back; McpAuthError on a bad callback or the timeout."""
        try:
            return await asyncio.wait_for(asyncio.shield(self._code), timeout)
        except TimeoutError:
            minutes = f"{timeout / 60:g} minutes" if timeout >= 60 else f"{timeout:g} s"
            raise McpAuthError(f"The sign-in to the MCP server '{self.server}' was not completed within "
                               f"{minutes}, so Numi stopped waiting for the browser. Sign in again in Settings → "
                               f"MCP servers.") from None

    def finish(self, error: str | None) -> None:
        """How the sign-in ended (None: signed in), for the page the browser is waiting on."""
        if not self._outcome.done():
            self._outcome.set_result(error)

    def stop_listening(self) -> None:
        """Free the port (a connection already accepted still gets its page)."""
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    async def close(self) -> None:
        if not self._code.done():
            self._code.cancel()
        self.stop_listening()
        self.finish("The sign-in was stopped.")

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            target = await asyncio.wait_for(_read_request(reader), READ_TIMEOUT)
            if target is None:
                return await _respond(writer, 400, "Numi could not read this request.")
            path, query = target
            if path != PATH:
                return await _respond(writer, 404, "There is nothing here.")
            if self._code.done():
                return await _respond(writer, 409, "This sign-in is already over. Return to Numi.")
            problem, result = self._check(parse_qs(query))
            self.stop_listening()  # one callback, good or bad, is all a sign-in takes
            if problem is not None:
                self._code.set_exception(McpAuthError(problem))
            else:
                self._code.set_result(result)
            # The page tells how the sign-in ended, so it waits for that (the token exchange, or the failure).
            try:
                error = await asyncio.wait_for(asyncio.shield(self._outcome), self._outcome_wait)
            except TimeoutError:
                error = problem  # still going: Numi says how it ends
            if error is None:
                return await _respond(writer, 200, f"Signed in to {self.server}. {DONE}")
            return await _respond(writer, 400, error)
        except (TimeoutError, ConnectionError, ValueError, asyncio.IncompleteReadError):  # ValueError: a line too long
            pass
        finally:
            writer.close()

    def _check(self, query: dict) -> tuple[str | None, AuthorizationCodeResult | None]:
        """(problem sentence, None) for a callback that must not complete anything, else (None, result)."""
        def one(name):
            values = query.get(name)
            return values[0] if values else None

        state, code = one("state"), one("code")
        if state is None or self._state is None or not secrets.compare_digest(state, self._state):
            return (f"The sign-in to the MCP server '{self.server}' was stopped: the browser came back with a link "
                    f"Numi did not send (its state did not match), so nothing was signed in. Sign in again in "
                    f"Settings → MCP servers."), None
        if one("error") is not None:
            detail = one("error_description")
            said = f"{one('error')}: {detail}" if detail else one("error")
            return (f"The sign-in to the MCP server '{self.server}' was refused ({said[:300]}). Sign in again in "
                    f"Settings → MCP servers."), None
        if not code:
            return (f"The sign-in to the MCP server '{self.server}' came back without an authorization code. "
                    f"Sign in again in Settings → MCP servers."), None
        return None, AuthorizationCodeResult(code=code, state=state, iss=one("iss"))


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str] | None:
    """(path, query) of a GET, after reading its headers; None for anything else."""
    line = await reader.readline()
    parts = line.decode("latin-1").split()
    for _ in range(MAX_HEADER_LINES):
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
    if len(parts) != 3 or parts[0] != "GET" or len(line) > MAX_LINE:
        return None
    split = urlsplit(parts[1])
    return split.path, split.query


async def _respond(writer: asyncio.StreamWriter, status: int, sentence: str) -> None:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
    body = ("<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Numi</title>"
            "<body style=\"font: 16px system-ui, sans-serif; margin: 3em auto; max-width: 36em\">"
            f"<p>{html.escape(sentence)}</p></body></html>").encode("utf-8")
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nReferrer-Policy: no-referrer\r\n"
            f"Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n"
            f"X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n").encode("ascii")
    writer.write(head + body)
    await writer.drain()
