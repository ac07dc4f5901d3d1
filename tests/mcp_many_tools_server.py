"""An MCP server over stdio that lists many generated tools, each described and with arguments as a
real server's are (the tools-per-chat benchmark gives a chat several of them).

Knobs (environment):
  NUMI_MCP_MANY_TOOLS          how many tools it lists (default 20): tool_00, tool_01, …
  NUMI_MCP_TEST_STARTED_FILE   this process appends its pid to this file as it starts
"""
from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("numi-many-tools")


def _tool(i: int):
    def run(query: str, limit: int = 10, cursor: str = "") -> str:
        return f"tool_{i:02d} found nothing for {query!r} (limit {limit})"
    return run


for _i in range(int(os.environ.get("NUMI_MCP_MANY_TOOLS", "20"))):
    server.add_tool(_tool(_i), name=f"tool_{_i:02d}",
                    description=(f"Search collection {_i} of the workspace for records matching a query. Returns "
                                 f"at most `limit` records, newest first, each with its id, title, owner and the "
                                 f"date it last changed; pass the returned `cursor` to read the next page."))


if __name__ == "__main__":
    if started := os.environ.get("NUMI_MCP_TEST_STARTED_FILE"):
        with open(started, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    server.run("stdio")
