"""The MCP servers of catalog.toml as turns and the API use them: one McpManager, kept equal to the table.

`reload()` is called at start, after every change of the `mcp_server` table
(an API write, or a saved edit of catalog.toml) and after a secret header value
changes. Servers start on demand only: when a turn asks for their tools, or
a POST to the API asks for them (a GET only reads what was last listed). A
server that cannot start is left out of the turn (the turn goes on without its
tools) and its status says why.

A server's tool counts as changing nothing (plan mode offers it) only when its listing
says so: `readOnlyHint` true and not `destructiveHint` true. Without hints it changes
things, as the MCP specification's defaults say.
"""
from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterable

from backend.catalog.mcp_file import secret_id
from backend.core.tools import Tool
from backend.store import mcp_servers
from backend.store.db import db
from backend.store.mcp_servers import McpServerRow
from backend.tools.mcp_config import OAUTH_KEY_KIND, McpError, McpServerConfig, SignInNotNeeded

log = logging.getLogger(__name__)

MAX_PARALLEL_STARTS = 8  # servers listed at once when a turn begins; each waits on the manager's loop


@contextmanager
def _connected():
    """A database connection for this thread, without closing one a request already holds."""
    if db.is_closed():
        with db.connection_context():
            yield
    else:
        yield


class McpRuntime:
    def __init__(self, keys):
        self.keys = keys
        self._manager_ = None  # made with the first configured server: the SDK is slow to import
        self._reloading = threading.Lock()  # each reload reads the table inside it, so the last one wins
        # Replaced whole by reload, so readers on other threads need no lock.
        self._enabled: tuple[str, ...] = ()
        self._unavailable: dict[str, str] = {}  # server id → why Numi will not start it
        self._listed: dict[str, list[Tool]] = {}  # server id → its tools as last listed (settings screens)
        self._ids: set[str] | None = None  # the table's server ids at the last reload (None: not read yet)

    @property
    def _manager(self):
        if self._manager_ is None:
            from backend.tools.mcp_client import McpManager
            from backend.tools.mcp_tokens import TokenVault
            self._manager_ = McpManager(vault=lambda server: TokenVault(self.keys, server))
        return self._manager_

    # -- configuration ----------------------------------------------------------------------

    def reload(self) -> None:
        """Read every server from the table, resolve secret header values, adopt the set.

        Unchanged servers keep running; changed ones restart on next use; removed
        ones stop. A server whose secret header value is missing is not started
        (it would only be refused by its host) and its status says which value.
        """
        with self._reloading, _connected():
            rows = mcp_servers.in_order()
            configs, unavailable = [], {}
            for row in rows:
                try:
                    configs.append(self._config(row))
                except McpError as exc:
                    unavailable[row.id] = str(exc)
                    log.warning("%s", exc)
            if configs or self._manager_ is not None:
                self._manager.configure(configs)
            self._unavailable = unavailable
            self._enabled = tuple(c.name for c in configs if c.enabled)
            ids = {row.id for row in rows}
            for gone in (self._ids or set()) - ids:  # a removed server's sign-in goes with it
                self._forget_sign_in(gone)
            self._ids = ids

    def _forget_sign_in(self, server_id: str) -> None:
        self.keys.delete(server_id, kind=OAUTH_KEY_KIND)

    def _config(self, row: McpServerRow) -> McpServerConfig:
        headers = dict(row.headers or {})
        if row.enabled:  # a server that is off needs no secret, and a keyring prompt would be for nothing
            for name in row.secret_headers or []:
                value = self.keys.get(secret_id(row.id, name))
                if value is None:
                    available, reason = self.keys.status()
                    why = "" if available else f" {reason}"
                    raise McpError(f"The MCP server '{row.id}' cannot start: Numi has no value for its secret "
                                   f"header '{name}'.{why} Set it in Settings → MCP servers.")
                headers[name] = value
        try:
            return McpServerConfig(
                name=row.id, transport=row.transport, command=row.command or "", args=tuple(row.args or ()),
                env=dict(row.env or {}), cwd=os.path.expanduser(row.cwd) if row.cwd else None,
                url=row.url or "", headers=headers, enabled=bool(row.enabled),
                call_timeout=float(row.call_timeout))
        except ValueError as exc:  # the catalog checks make this unreachable; say so rather than crash
            raise McpError(str(exc)) from None

    # -- for turns --------------------------------------------------------------------------

    def tools(self, servers: Iterable[str] | None = None) -> list[Tool]:
        """The tools of the enabled servers (`servers`, or all), each started on demand; one that fails is left out."""
        wanted = None if servers is None else set(servers)
        servers = tuple(s for s in self._enabled if wanted is None or s in wanted)
        if not servers:
            return []
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_STARTS, len(servers)),
                                thread_name_prefix="mcp-list") as pool:
            listed = list(pool.map(self._tools_of, servers))
        return [tool for tools in listed for tool in tools]

    def _tools_of(self, server: str) -> list[Tool]:
        try:
            from backend.tools.mcp_client import mcp_tools
            tools = mcp_tools(self._manager, server)
            listed = self._manager.listed_tools(server) or []  # the listing mcp_tools just read
            hints = {name: read_only(info.annotations) for name, info in zip(tool_names(server, listed), listed)}
            tools = [replace(t, read_only=hints.get(t.name, False)) for t in tools]
            self._listed[server] = tools
            return tools
        except McpError as exc:
            log.warning("MCP server %r left out of this turn: %s", server, exc)
        except Exception:
            log.exception("MCP server %r left out of this turn", server)
        return []

    def enabled(self) -> tuple[str, ...]:
        """The servers turns may use, in the table's order, as last reloaded (no query)."""
        return self._enabled

    def waiting_for_sign_in(self, servers: Iterable[str] | None = None) -> dict[str, str]:
        """The enabled servers (`servers`, or all) left out for want of a sign-in, by the prefix
        of their tools' names: the sentence a call to one of them gets; starts nothing."""
        if self._manager_ is None:
            return {}
        from backend.tools.mcp_client import numi_tool_name

        wanted = None if servers is None else set(servers)
        found = {}
        for server in self._enabled:
            if wanted is not None and server not in wanted:
                continue
            try:
                status = self._manager_.auth_status(server)
            except McpError:  # not reloaded yet: nothing is known of it
                continue
            if status["auth"] == "needs_sign_in":
                found[numi_tool_name(server, "")] = status["auth_error"] or (
                    f"The MCP server '{server}' needs a sign-in before its tools can run. Sign in in "
                    f"Settings → MCP servers, then ask again.")
        return found

    def known_tools(self) -> list[Tool]:
        """The enabled servers' tools as last listed, without starting anything."""
        enabled = set(self._enabled)
        return [t for server, tools in list(self._listed.items()) if server in enabled for t in tools]

    # -- for the API ------------------------------------------------------------------------

    def status(self, server_id: str) -> dict:
        """{"state", "error"}; never starts the server."""
        why = self._unavailable.get(server_id)
        if why is not None:
            return {"state": "unavailable", "error": why}
        try:
            return self._manager.status(server_id)
        except McpError:  # in the table but not reloaded yet: it is not running either way
            return {"state": "stopped", "error": None}

    def auth_status(self, server_id: str) -> dict:
        """{"auth", "account", "auth_error", "auth_storage"}: its sign-in (CONTRACT §15); starts nothing."""
        status = {"auth": None, "account": None, "auth_error": None}
        if self._manager_ is not None and server_id not in self._unavailable:
            try:
                status = self._manager_.auth_status(server_id)
            except McpError:  # in the table but not reloaded yet: nothing is known of it
                pass
        return {**status, "auth_storage": "keyring" if self.keys.status()[0] else "memory"}

    def sign_in(self, server_id: str) -> str:
        """Start a sign-in; the authorization URL (McpError, SignInNotNeeded when the server has none)."""
        self._known(server_id)
        why = self._unavailable.get(server_id)
        if why is not None:
            raise SignInNotNeeded(why)
        return self._manager.sign_in(server_id)

    def sign_out(self, server_id: str) -> None:
        """Forget its tokens (wherever it stands) and stop its session."""
        self._known(server_id)
        if server_id in self._unavailable:
            self._forget_sign_in(server_id)
            return
        self._manager.sign_out(server_id)

    def list_tools(self, server_id: str) -> list[dict]:
        """The server's tools as a turn would name them; starts it if needed, McpError when it cannot."""
        self._known(server_id)
        why = self._unavailable.get(server_id)
        if why is not None:
            raise McpError(why)
        infos = self._manager.list_tools(server_id)
        self._tools_of(server_id)  # so the approvals screen can offer a policy for each
        return _tool_dicts(server_id, infos)

    def listed_tools(self, server_id: str) -> list[dict] | None:
        """Its tools as last listed since its process started, else None; never starts anything."""
        if self._manager_ is None or server_id in self._unavailable:
            return None
        try:
            infos = self._manager_.listed_tools(server_id)
        except McpError:  # in the table but not reloaded yet: nothing was listed
            return None
        return None if infos is None else _tool_dicts(server_id, infos)

    def restart(self, server_id: str) -> dict:
        """Stop it, forget a crash, start it again (when enabled); returns its status."""
        if server_id in self._unavailable:
            self.reload()  # its secret may have been set since: try with what the keyring holds now
        self._known(server_id)
        if server_id in self._unavailable:
            return self.status(server_id)
        return self._manager.restart(server_id)

    def close(self) -> None:
        """Stop every server; safe to call twice."""
        if self._manager_ is not None:
            self._manager_.close()

    def _known(self, server_id: str) -> None:
        # The table can be a step ahead of the manager (a saved edit whose reload is still on its way).
        if server_id not in self._manager.servers() and server_id not in self._unavailable:
            self.reload()


def _tool_dicts(server: str, infos) -> list[dict]:
    return [{"name": name, "mcp_name": info.name, "description": info.description,
             "input_schema": info.input_schema, "fingerprint": info.fingerprint}
            for name, info in zip(tool_names(server, infos), infos)]


def read_only(annotations: dict | None) -> bool:
    """Whether a tool's MCP annotations say it changes nothing (unknown: it changes things)."""
    hints = annotations or {}

    def hint(snake: str, camel: str):
        return hints.get(snake, hints.get(camel))

    return hint("read_only_hint", "readOnlyHint") is True and hint("destructive_hint", "destructiveHint") is not True


def tool_names(server: str, infos) -> list[str]:
    """The Numi names mcp_tools gives these tools, in the same order (its clash rule included)."""
    from backend.tools.mcp_client import numi_tool_name

    names, taken = [], set()
    for info in infos:
        name = numi_tool_name(server, info.name)
        if name in taken:
            name = numi_tool_name(server, info.name, salt="clash")
        taken.add(name)
        names.append(name)
    return names
