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
"""
from __future__ import annotations

import threading
from pathlib import Path

from backend.core.tools import Tool, ToolRegistry
from backend.store import settings
from backend.tools.file_index import FileIndex
from backend.tools.shell import shell_tool
from backend.tools.workspace import Workspace, workspace_tools
from backend.turns import features, modes

SHELL_NETWORK = "shell_network"  # the setting: whether sandboxed commands may use the network (default off)


def shell_network() -> bool:
    return bool(settings.get(SHELL_NETWORK))


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
                 plan_open: bool = False) -> ToolRegistry:
        """`plan_open`: the chat is carrying out a plan (update_plan stays offered)."""
        tools = ToolRegistry(self.plugins.all())
        if model_calls_tools:
            # The features' tools, each offered as its feature says (backend/turns/features.py).
            for tool in features.offered_tools(features.Offer(True, workspace, mode, plan_open, self.keys)):
                tools.add(tool)
            if workspace:
                for tool in self._workspace_tools(workspace):
                    tools.add(tool)
            if self.mcp is not None:
                for tool in self.mcp.tools():  # starts servers on demand; one that fails is left out
                    tools.add(tool)
        return ToolRegistry(modes.offered(tools.all(), mode, plan_open),
                            withheld=modes.withheld(tools.all(), mode, plan_open))

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
