"""File changes as diffs through the real server: the approval card's `approval_required` carries
what a write will change before anything is written, `tool_end` and the saved result what it
changed; a call that changed nothing carries none."""
from __future__ import annotations

import json

import pytest

from tests.fakeprovider import script as S

NEW_FILE = "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
EDITED = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"


@pytest.fixture
def ws_chat(setup, tmp_path):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    setup.workspace = tmp_path / "ws"
    setup.workspace.mkdir()
    chat = setup.chat(title="t")
    assert setup.api.patch(f"/api/chats/{chat}", {"workspace": str(setup.workspace)}).status == 200
    return setup, chat


def call(call_id: str, name: str, **args) -> list[dict]:
    return [S.tool_call(0, call_id, name, json.dumps(args))]


def tool_row(setup, chat, call_id: str) -> dict:
    return next(m for m in setup.messages(chat) if m["role"] == "tool" and m["tool_call_id"] == call_id)


def test_a_write_shows_its_diff_before_it_runs_and_after(ws_chat):
    setup, chat = ws_chat
    target = setup.workspace / "notes.txt"
    setup.fake.enqueue(call("w1", "write_file", path="notes.txt", content="one\ntwo\n"), [S.text("written")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="write")
    ask = sock.until("approval_required")
    assert ask["name"] == "write_file" and ask["diff"] == NEW_FILE  # a new file: every line added
    assert not target.exists()  # what will change, before it changes
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    end = sock.until("tool_end")
    assert end["ok"] and end["diff"] == NEW_FILE
    assert sock.until("turn_end")["status"] == "completed"
    assert target.read_text() == "one\ntwo\n"
    assert tool_row(setup, chat, "w1")["diff"] == NEW_FILE  # a reload shows it too
    assert "diff" not in [m for m in setup.messages(chat) if m["role"] == "assistant"][0]


def test_an_allowed_edit_shows_what_it_changed_and_a_refused_one_shows_nothing(ws_chat):
    setup, chat = ws_chat
    target = setup.workspace / "notes.txt"
    target.write_text("one\ntwo\n")
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "edit_file", "policy": "allow"}).status == 200
    setup.fake.enqueue(call("e1", "edit_file", path="notes.txt", old_text="two", new_text="TWO"), [S.text("edited")],
                       call("w2", "write_file", path="notes.txt", content="gone\n"), [S.text("refused")],
                       call("e2", "edit_file", path="notes.txt", old_text="absent", new_text="x"), [S.text("failed")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="edit")
    end = sock.until("tool_end")  # no card: the policy allows it, and the row still shows the change
    assert end["ok"] and end["diff"] == EDITED and sock.of("approval_required") == []
    sock.until("turn_end")
    assert target.read_text() == "one\nTWO\n" and tool_row(setup, chat, "e1")["diff"] == EDITED

    sock.send(type="send", request_id="r2", content="overwrite")
    ask = sock.until("approval_required")
    assert ask["diff"] == "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1 @@\n-one\n-TWO\n+gone\n"
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny")
    end = sock.until("tool_end", call_id="w2")
    assert not end["ok"] and "diff" not in end  # nothing changed
    sock.until("turn_end", turn_id=ask["turn_id"])
    assert target.read_text() == "one\nTWO\n" and "diff" not in tool_row(setup, chat, "w2")

    sock.send(type="send", request_id="r3", content="edit what is not there")
    end = sock.until("tool_end", call_id="e2")
    assert not end["ok"] and "not found" in end["output"] and "diff" not in end
    sock.until("turn_end", turn_id=end["turn_id"])
