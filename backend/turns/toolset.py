"""The tools one chat's turn may call: the built-in ones its settings allow, plus plugins.

Built-in tools go only to a model that can call tools (its `supports.tools`): a server
that cannot would refuse the whole request. The features' tools come first, each as its
feature offers it (backend/features/: `ask_user`, `update_plan`, `web_fetch`, `web_search`);
the workspace tools and the shell only when the chat has a workspace folder, and they see
nothing outside it nor Numi's data dir (the shell runs sandboxed, its network as the
`shell_network` setting says); the enabled MCP servers' tools to every such chat. The chat's mode then decides what of that
is offered (backend/turns/modes.py): in plan mode only the tools that change nothing, and
`update_plan` in plan mode or while a plan is being executed. A workspace's file
index (watchdog) starts with the first turn that uses it and lives until shutdown.

Before the mode, what the chat leaves out goes (`LeftOut`, CONTRACT §15: its `tools_off`
and the tools whose policy is `deny`): such a tool is not in the request at all, so a call
to it is answered as an unknown tool, not as one the mode holds back; an MCP server off as
a whole (`mcp__<server>__*`) is not even started.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from backend.core.tools import Tool, ToolRegistry
from backend.store import mcp_servers, settings
from backend.tools.file_index import FileIndex
from backend.tools.shell import shell_tool
from backend.tools.workspace import Workspace, workspace_tools
from backend.turns import features, modes

SHELL_NETWORK = "shell_network"  # the setting: whether sandboxed commands may use the network (default off)


def shell_network() -> bool:
    return bool(settings.get(SHELL_NETWORK))


def server_pattern(server_id: str) -> str:
    """The `tools_off` name that turns a whole MCP server off."""
    return f"mcp__{server_id}__*"


@dataclass(frozen=True)
class LeftOut:
    """The tools a chat's requests leave out: exact names, and whole MCP servers by pattern."""
    names: frozenset[str] = frozenset()
    patterns: frozenset[str] = frozenset()

    @classmethod
    def of(cls, tools_off: Iterable[str] = (), denied: Iterable[str] = ()) -> LeftOut:
        off = set(tools_off)
        patterns = {n for n in off if n.startswith("mcp__") and n.endswith("__*")}
        return cls(frozenset((off - patterns) | set(denied)), frozenset(patterns))

    def tool(self, name: str) -> bool:
        return name in self.names

    def server(self, server_id: str) -> bool:
        return server_pattern(server_id) in self.patterns


NOTHING = LeftOut()


def enabled_servers() -> list[str]:
    """The ids of the MCP servers that are turned on, in the table's order."""
    return [row.id for row in mcp_servers.in_order() if row.enabled]


class Toolsets:
    def __init__(self, plugins: ToolRegistry, data_dir: Path, mcp=None, keys=None):
        self.plugins = plugins
        self.mcp = mcp  # backend/turns/mcp_runtime.py: the enabled MCP servers' tools
        self.keys = keys  # what features' tools need keys for (a search backend's; None: none)
        self.data_dir = Path(data_dir)  # never seen by the file tools nor the shell
        self._lock = threading.Lock()
        self._workspaces: dict[str, tuple[FileIndex | None, list[Tool]]] = {}
        # The workspace tools' descriptions, for settings screens (never run).
        self._catalog = [*workspace_tools(Workspace(data_dir)), shell_tool(data_dir)]

    def catalog(self) -> list[Tool]:
        """Every tool a chat could get, one per name (a built-in one wins over a plugin, as in a turn)."""
        mcp = self.mcp.known_tools() if self.mcp is not None else []  # those listed so far
        by_name = {t.name: t for t in [*self.plugins.all(), *self._catalog, *features.catalog_tools(), *mcp]}
        return list(by_name.values())

    def for_chat(self, workspace: str | None, model_calls_tools: bool, mode: str = modes.DEFAULT,
                 plan_open: bool = False, left_out: LeftOut = NOTHING, chat_id: str | None = None,
                 folder_id: str | None = None) -> ToolRegistry:
        """`plan_open`: the chat is carrying out a plan (update_plan stays offered);
        `left_out`: what the chat turns off or denies, never offered; `chat_id`, `folder_id`: whose
        tools (what the features offer may depend on the chat, e.g. its knowledge bases)."""
        tools = ToolRegistry(self.plugins.all())
        if model_calls_tools:
            # The features' tools, each offered as its feature says (backend/turns/features.py).
            offer = features.Offer(True, workspace, mode, plan_open, self.keys, chat_id, folder_id)
            for tool in features.offered_tools(offer):
                tools.add(tool)
            if workspace:
                for tool in self._workspace_tools(workspace):
                    tools.add(tool)
        waiting: dict[str, str] = {}
        if model_calls_tools and self.mcp is not None:
            # The runtime's own list, kept equal to the table: a request is built without a query for it.
            servers = None if not left_out.patterns else [s for s in self.mcp.enabled() if not left_out.server(s)]
            for tool in self.mcp.tools(servers=servers):  # started on demand; one that fails is left out
                tools.add(tool)
            # A server left out for want of a sign-in: a call to one of its tools says so.
            waiting = self.mcp.waiting_for_sign_in(servers)
        kept = [t for t in tools.all() if not left_out.tool(t.name)]
        return ToolRegistry(modes.offered(kept, mode, plan_open), withheld=modes.withheld(kept, mode, plan_open),
                            withheld_prefixes=waiting)

    def offerable(self, workspace: str | None, mode: str | None, plan_open: bool = False,
                  any_workspace: bool = False, chat_id: str | None = None,
                  folder_id: str | None = None) -> tuple[list[Tool], list[Tool]]:
        """What a chat could be offered, as (built-in, MCP as last listed), without starting
        anything: to a model that calls tools, the workspace tools with a `workspace` (or
        `any_workspace`: a folder's chats may each have one), by `mode`'s rules (None: every
        mode's tools). For the tools screens: never run."""
        tools = ToolRegistry(self.plugins.all())
        offer = features.Offer(True, workspace, mode or modes.DEFAULT, plan_open, self.keys, chat_id, folder_id)
        for tool in features.offered_tools(offer):
            tools.add(tool)
        if workspace or any_workspace:
            for tool in self._catalog:  # the same specs as a workspace's own (their text names no folder)
                tools.add(tool)
        builtin = tools.all()
        mcp = self.mcp.known_tools() if self.mcp is not None else []
        if mode is not None:
            builtin, mcp = modes.offered(builtin, mode, plan_open), modes.offered(mcp, mode, plan_open)
        return builtin, mcp

    def _workspace_tools(self, root: str) -> list[Tool]:
        with self._lock:
            if root not in self._workspaces:
                index: FileIndex | None
                index = FileIndex(root)
                try:
                    index.start()
                except OSError:
                    index = None  # listing and search then walk the folder each call
                tools = [*workspace_tools(Workspace(root, hidden=[self.data_dir]), index),
                         shell_tool(Path(root), data_dir=self.data_dir, network=shell_network)]
                self._workspaces[root] = (index, tools)
            return self._workspaces[root][1]

    def close(self) -> None:
        with self._lock:
            indexes = [index for index, _ in self._workspaces.values() if index is not None]
            self._workspaces.clear()
        for index in indexes:
            index.stop()
