"""One MCP server's life inside the manager's event loop: connect, watch, stop, explain.

Everything here runs on the McpManager's loop thread. The SDK ties a session to
the task that opened it (anyio task groups), so each server gets one owner task
that opens the transport and the `mcp.Client`, parks until told to stop or
until the transport ends, and records why it ended. Calls from other tasks use
the owner's client; they never open or close it.
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
from collections import deque
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import httpx2
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult, Implementation

from backend import __version__
from backend.core import sentences
from backend.tools.mcp_auth import ServerAuth
from backend.tools.mcp_config import McpAuthError, McpError, McpServerConfig, SignInNotNeeded  # noqa: F401 (re-exported)
from backend.tools.mcp_sign_in import SignIn
from backend.tools.mcp_tokens import TokenVault

log = logging.getLogger("numi.mcp")

START_TIMEOUT = 60.0  # seconds for a server to spawn and answer the handshake (npx may download first)
STOP_TIMEOUT = 15.0  # the SDK's own shutdown escalates stdin close → SIGTERM → SIGKILL within ~6 s
SETTINGS_HINT = "Restart it in Settings → MCP servers."


class _StderrTail:
    """The server's stderr, kept off Numi's console: the last lines stay for the crash message."""

    def __init__(self, server: str):
        self._server = server
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self._lines: deque[str] = deque(maxlen=20)
        self._eof = threading.Event()
        threading.Thread(target=self._pump, args=(os.fdopen(read_fd, "rb"),),
                         name="numi-mcp-stderr", daemon=True).start()

    def _pump(self, pipe) -> None:
        with pipe:
            for raw in pipe:
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    self._lines.append(line)
                    log.debug("MCP server %r: %s", self._server, line)
        self._eof.set()

    def release(self) -> None:
        """Drop our copy of the write end once the child has its own, so its exit reads as EOF."""
        if not self.writer.closed:
            self.writer.close()

    async def last_line(self) -> str:
        # The pipe may still hold the dying words when stdout's EOF arrives; wait briefly for its EOF.
        await anyio.to_thread.run_sync(self._eof.wait, 1.0)
        return self._lines[-1] if self._lines else ""


class _WatchedRead:
    """The transport's read stream, telling the owner when it ends (process exit, broken pipe)."""

    def __init__(self, inner, ended: anyio.Event):
        self._inner, self._ended = inner, ended

    async def receive(self):
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended.set()
            raise

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration

    async def aclose(self):
        await self._inner.aclose()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()

    def __getattr__(self, name):  # e.g. `last_context`, which the dispatcher reads when present
        return getattr(self._inner, name)


class McpConnection:
    """One configured server, started on demand; its state is read from any thread."""

    def __init__(self, config: McpServerConfig, vault: TokenVault | None = None):
        self.config = config
        # An HTTP server's sign-in, kept for this connection's life (one provider: it renews on time).
        self.auth = ServerAuth(config.name, config.url, vault) if vault is not None and config.oauth else None
        self._sign_in: SignIn | None = None
        # (state, error) replaced whole, so a reader on another thread never sees a torn pair.
        self.state: tuple[str, str | None] = ("stopped", None)
        self._client: Client | None = None
        self._owner: asyncio.Task | None = None
        self._ready: asyncio.Future | None = None
        self._scope: anyio.CancelScope | None = None
        self._wake: anyio.Event | None = None
        self._stopping = False
        # Its tools (McpToolInfo) as listed since this process started, None before: what the settings
        # screen shows without starting anything.
        self.listed: tuple | None = None

    @property
    def name(self) -> str:
        return self.config.name

    async def client(self) -> Client:
        """The live client, starting the server first when it is stopped."""
        if not self.config.enabled:
            raise McpError(f"The MCP server '{self.name}' is turned off. Turn it on in Settings → MCP servers.")
        if self.state[0] == "crashed":
            raise McpError(self.state[1])
        if self._owner is None:
            self._start()
        await asyncio.shield(self._ready)  # a cancelled caller must not abort a start others wait on
        if self._client is None:
            raise McpError(self.state[1] or f"The MCP server '{self.name}' is not running. {SETTINGS_HINT}")
        return self._client

    async def call(self, tool: str, arguments: dict, timeout: float, progress=None) -> CallToolResult:
        """`progress` (async (progress, total, message)) receives the server's progress notifications."""
        client = await self.client()
        try:
            return await client.call_tool(tool, arguments, read_timeout_seconds=timeout, progress_callback=progress)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise McpError(f"The MCP tool '{tool}' on '{self.name}' did not answer within {timeout:g} s, "
                               f"so Numi stopped waiting. The server is still running; try again or ask "
                               f"for less.") from None
            if exc.code == CONNECTION_CLOSED:
                raise McpError(await self._why_closed()) from None
            raise McpError(f"The MCP server '{self.name}' refused the call to '{tool}': {exc}") from None

    async def list_page(self, cursor: str | None):
        client = await self.client()
        try:
            return await client.list_tools(cursor=cursor)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise McpError(await self._why_closed()) from None
            raise McpError(f"The MCP server '{self.name}' could not list its tools: {exc}") from None

    async def stop(self) -> None:
        """Close the session and end the server process (stdin close, then the SDK's kill escalation)."""
        owner = self._owner
        if owner is None:
            return
        if owner.done():  # already ended (crashed or stopped): nothing runs, and a crash stays reported
            self._owner = None if self.state[0] == "stopped" else owner
            return
        self._stopping = True
        if self._client is None and self._scope is not None:
            self._scope.cancel()  # still starting: nothing to close politely
        if self._wake is not None:
            self._wake.set()
        with anyio.move_on_after(STOP_TIMEOUT):
            await asyncio.shield(owner)
        if not owner.done():
            owner.cancel()
            self.state = ("stopped", None)
            log.warning("MCP server %r did not stop within %ss; abandoned", self.name, STOP_TIMEOUT)
        if self._owner is owner:  # kept until now so no call starts a second process mid-stop
            self._owner = None

    async def sign_in(self) -> str:
        """Start a sign-in (ending one still open); returns the URL for the browser."""
        if self.auth is None:
            why = ("it runs on this computer" if self.config.transport == "stdio"
                   else "Numi sends it its own Authorization header")
            raise SignInNotNeeded(f"The MCP server '{self.name}' has no sign-in: {why}.")
        await self._end_sign_in()
        self._sign_in = SignIn(self.config, self.auth, self._signed_in)
        return await self._sign_in.start()

    async def sign_out(self) -> None:
        """Forget the tokens and the registration, end a sign-in in progress, and stop the session."""
        await self._end_sign_in()
        if self.auth is not None:
            await anyio.to_thread.run_sync(self.auth.vault.forget)
            self.auth.signed_out()
        await self._reset()

    async def shutdown(self) -> None:
        """Stop for good (removed, changed, or Numi quitting): a sign-in in progress ends too."""
        await self._end_sign_in()
        await self.stop()

    async def _signed_in(self) -> None:
        await self._reset()  # the next use starts with the new tokens, whatever the last start said

    async def _end_sign_in(self) -> None:
        pending, self._sign_in = self._sign_in, None
        if pending is not None:
            await pending.cancel()

    async def _reset(self) -> None:
        await self.stop()
        self._owner, self.state = None, ("stopped", None)

    async def restart(self) -> None:
        await self._reset()
        if self.config.enabled:
            self._start()
            await asyncio.shield(self._ready)

    def _start(self) -> None:
        self._stopping, self._client, self.listed = False, None, None
        self._ready = asyncio.get_running_loop().create_future()
        self._wake = anyio.Event()
        self.state = ("starting", None)
        self._owner = asyncio.get_running_loop().create_task(self._own(), name=f"mcp:{self.name}")

    async def _own(self) -> None:
        """Hold the session open until asked to stop or the server goes away, then say why."""
        tail = _StderrTail(self.name) if self.config.transport == "stdio" else None
        error: BaseException | None = None
        with anyio.CancelScope(deadline=anyio.current_time() + START_TIMEOUT) as scope:
            self._scope = scope
            try:
                info = Implementation(name="Numi", version=__version__)
                async with Client(self._transport(tail, self._wake), cache=None, client_info=info) as client:
                    self._client = client
                    scope.deadline = math.inf  # the start deadline no longer applies
                    self.state = ("running", None)
                    self._ready.set_result(None)
                    await self._wake.wait()
            except Exception as exc:  # why it ended is the state, never an unhandled task error
                error = exc
            finally:
                self._client = None
                if tail is not None:
                    tail.release()
        if self._stopping:
            self.state = ("stopped", None)
        else:
            started = self._ready.done()
            self.state = ("crashed", await self._explain(started, error, scope.cancelled_caught, tail))
            log.warning("%s", self.state[1])
        if not self._ready.done():
            self._ready.set_result(None)

    def _transport(self, tail: _StderrTail | None, ended: anyio.Event):
        cfg = self.config

        @asynccontextmanager
        async def watched():
            async with AsyncExitStack() as stack:  # the HTTP client outlives the session's closing DELETE
                if cfg.transport == "stdio":
                    params = StdioServerParameters(command=cfg.command, args=list(cfg.args),
                                                   env=dict(cfg.env) or None, cwd=cfg.cwd)
                    inner = stdio_client(params, errlog=tail.writer)
                else:
                    # The SDK takes headers through the HTTP client; these are its documented default timeouts.
                    auth = self.auth.provider if self.auth is not None else None
                    http = await stack.enter_async_context(httpx2.AsyncClient(
                        headers=dict(cfg.headers), timeout=httpx2.Timeout(30.0, read=300.0), auth=auth))
                    inner = streamable_http_client(cfg.url, http_client=http)
                read, write = await stack.enter_async_context(inner)
                if tail is not None:
                    tail.release()
                yield _WatchedRead(read, ended), write

        return watched()

    async def _explain(self, started: bool, error: BaseException | None, timed_out: bool,
                       tail: _StderrTail | None) -> str:
        auth_error = _find(error, McpAuthError)
        if auth_error is not None:
            return str(auth_error)
        last = await tail.last_line() if tail is not None else ""
        said = f" Its last output: {sentences.ended(last)}" if last else ""
        if not started:
            if timed_out:
                why = f"it did not answer within {START_TIMEOUT:g} s."
            elif isinstance(_leaf(error), FileNotFoundError):
                why = f"the command '{self.config.command}' was not found."
            elif error is not None and not _is_closed(error):
                why = sentences.ended(_words(error))
            else:
                why = "it exited during start-up."
            return f"The MCP server '{self.name}' could not start: {why}{said} Check it in Settings → MCP servers."
        if self.config.transport == "http":
            detail = f" ({_words(error)})" if error is not None else ""
            return f"The MCP server '{self.name}' stopped answering{detail}.{said} {SETTINGS_HINT}"
        return f"The MCP server '{self.name}' stopped.{said} {SETTINGS_HINT}"

    async def _why_closed(self) -> str:
        """The crash sentence, once the owner has recorded it (the closed call can beat it by a moment)."""
        owner = self._owner
        if owner is not None and not owner.done():
            with anyio.move_on_after(STOP_TIMEOUT):
                await asyncio.shield(owner)
        return self.state[1] or f"The MCP server '{self.name}' closed the connection. {SETTINGS_HINT}"


def _leaf(error: BaseException | None) -> BaseException | None:
    """The first real error inside the task-group wrappers anyio adds."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _find(error: BaseException | None, kind: type) -> BaseException | None:
    """The first `kind` anywhere inside the task-group wrappers anyio adds."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := _find(inner, kind)) is not None:
                return found
    return None


def _is_closed(error: BaseException) -> bool:
    leaf = _leaf(error)
    return isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED


def _words(error: BaseException) -> str:
    leaf = _leaf(error)
    return str(leaf).strip().rstrip(".") or type(leaf).__name__
