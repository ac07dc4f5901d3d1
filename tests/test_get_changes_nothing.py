"""CONTRACT §2 "No GET /api/* route changes anything", route by route against the real server.

With a chat, a reply, a folder, an attachment and an MCP server in place, every GET route is
asked (HEAD too): the database and catalog.toml stay byte for byte, no MCP server process
starts, and no request leaves for the network (the loopback probe points at the fake provider,
which records every request it gets).
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from tests.conftest import Setup
from tests.fakeprovider import script as S
from tests.mcp_processes import mcp_server_children

MCP_SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


def fingerprint(data_dir: Path) -> dict[str, str]:
    return {name: hashlib.sha256((data_dir / name).read_bytes()).hexdigest()
            for name in ("numi.db", "numi.db-wal", "catalog.toml") if (data_dir / name).exists()}


def test_no_get_route_changes_anything(start_server, fake):
    setup = Setup(start_server({"NUMI_PROBE_PORTS": f"Fake={fake.port}"}), fake)
    api = setup.api
    folder = api.post("/api/folders", {"name": "Work"}).body["id"]
    chat = setup.chat(title="kept")  # titled: no title request runs after the turn
    setup.fake.enqueue([S.text("Hello there.")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hello")
    assert sock.until("turn_end")["status"] == "completed"
    sock.close()
    file_id = api.upload("a.txt", b"attached").body["id"]
    server = {"id": "x", "transport": "stdio", "command": sys.executable, "args": [MCP_SERVER]}
    assert api.post("/api/mcp/servers", server).status == 201
    routes = ["/api/health", "/api/providers", "/api/models", "/api/settings", "/api/chats", "/api/chats?archived=1",
              f"/api/chats/{chat}", f"/api/chats/{chat}/messages", f"/api/chats/{chat}/usage",
              f"/api/chats/{chat}/export?format=json", f"/api/chats/{chat}/export?format=md", "/api/export",
              "/api/folders", f"/api/folders/{folder}", "/api/trash", "/api/search?q=hello", "/api/approvals",
              f"/api/approvals?chat_id={chat}", f"/api/files/{file_id}", "/api/mcp/servers", "/api/mcp/servers/x",
              "/api/mcp/servers/x/tools", f"/api/chats/{chat}/tools", f"/api/folders/{folder}/tools", "/"]
    before, requests_before = fingerprint(setup.server.data_dir), len(fake.requests)
    for path in routes:
        for method in ("GET", "HEAD"):
            r = api.request(method, path)
            assert r.status == 200, (method, path, r)
    assert fingerprint(setup.server.data_dir) == before
    assert mcp_server_children(setup.server.proc.pid) == set()
    assert len(fake.requests) == requests_before  # nothing was probed or asked
    # The probe itself still runs, as a POST.
    assert api.post("/api/providers/suggestions").status == 200 and len(fake.requests) > requests_before
