"""Which processes run the MCP test server (Linux /proc): the tests assert none outlives its test."""
from __future__ import annotations

from pathlib import Path


def mcp_server_children(parent_pid: int, stdio_only: bool = False) -> set[int]:
    """Live (not zombie) children of `parent_pid` running tests/mcp_test_server.py."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
            cmdline = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue  # exited while we looked
        if (int(ppid) == parent_pid and state != "Z" and b"mcp_test_server" in cmdline
                and not (stdio_only and b"--http" in cmdline)):
            found.add(int(stat.parent.name))
    return found
