"""A chat's workspace: choosing it, the tools a turn then gets, and escapes tried by the
model through scripted tool calls, which leave a sentinel outside untouched."""
from __future__ import annotations

import json
import os

import pytest

from tests.fakeprovider import script as S


@pytest.fixture
def tooled(setup, tmp_path):
    """The setup with a tool-calling model, a workspace, a sibling folder named like it, and a sentinel."""
    r = setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}})
    assert r.status == 200, r
    setup.workspace = tmp_path / "ws"
    setup.workspace.mkdir()
    (setup.workspace / "notes.txt").write_text("inside\n")
    sibling = tmp_path / "ws-evil"
    sibling.mkdir()
    setup.sentinel = sibling / "sentinel.txt"
    setup.sentinel.write_text("untouched")
    return setup


def tool_names(request) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools", [])}


def test_choosing_a_workspace_is_checked(tooled, tmp_path):
    setup = tooled
    chat = setup.chat(title="t")
    cases = {"relative/path": "full path", str(tmp_path / "nope"): "no folder", "/": "whole disk",
             str(setup.server.data_dir): "Numi's own data", str(setup.server.data_dir / "logs"): "Numi's own data",
             str(setup.server.data_dir.parent): "contains Numi's own data folder"}
    (tmp_path / "data-alias").symlink_to(setup.server.data_dir.parent)
    cases[str(tmp_path / "data-alias")] = "contains Numi's own data folder"
    (setup.server.data_dir / "logs").mkdir(exist_ok=True)
    for value, words in cases.items():
        r = setup.api.patch(f"/api/chats/{chat}", {"workspace": value})
        assert r.status == 422 and words in r.body["error"]["fields"]["workspace"], (value, r.body)
    link = tmp_path / "link-to-ws"
    link.symlink_to(setup.workspace)
    r = setup.api.patch(f"/api/chats/{chat}", {"workspace": str(link)})
    assert r.status == 200 and r.body["workspace"] == str(setup.workspace.resolve())
    assert setup.api.get(f"/api/chats/{chat}").body["workspace"] == str(setup.workspace.resolve())
    assert setup.api.patch(f"/api/chats/{chat}", {"workspace": None}).body["workspace"] is None


def test_the_tools_a_turn_gets_follow_the_model_and_the_workspace(tooled):
    setup = tooled
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    setup.fake.enqueue([S.text("a")], [S.text("b")], [S.text("c")])
    sock.send(type="send", request_id="r1", content="no workspace")
    sock.until("turn_end")
    assert setup.api.patch(f"/api/chats/{chat}", {"workspace": str(setup.workspace)}).status == 200
    sock.send(type="send", request_id="r2", content="with workspace")
    sock.until("turn_end")
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": False}}).status == 200
    sock.send(type="send", request_id="r3", content="model without tools")
    sock.until("turn_end")
    plugins = {"upper", "guarded"}
    first, second, third = (tool_names(r) for r in setup.fake.requests)
    # remember: memory is on and the chat is not temporary; doc_create: every model that calls tools (CONTRACT §11).
    assert first == plugins | {"ask_user", "web_fetch", "remember", "doc_create"}
    assert second == plugins | {"ask_user", "web_fetch", "remember", "doc_create", "list_files", "read_file", "search_files", "write_file",
                                "edit_file", "shell"}
    assert third == plugins


def test_a_missing_workspace_fails_the_turn_with_a_clear_error(tooled):
    setup = tooled
    gone = setup.workspace.parent / "gone"
    gone.mkdir()
    chat = setup.chat(title="t", workspace=str(gone))
    gone.rmdir()
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hi")
    end = sock.until("turn_end")
    assert end["status"] == "failed" and "no longer there" in json.dumps(sock.events)
    assert setup.messages(chat)[0]["content"] == "hi"  # what the person wrote is kept


def test_escapes_by_the_model_are_refused_and_touch_nothing_outside(tooled):
    setup = tooled
    chat = setup.chat(title="t", workspace=str(setup.workspace))
    for tool in ("write_file", "edit_file"):
        assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": tool, "policy": "allow"}).status == 200
    (setup.workspace / "out-link").symlink_to(setup.sentinel)
    (setup.workspace / "token-link").symlink_to(setup.server.data_dir / "server.json")
    sentinel = str(setup.sentinel)
    attempts = [
        ("read_file", {"path": "../ws-evil/sentinel.txt"}),
        ("read_file", {"path": sentinel}),
        ("read_file", {"path": "out-link"}),
        ("write_file", {"path": "../ws-evil/sentinel.txt", "content": "pwned"}),
        ("write_file", {"path": sentinel, "content": "pwned"}),
        ("write_file", {"path": "out-link", "content": "pwned"}),
        ("edit_file", {"path": "out-link", "old_text": "untouched", "new_text": "pwned"}),
        ("list_files", {"path": ".."}),
        ("search_files", {"pattern": "untouched", "path": "../ws-evil"}),
        ("read_file", {"path": "token-link"}),
        ("write_file", {"path": "token-link", "content": "{}"}),
    ]
    calls = [S.tool_call(i, f"c{i}", name, json.dumps(args)) for i, (name, args) in enumerate(attempts)]
    before = os.stat(setup.sentinel).st_mtime_ns
    setup.fake.enqueue(calls, [S.text("done")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="try")
    assert sock.until("turn_end")["status"] == "completed"
    ends = sock.of("tool_end")
    assert len(ends) == len(attempts) and not any(e["ok"] for e in ends), ends
    assert all("untouched" not in e["output"] and setup.server.token not in e["output"] for e in ends)
    assert json.loads((setup.server.data_dir / "server.json").read_text())["token"] == setup.server.token
    assert setup.sentinel.read_text() == "untouched" and os.stat(setup.sentinel).st_mtime_ns == before
    # Inside the workspace the same tools work.
    setup.fake.enqueue([S.tool_call(0, "in1", "read_file", '{"path": "notes.txt"}')], [S.text("ok")])
    sock.send(type="send", request_id="r2", content="inside")
    end = sock.until("tool_end", call_id="in1")
    assert end["ok"] and "inside" in end["output"]
