"""What a chat leaves out of its requests (CONTRACT §15), and its tools as the tools screens list them.

A chat's `tools_off` (null: its folder's, read at each request) names tools, or whole MCP
servers as `mcp__<server>__*`; a tool whose policy is `deny` (the chat's, else the default)
is left out the same way. `GET /api/chats/{id}/tools` and `GET /api/folders/{id}/tools`
(docs/PROTOCOL.md, "Tools per chat") list them by group with the tokens each costs,
counted as the meter's `parts.tools` counts them; listing never starts an MCP server.
"""
from __future__ import annotations

from typing import Any

from backend.core import tokens
from backend.core.tools import Tool
from backend.store import chats
from backend.store.chats import ChatRow
from backend.turns import approvals, features
from backend.turns.toolset import LeftOut, Toolsets, enabled_servers, server_pattern

BUILTIN = "builtin"


def denied(chat_id: str | None) -> set[str]:
    """The tools whose policy is `deny`: the chat's own policy, else the default (None: the default only)."""
    own = approvals.policies(chat_id) if chat_id else {}
    default = approvals.policies(None)
    return {name for name in {*own, *default} if (own.get(name) or default.get(name)) == "deny"}


def left_out(chat: ChatRow) -> LeftOut:
    """What the chat's next request leaves out: its tools that are off, and the denied ones."""
    _, _, effective = chats.tools_off(chat)
    return LeftOut.of(effective, denied(chat.id))


def chat_listing(toolsets: Toolsets, chat: ChatRow) -> dict:
    """`GET /api/chats/{id}/tools`: the tools its next request could carry in its mode, by group."""
    own, inherited, effective = chats.tools_off(chat)
    builtin, mcp = toolsets.offerable(chat.workspace or None, chat.mode, features.plan_open(chat.id),
                                      chat_id=chat.id, folder_id=chat.folder_id)
    by = "chat" if own is not None else "folder"
    return {"tools_off": own, "inherited": inherited, "effective": effective,
            "groups": _groups(builtin, mcp, effective, denied(chat.id), by)}


def folder_listing(toolsets: Toolsets, folder: Any) -> dict:
    """`GET /api/folders/{id}/tools`: every tool a chat in it could be offered, whatever its mode."""
    own = list(folder.tools_off) if folder.tools_off is not None else None
    builtin, mcp = toolsets.offerable(None, None, any_workspace=True, folder_id=folder.id)
    return {"tools_off": own, "inherited": None, "effective": own or [],
            "groups": _groups(builtin, mcp, own or [], denied(None), "folder")}


def _groups(builtin: list[Tool], mcp: list[Tool], effective: list[str], refused: set[str], by: str) -> list[dict]:
    off = LeftOut.of(effective)
    servers = enabled_servers()
    listed = _by_server(servers, mcp)
    groups = [_group(BUILTIN, "Built-in", None, builtin, off, refused, by, server_off=False)]
    for server in servers:
        groups.append(_group(f"mcp:{server}", server, server, listed[server], off, refused, by,
                             server_off=off.server(server)))
    return groups


def _group(group_id: str, label: str, server: str | None, tools: list[Tool], off: LeftOut, refused: set[str],
           by: str, server_off: bool) -> dict:
    rows = []
    for tool in tools:
        off_by = "policy" if tool.name in refused else by if server_off or off.tool(tool.name) else None
        rows.append({"name": tool.name, "description": _description(tool, server), "on": off_by is None,
                     "off_by": off_by, "tokens": tokens.tools_tokens([tool.spec])})
    # What the group costs when it is on: a denied tool is never offered, so it costs nothing.
    cost = tokens.tools_tokens([t.spec for t in tools if t.name not in refused])
    on = not server_off if server is not None else any(r["on"] for r in rows)
    return {"id": group_id, "label": label, "server": server,
            "pattern": server_pattern(server) if server is not None else None,
            "on": on, "tokens": cost, "tools": rows}


def _description(tool: Tool, server: str | None) -> str:
    """The tool's own description (an MCP tool's without the server note the model reads)."""
    text = tool.spec.description or ""
    note = f"[MCP server '{server}'] "
    return text[len(note):] if server is not None and text.startswith(note) else text


def _by_server(servers: list[str], tools: list[Tool]) -> dict[str, list[Tool]]:
    """Each server's tools, by the `mcp__<server>__` their names start with (the longest wins,
    so a server `a` does not take the tools of a server `a__b`)."""
    out: dict[str, list[Tool]] = {s: [] for s in servers}
    if not tools:
        return out
    from backend.tools.mcp_client import numi_tool_name  # the SDK is loaded already: tools were listed

    prefixes = sorted(((numi_tool_name(s, ""), s) for s in servers), key=lambda p: -len(p[0]))
    for tool in tools:
        for prefix, server in prefixes:
            if tool.name.startswith(prefix):
                out[server].append(tool)
                break
    return out
