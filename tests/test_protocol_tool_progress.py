"""Live tool progress through the real server: an MCP tool's progress notifications (the real
MCP test server) and a shell command's output as it prints reach the client as `tool_progress`
events, in order, at most one per call every 250 ms, and none after the call's `tool_end`."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from backend.turns.progress import INTERVAL, MAX_LINES, last_lines
from tests.fakeprovider import script as S

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
COUNT = "mcp__t__count"
THROTTLE_MS = INTERVAL * 1000 - 2  # elapsed_ms is rounded down on both sides


def run_call(setup, chat: str, name: str, arguments: dict, approve: bool = False) -> tuple[list[dict], dict]:
    """One turn making one call; the call's tool_progress events, and its tool_end."""
    setup.fake.enqueue([S.tool_call(0, "c1", name, json.dumps(arguments))], [S.text("done")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    if approve:
        ask = sock.until("approval_required")
        sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    calls = [e for e in sock.events if e["type"] in ("tool_start", "tool_progress", "tool_end")]
    assert calls[0]["type"] == "tool_start" and calls[-1]["type"] == "tool_end"  # nothing after the end
    progress = [e for e in calls if e["type"] == "tool_progress"]
    assert all(e["call_id"] == "c1" and e["name"] == name for e in progress)
    return progress, calls[-1]


def assert_throttled_in_order(events: list[dict]) -> None:
    elapsed = [e["elapsed_ms"] for e in events]
    assert elapsed[0] >= THROTTLE_MS, elapsed  # a call's first INTERVAL shows no progress
    assert all(b - a >= THROTTLE_MS for a, b in zip(elapsed, elapsed[1:])), elapsed
    ids = [e["event_id"] for e in events]
    assert ids == sorted(ids)


@pytest.fixture
def mcp_setup(setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    r = setup.api.post("/api/mcp/servers", {"id": "t", "transport": "stdio", "command": sys.executable,
                                            "args": [SERVER], "call_timeout": 20})
    assert r.status == 201, r
    yield setup
    setup.api.request("DELETE", "/api/mcp/servers/t")


def test_mcp_progress_notifications_arrive_throttled_and_in_order(mcp_setup):
    setup = mcp_setup
    chat = setup.chat(title="t")
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": COUNT, "policy": "allow"}).status == 200
    # A tool never approved asks once whatever its policy (docs/PROTOCOL.md "Approvals").
    progress, end = run_call(setup, chat, COUNT, {"steps": 12, "pause": 0.1}, approve=True)
    assert end["ok"] and end["output"] == "counted to 12"
    # Twelve notifications over 1.2 s: merged to at most one per INTERVAL, never all twelve.
    assert 2 <= len(progress) < 12, [e["progress"] for e in progress]
    assert_throttled_in_order(progress)
    figures = [e["progress"] for e in progress]
    assert figures == sorted(set(figures)) and all(e["total"] == 12 for e in progress)
    assert all(e["message"] == f"step {int(e['progress'])} of 12" for e in progress)
    assert "output" not in progress[0]


@pytest.fixture
def shell_setup(setup_with, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return setup_with({"NUMI_TEST_WORKSPACE": str(workspace)})


def test_a_shell_command_streams_its_last_lines_while_it_runs(shell_setup):
    setup = shell_setup
    chat = setup.chat(title="t")
    # Thirty lines at once, then one more while it runs on: the command paces itself (its
    # pauses are longer than INTERVAL); the test waits only on events.
    command = "for i in $(seq 1 30); do echo line$i; done; sleep 0.4; echo line31; sleep 0.4"
    progress, end = run_call(setup, chat, "shell", {"command": command}, approve=True)
    assert end["ok"] and end["output"].startswith("line1\nline2\n")
    assert_throttled_in_order(progress)
    shown = [[int(line[4:]) for line in e["output"].splitlines()] for e in progress]
    # Each time the last MAX_LINES lines so far, in order; the last event has line31 (printed
    # INTERVAL and more before the command ends, so its event is never cut off by the end).
    assert all(out == list(range(max(1, out[-1] - MAX_LINES + 1), out[-1] + 1)) for out in shown), shown
    assert shown[-1] == list(range(12, 32)), shown
    assert 2 <= len(progress) < 31

def test_a_quick_call_publishes_nothing_in_its_first_interval(shell_setup):
    setup = shell_setup
    chat = setup.chat(title="t")
    progress, end = run_call(setup, chat, "shell", {"command": "echo quick"}, approve=True)
    assert end["ok"] and end["output"].startswith("quick\n")
    # The sandbox may take longer than INTERVAL to start on a loaded machine, so whether any
    # event goes out depends on timing; that none goes out within the first INTERVAL does
    # not (a call that ends within it publishes nothing: test_progress_throttle).
    assert all(e["elapsed_ms"] >= THROTTLE_MS for e in progress), progress


def test_the_output_an_event_carries_is_what_a_terminal_shows_last():
    many = "".join(f"l{i}\n" for i in range(1, 31))
    assert last_lines(many) == "".join(f"l{i}\n" for i in range(11, 31))
    assert last_lines("done 10%\rdone 50%\rdone 90%\nnext") == "done 90%\nnext"  # a redrawn line, a partial one
    assert last_lines("x" * 5000) == "x" * 2000
