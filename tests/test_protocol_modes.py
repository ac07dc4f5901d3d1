"""Modes (CONTRACT §7) through the real server and the fake provider's scripted tool calls:
`mode` on chats and folders, what each mode offers the model and what asks, and that a mode
changes only tools' own defaults (a denied tool stays denied, paths outside stay refused). A held
tool refused in plan mode and the shell in auto mode: tests/test_engine_modes.py."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from backend.turns.modes import PLAN_NOTE
from tests.fakeprovider import script as S

# ask_user is offered in every mode (CONTRACT §11): it changes nothing.
READ_ONLY = {"ask_user", "web_fetch", "list_files", "read_file", "search_files"}
CHANGING = {"write_file", "edit_file", "shell", "upper", "guarded", "remember", "doc_create"}
MCP_SERVER = str(Path(__file__).with_name("mcp_test_server.py"))


@pytest.fixture
def tooled(setup, tmp_path):
    """A tool-calling model and a workspace folder with one file, plus a sentinel beside it."""
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    setup.workspace = tmp_path / "ws"
    setup.workspace.mkdir()
    (setup.workspace / "notes.txt").write_text("inside\n")
    setup.sentinel = tmp_path / "sentinel.txt"
    setup.sentinel.write_text("untouched")
    return setup


def offered(request) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools", [])}


def system_text(request) -> str:
    first = request.body["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def turn(sock, request_id: str, content: str = "go") -> str:
    sock.send(type="send", request_id=request_id, content=content)
    return sock.until("turn_start")["turn_id"]


def call(i: int, name: str, args: dict) -> dict:
    return S.tool_call(i, f"{name}-{i}", name, json.dumps(args))


# --- the field ---------------------------------------------------------------------------

def test_chats_and_folders_take_a_mode_and_new_chats_copy_the_folders(setup):
    api = setup.api
    plain = api.post("/api/chats", {}).body
    assert plain["mode"] == "ask"
    assert api.post("/api/chats", {"mode": "plan"}).body["mode"] == "plan"
    for bad in ("yolo", "", 1, "PLAN"):
        r = api.post("/api/chats", {"mode": bad})
        assert r.status == 422 and "mode" in r.body["error"]["fields"], (bad, r.body)
        r = api.patch(f"/api/chats/{plain['id']}", {"mode": bad})
        assert r.status == 422 and "mode" in r.body["error"]["fields"], (bad, r.body)
        r = api.post("/api/folders", {"name": f"f {bad!r}", "mode": bad})
        assert r.status == 422 and "mode" in r.body["error"]["fields"], (bad, r.body)
    assert api.patch(f"/api/chats/{plain['id']}", {"mode": None}).status == 422
    patched = api.patch(f"/api/chats/{plain['id']}", {"mode": "auto"}).body
    assert patched["mode"] == "auto"
    assert api.get(f"/api/chats/{plain['id']}").body["mode"] == "auto"
    listed = {c["id"]: c for c in api.get("/api/chats").body["items"]}
    assert listed[plain["id"]]["mode"] == "auto"
    # Switching mode is no activity: the chat keeps its place in the list.
    assert patched["updated_at"] == plain["updated_at"]

    folder = api.post("/api/folders", {"name": "Reviews", "mode": "plan"}).body
    assert folder["mode"] == "plan" and api.get(f"/api/folders/{folder['id']}").body["mode"] == "plan"
    assert api.post("/api/chats", {"folder_id": folder["id"]}).body["mode"] == "plan"
    assert api.post("/api/chats", {"folder_id": folder["id"], "mode": None}).body["mode"] == "plan"
    assert api.post("/api/chats", {"folder_id": folder["id"], "mode": "edit"}).body["mode"] == "edit"
    # A copy made at creation: the folder's later change and moving a chat change nothing.
    made = api.post("/api/chats", {"folder_id": folder["id"]}).body
    assert api.patch(f"/api/folders/{folder['id']}", {"mode": None}).body["mode"] == "ask"
    assert api.get(f"/api/chats/{made['id']}").body["mode"] == "plan"
    assert api.patch(f"/api/chats/{plain['id']}", {"folder_id": folder["id"]}).body["mode"] == "auto"
    assert api.post("/api/chats", {"folder_id": folder["id"]}).body["mode"] == "ask"


# --- what is offered ---------------------------------------------------------------------

def test_plan_mode_offers_only_tools_that_change_nothing_and_asks_for_a_plan(tooled):
    setup = tooled
    chat = setup.chat(title="t", workspace=str(setup.workspace), mode="plan")
    setup.fake.enqueue([S.text("a plan")], [S.text("done")])
    sock = setup.socket(chat)
    sock.until("turn_end", turn_id=turn(sock, "r1"))
    planned = setup.fake.requests[-1]
    assert offered(planned) == READ_ONLY | {"update_plan"}
    assert PLAN_NOTE in system_text(planned)
    # The inspector shows the request as it would go: the same tools and system text.
    inspected = setup.api.get(f"/api/chats/{chat}/inspect").body
    assert {t["function"]["name"] for t in inspected["body"]["tools"]} == READ_ONLY | {"update_plan"}
    assert PLAN_NOTE in inspected["body"]["messages"][0]["content"]

    assert setup.api.patch(f"/api/chats/{chat}", {"mode": "ask"}).status == 200
    sock.until("turn_end", turn_id=turn(sock, "r2"))
    asked = setup.fake.requests[-1]
    assert offered(asked) == READ_ONLY | CHANGING
    assert PLAN_NOTE not in system_text(asked)


def test_plan_mode_offers_mcp_tools_only_when_their_hints_say_they_change_nothing(tooled):
    setup = tooled
    r = setup.api.post("/api/mcp/servers", {"id": "t", "transport": "stdio", "command": sys.executable,
                                            "args": [MCP_SERVER], "call_timeout": 20})
    assert r.status == 201, r
    try:
        chat = setup.chat(title="t", mode="plan")
        setup.fake.enqueue([S.text("a")], [S.text("b")])
        sock = setup.socket(chat)
        sock.until("turn_end", turn_id=turn(sock, "r1"))
        mcp = {n for n in offered(setup.fake.requests[-1]) if n.startswith("mcp__")}
        # add: readOnlyHint; crash: read-only *and* destructive; echo and the rest: no hints.
        assert mcp == {"mcp__t__add"}
        assert setup.api.patch(f"/api/chats/{chat}", {"mode": "ask"}).status == 200
        sock.until("turn_end", turn_id=turn(sock, "r2"))
        assert {"mcp__t__add", "mcp__t__echo", "mcp__t__crash"} <= offered(setup.fake.requests[-1])
    finally:
        setup.api.request("DELETE", "/api/mcp/servers/t")


# --- what asks ---------------------------------------------------------------------------

def test_edit_mode_runs_workspace_file_changes_unasked_and_the_shell_asks(tooled):
    setup = tooled
    chat = setup.chat(title="t", workspace=str(setup.workspace), mode="edit")
    setup.fake.enqueue([call(0, "write_file", {"path": "made.txt", "content": "new\n"}),
                        call(1, "edit_file", {"path": "notes.txt", "old_text": "inside", "new_text": "edited"}),
                        call(2, "write_file", {"path": "../sentinel.txt", "content": "pwned"}),
                        call(3, "shell", {"command": "echo hi"})], [S.text("ok")])
    sock = setup.socket(chat)
    t = turn(sock, "r1")
    ask = sock.until("approval_required", turn_id=t)
    assert ask["name"] == "shell"  # the only one that asks
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=t)
    ends = {e["call_id"]: e for e in sock.of("tool_end")}
    assert ends["write_file-0"]["ok"] and ends["edit_file-1"]["ok"]
    assert (setup.workspace / "made.txt").read_text() == "new\n"
    assert (setup.workspace / "notes.txt").read_text() == "edited\n"
    # Outside the workspace is still refused, whatever the mode.
    assert not ends["write_file-2"]["ok"] and setup.sentinel.read_text() == "untouched"
    assert len(sock.of("approval_required")) == 1

    # A tool the person denied stays denied; one they set to ask still asks.
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "write_file", "policy": "deny"}).status == 200
    assert setup.api.put("/api/approvals/policy", {"tool": "edit_file", "policy": "ask"}).status == 200
    setup.fake.enqueue([call(0, "write_file", {"path": "again.txt", "content": "x"}),
                        call(1, "edit_file", {"path": "notes.txt", "old_text": "edited", "new_text": "twice"})],
                       [S.text("ok")])
    t = turn(sock, "r2")
    ask = sock.until("approval_required", turn_id=t)
    assert ask["name"] == "edit_file"
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=t)
    denied = [e for e in sock.of("tool_end", turn_id=t) if e["name"] == "write_file"][0]
    assert not denied["ok"] and "no tool named 'write_file'" in denied["output"]  # denied: never offered
    assert not (setup.workspace / "again.txt").exists()

    # In ask mode the same file change asks.
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "write_file", "policy": None}).status == 200
    assert setup.api.patch(f"/api/chats/{chat}", {"mode": "ask"}).status == 200
    setup.fake.enqueue([call(0, "write_file", {"path": "asked.txt", "content": "x"})], [S.text("ok")])
    t = turn(sock, "r3")
    ask = sock.until("approval_required", turn_id=t)
    assert ask["name"] == "write_file"
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    sock.until("turn_end", turn_id=t)
