"""The MCP servers' rows (catalog.toml's, kept in the `mcp_server` table), as the engine reads them."""
from __future__ import annotations

from backend.store.models import McpServer

McpServerRow = McpServer  # what `in_order` gives; only this module and the catalog query the table


def in_order() -> list[McpServer]:
    """Every server, in the order they were added."""
    return list(McpServer.select().order_by(McpServer.created_at, McpServer.id))
