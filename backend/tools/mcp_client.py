"""Numi's MCP client: MCP servers' tools as Numi tools, behind a synchronous API.

The SDK is asyncio while Numi's turns are threads, so a manager runs one event
loop on a daemon thread; each public method hands a coroutine to that loop and
blocks, and a turn's cancel token abandons the wait at once (the SDK then tells
the server the request was cancelled).

Tool poisoning: a server can change a tool's description after the person
approved it. `tool_fingerprint` hashes exactly what the model reads about a tool,
so whoever stores approvals compares fingerprints (`changed_since`) and asks again.
"""
from __future__ import annotations

import asyncio
import atexit
import base64
import binascii
import concurrent.futures
import hashlib
import json
import re
import threading
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

from backend.core.tools import Tool, report_progress
from backend.core.types import ToolSpec
from backend.tools.mcp_servers import McpConnection, McpError, McpServerConfig

__all__ = ["McpConnection", "McpError", "McpManager", "McpServerConfig", "McpToolInfo", "changed_since", "mcp_tools",
           "numi_tool_name", "result_text", "tool_fingerprint"]

MAX_PAGES = 100  # tools/list pages read per listing, so a server that never stops paging cannot hang a turn
MAX_NAME = 64  # the strictest provider limit on tool names


@dataclass(frozen=True)
class McpToolInfo:
    server: str
    name: str  # the server's own name for the tool
    description: str
    input_schema: dict
    title: str | None = None
    annotations: dict | None = None  # hints such as readOnlyHint; untrusted, for display only
    fingerprint: str = ""  # tool_fingerprint of this listing

    @classmethod
    def from_mcp(cls, server: str, tool: Any) -> McpToolInfo:
        """From an SDK `Tool` as listed by the server."""
        info = cls(server=server, name=tool.name, description=tool.description or "",
                   input_schema=dict(tool.input_schema or {}), title=tool.title,
                   annotations=tool.annotations.model_dump(exclude_none=True) if tool.annotations else None)
        return replace(info, fingerprint=tool_fingerprint(info))


def tool_fingerprint(info: Any) -> str:
    """sha256 (hex) of the canonical JSON of a tool's name, description and input schema."""
    canonical = json.dumps({"name": info.name, "description": info.description or "",
                            "input_schema": info.input_schema or {}},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def changed_since(approved_fingerprint: str | None, info: Any) -> bool:
    """True when the tool differs from the approved one (or was never approved)."""
    # Recomputed, not read from info.fingerprint: the listing itself is what must match.
    return approved_fingerprint != tool_fingerprint(info)


def result_text(result: Any) -> str:
    """A CallToolResult as the text the model reads; an error result raises McpError with its text."""
    parts = [_block_text(block) for block in result.content]
    text = "\n".join(part for part in parts if part)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False)
    if result.is_error:
        raise McpError(text or "The MCP tool reported an error without saying why.")
    return text


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if kind == "resource_link":
        return f"[resource link: {block.name} <{block.uri}>]"
    if kind == "resource":
        res = block.resource
        if getattr(res, "text", None) is not None:
            return f"[resource: {res.uri}]\n{res.text}"
        return f"[resource: {res.uri}, {res.mime_type or 'binary'}, {_decoded_size(res.blob)} bytes]"
    return f"[{kind or 'unknown'} content]"


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data))
    except (binascii.Error, ValueError):
        return len(data)


class McpManager:
    """The configured MCP servers, each started on first use, with a blocking API for turn threads."""

    def __init__(self, servers: Iterable[McpServerConfig] = (), vault: Callable[[str], Any] | None = None):
        """`vault(server name)`: where an HTTP server's sign-in is kept (mcp_auth.TokenVault); None: no sign-ins."""
        self._vault = vault
        self._lock = threading.Lock()
        self._servers: dict[str, McpConnection] = {}
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="numi-mcp", daemon=True)
        self._thread.start()
        atexit.register(self.close)  # servers are our children: never leave them behind at exit
        try:
            self.configure(servers)
        except Exception:
            self.close()
            raise

    def configure(self, servers: Iterable[McpServerConfig]) -> None:
        """Adopt a new set of servers: changed or removed ones stop, unchanged ones keep running."""
        wanted: dict[str, McpServerConfig] = {}
        for config in servers:
            if config.name in wanted:
                raise ValueError(f"Two MCP servers are named {config.name!r}; names must be unique.")
            wanted[config.name] = config
        with self._lock:
            old = self._servers
            self._servers = {name: old[name] if name in old and old[name].config == config else self._connection(config)
                             for name, config in wanted.items()}
            gone = [conn for name, conn in old.items() if self._servers.get(name) is not conn]
        if gone:
            self._wait(_stop_all(gone))

    def _connection(self, config: McpServerConfig) -> McpConnection:
        return McpConnection(config, self._vault(config.name) if self._vault is not None else None)

    def servers(self) -> list[str]:
        with self._lock:
            return list(self._servers)

    def list_tools(self, server: str) -> list[McpToolInfo]:
        """The server's tools as listed right now (never from a cache: fingerprints must be fresh)."""
        conn = self._get(server)
        return self._wait(_list_tools(conn), what=f"listing the tools of '{server}'")

    def listed_tools(self, server: str) -> list[McpToolInfo] | None:
        """The tools as its running process last listed them (None: not listed since it started); starts nothing."""
        listed = self._get(server).listed
        return None if listed is None else list(listed)

    def call_tool(self, server: str, name: str, arguments: dict | None = None, timeout: float | None = None,
                  cancel: Any = None) -> str:
        """Run one tool and return its text; failures, timeouts and cancels raise McpError."""
        conn = self._get(server)
        seconds = conn.config.call_timeout if timeout is None else timeout

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            report_progress(cancel, progress=progress, total=total, message=message or "")

        wants = getattr(cancel, "progress", None) is not None
        result = self._wait(conn.call(name, arguments or {}, seconds, on_progress if wants else None), cancel,
                            what=f"the call to '{name}' on '{server}'")
        return result_text(result)

    def restart(self, server: str) -> dict:
        """Stop the server if it runs, forget a crash, start it again; returns its status."""
        self._wait(self._get(server).restart())
        return self.status(server)

    def status(self, server: str) -> dict:
        state, error = self._get(server).state
        return {"state": state, "error": error}

    def auth_status(self, server: str) -> dict:
        """{"auth", "account", "auth_error"}: its sign-in as known (all None for a server without one)."""
        conn = self._get(server)
        return conn.auth.status() if conn.auth is not None else {"auth": None, "account": None, "auth_error": None}

    def sign_in(self, server: str) -> str:
        """Start a sign-in; the authorization URL for the browser (McpError, or SignInNotNeeded, when none)."""
        return self._wait(self._get(server).sign_in(), what=f"the sign-in to '{server}'")

    def sign_out(self, server: str) -> None:
        """Forget the server's tokens and stop its session."""
        self._wait(self._get(server).sign_out(), what=f"the sign-out from '{server}'")

    def close(self) -> None:
        """Stop every server (their processes end) and the loop thread; safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            conns = list(self._servers.values())
        atexit.unregister(self.close)
        try:
            asyncio.run_coroutine_threadsafe(_stop_all(conns), self._loop).result()
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()

    def __enter__(self) -> McpManager:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _get(self, server: str) -> McpConnection:
        with self._lock:
            conn = self._servers.get(server)
        if conn is None:
            raise McpError(f"There is no MCP server named '{server}'.")
        return conn

    def _wait(self, coro, cancel: Any = None, what: str = "the MCP request"):
        """Run `coro` on the loop and block for its result; a cancel token abandons the wait at once."""
        if self._closed:
            coro.close()
            raise McpError("The MCP servers are shut down.")
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        # Cancelling the concurrent future cancels the loop task too, which sends the server a cancel.
        unregister = cancel.on_cancel(future.cancel) if cancel is not None else None
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            raise McpError(f"Stopped: {what} was cancelled.") from None
        finally:
            if unregister is not None:
                unregister()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            # Anything still pending (an abandoned call finishing its cancel) ends with the loop.
            pending = asyncio.all_tasks(self._loop)
            for task in pending:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()


async def _stop_all(conns: list[McpConnection]) -> None:
    await asyncio.gather(*(conn.shutdown() for conn in conns))


async def _list_tools(conn: McpConnection) -> list[McpToolInfo]:
    tools, cursor = [], None
    for _ in range(MAX_PAGES):
        page = await conn.list_page(cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    infos = [McpToolInfo.from_mcp(conn.name, tool) for tool in tools]
    conn.listed = tuple(infos)
    return infos


_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def numi_tool_name(server: str, tool: str, salt: str = "") -> str:
    """`mcp__<server>__<tool>` in the characters providers accept, at most 64 long."""
    name = f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME and not salt:
        return name
    # Too long (or clashing once sanitised): a short digest keeps it unique and stable across listings.
    digest = hashlib.sha256(f"{server}\0{tool}\0{salt}".encode("utf-8")).hexdigest()[:8]
    return f"{name[:MAX_NAME - 9]}_{digest}"


def mcp_tools(manager: McpManager, server_name: str, needs_approval: bool = True) -> list[Tool]:
    """The server's tools as Numi tools (starts the server if it is not running)."""
    tools: list[Tool] = []
    taken: set[str] = set()
    for info in manager.list_tools(server_name):
        name = numi_tool_name(server_name, info.name)
        if name in taken:
            name = numi_tool_name(server_name, info.name, salt="clash")
        taken.add(name)
        schema = dict(info.input_schema) or {"properties": {}}
        schema.setdefault("type", "object")
        description = f"[MCP server '{server_name}'] {info.description}".rstrip()
        tools.append(Tool(ToolSpec(name=name, description=description, parameters=schema),
                          _runner(manager, server_name, info.name),
                          concurrent=False, needs_approval=needs_approval))
    return tools


def _runner(manager: McpManager, server: str, tool: str):
    def run(arguments: dict, cancel) -> str:
        return manager.call_tool(server, tool, arguments, cancel=cancel)
    return run
