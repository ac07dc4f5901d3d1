"""Modes (CONTRACT §7) in process (tests/engine.py): a tool plan mode holds back is refused when
called anyway, and auto mode runs the shell unasked only while it reaches nothing outside.
What each mode offers and asks, over the wire: tests/test_protocol_modes.py."""
from __future__ import annotations

import pytest

from backend.store import settings
from backend.tools import sandbox
from backend.turns import approvals
from backend.turns.toolset import SHELL_NETWORK


@pytest.fixture
def workspace(tmp_path):
    """A workspace folder with one file."""
    folder = (tmp_path / "ws").resolve()
    folder.mkdir()
    (folder / "notes.txt").write_text("inside\n")
    return folder


def test_a_tool_plan_mode_does_not_offer_is_refused_when_called_anyway(engine, workspace):
    chat = engine.chat(workspace=str(workspace), mode="plan")
    # Even a policy that allows it does not bring it back.
    approvals.set_policy(chat, "write_file", "allow")
    events = engine.events(chat)
    engine.model.calls_each([("write_file-0", "write_file", {"path": "new.txt", "content": "x"}),
                             ("read_file-1", "read_file", {"path": "notes.txt"})])
    engine.model.says("ok")
    engine.turns.send(chat, "r1", "go", [])
    assert events.until("turn_end")["status"] == "completed"
    ends = {e["name"]: e for e in events.of("tool_end")}
    # Said as a tool the mode holds back (not as one that does not exist), and what to do instead.
    assert not ends["write_file"]["ok"] and ends["write_file"]["output"].startswith("Not offered in Plan mode.")
    assert "no tool named" not in ends["write_file"]["output"] and "update_plan" in ends["write_file"]["output"]
    assert "write_file" not in {e["name"] for e in events.of("tool_start")}  # refused before it would run
    assert ends["read_file"]["ok"] and "inside" in ends["read_file"]["output"]
    assert not (workspace / "new.txt").exists() and not events.of("approval_required")


def test_auto_mode_runs_the_shell_unasked_only_while_it_reaches_nothing_outside(engine, workspace):
    confined = sandbox.status().available
    chat = engine.chat(workspace=str(workspace), mode="auto")
    events = engine.events(chat)
    engine.model.calls_each([("shell-0", "shell", {"command": "echo made > made.txt"}),
                             ("web_fetch-1", "web_fetch", {"url": "http://127.0.0.1:9/page"})])
    engine.model.says("ok")
    engine.turns.send(chat, "r1", "go", [])
    # A fetch reaches outside the workspace: it asks, in auto too.
    ask = events.until("approval_required")
    assert ask["name"] == ("web_fetch" if confined else "shell")
    if not confined:  # no sandbox: every command asks, auto or not
        engine.turns.approve(chat, ask["approval_id"], "allow")
        ask = events.until("approval_required")
        assert ask["name"] == "web_fetch"
    engine.turns.approve(chat, ask["approval_id"], "deny")
    events.until("turn_end")
    assert (workspace / "made.txt").read_text().strip() == "made"

    # With the network on for commands, a command can reach outside: it asks again.
    settings.put(SHELL_NETWORK, True)
    engine.model.calls("shell", {"command": "echo again"}, "shell-2")
    engine.model.says("ok")
    engine.turns.send(chat, "r2", "go", [])
    ask = events.until("approval_required")
    assert ask["name"] == "shell"
    engine.turns.approve(chat, ask["approval_id"], "deny")
    events.until("turn_end")
