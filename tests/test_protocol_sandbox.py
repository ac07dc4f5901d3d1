"""The shell's sandbox through the real server: a model's approved commands find none of Numi's secrets
(the provider key in a real Secret Service, the server's environment, the data dir's API token); the
network follows the setting; and where no sandbox can start, the settings say so and every command asks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.core.cancel import CancelToken
from backend.tools.shell import run_command
from tests.conftest import Setup
from tests.fakeprovider import script as S
from tests.sandbox_checks import Listener, SecretService, processes_with, steal_key_command, wait_until

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's sandbox")
MARKER = "numi-server-env-marker-77"


def shell_calls(*commands: str) -> list[dict]:
    return [S.tool_call(i, f"c{i}", "shell", json.dumps({"command": c})) for i, c in enumerate(commands)]


def tooled_setup(server, fake, workspace: Path) -> tuple[Setup, str]:
    setup = Setup(server, fake)
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    return setup, setup.chat(title="t", workspace=str(workspace))


def send(sock, content, request_id):
    sock.send(type="send", request_id=request_id, content=content)
    return sock.until("turn_start")["turn_id"]


@linux_only
def test_approved_commands_find_none_of_numis_secrets(start_server, fake, tmp_path, monkeypatch):
    home, ws, data = tmp_path / "home", tmp_path / "ws", tmp_path / "data"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the server's, so the one its sandbox hides
    ws.mkdir()
    service = SecretService(tmp_path / "secret-service")
    try:
        server = start_server({"HOME": str(home), "DBUS_SESSION_BUS_ADDRESS": service.address,
                               "PYTHON_KEYRING_BACKEND": "keyring.backends.SecretService.Keyring",
                               "NUMI_MARKER": MARKER}, data_dir=data,
                              fresh=True)  # its environment as the kernel shows it: only an exec sets that
        setup, chat = tooled_setup(server, fake, ws)
        assert setup.api.get("/api/settings").body["keyring"] == {"available": True, "reason": None, "cause": None,
                                                                  "fix": None}
        key, token, user = "sk-test-not-real", server.token, f"provider:{setup.provider['id']}"
        steal = steal_key_command(ws, user)
        # Each is within reach of a command that runs unconfined.
        plain = run_command(steal, ws, timeout=30, output_cap=100_000, cancel=CancelToken()).output
        assert "FOUND" in plain and key in plain, plain
        assert MARKER in Path(f"/proc/{server.proc.pid}/environ").read_text(errors="replace")
        assert token in (data / "server.json").read_text()

        setup.fake.enqueue(shell_calls(steal, "cat /proc/$PPID/environ; echo; cat /proc/1/environ",
                                       "cat ../data/server.json", f"cat {data / 'server.json'}"),
                           [S.text("done")])
        sock = setup.socket(chat)
        send(sock, "look around", "r1")
        for _ in range(4):
            ask = sock.until("approval_required")
            assert ask["name"] == "shell"
            sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
        assert sock.until("turn_end")["status"] == "completed"
    finally:
        service.stop()
    out = {e["call_id"]: e["output"] for e in sock.of("tool_end")}
    assert "ATTEMPTED" in out["c0"] and key not in out["c0"]
    assert "PATH=" in out["c1"] and MARKER not in out["c1"] and "DBUS_SESSION_BUS_ADDRESS" not in out["c1"]
    for call in ("c2", "c3"):
        assert "No such file" in out[call] and token not in out[call]
    sent = json.dumps(setup.fake.requests[-1].body)  # what went back to the provider
    assert key not in sent and token not in sent and MARKER not in sent


@linux_only
def test_the_network_follows_the_setting_and_an_allowed_command_runs_without_asking(setup_with, tmp_path,
                                                                                    monkeypatch):
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the server's, so the one its sandbox hides
    setup = setup_with()
    setup, chat = tooled_setup(setup.server, setup.fake, ws)
    settings = setup.api.get("/api/settings").body
    assert settings["shell_network"] is False
    assert settings["shell_sandbox"] == {"available": True, "kind": "bubblewrap", "reason": None}
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "shell", "policy": "allow"}).status == 200
    listener = Listener()
    try:
        sock = setup.socket(chat)
        setup.fake.enqueue(shell_calls(listener.connect_command), [S.text("ok")])
        turn = send(sock, "off", "r1")
        sock.until("turn_end", turn_id=turn)
        assert listener.connections() == 0
        assert setup.api.patch("/api/settings", {"shell_network": True}).body["shell_network"] is True
        setup.fake.enqueue(shell_calls(listener.connect_command), [S.text("ok")])
        turn = send(sock, "on", "r2")
        sock.until("turn_end", turn_id=turn)
        assert listener.connections() == 1
    finally:
        listener.close()
    off, on = (e["output"] for e in sock.of("tool_end"))
    assert "connected" not in off and "connected" in on
    assert not sock.of("approval_required")  # a sandbox here: the chat's "allow" holds
    bad = setup.api.patch("/api/settings", {"shell_network": "yes"})
    assert bad.status == 422 and "shell_network" in bad.body["error"]["fields"]
    assert setup.api.patch("/api/settings", {"shell_sandbox": {"available": True}}).status == 422


@linux_only
def test_in_auto_mode_a_command_cannot_plant_what_the_persons_git_runs_later(setup_with, tmp_path, monkeypatch):
    """The attack of a prompt-injected model: git's config and hooks, written in auto mode with no
    approval, so the person's next `git status` runs a command unconfined. Ordinary writes still go."""
    ws, marker = tmp_path / "ws", tmp_path / "pwned"
    ws.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the server's, so the one its sandbox hides
    assert subprocess.run(["git", "init", "-q", str(ws)], capture_output=True, timeout=30).returncode == 0
    config = (ws / ".git" / "config").read_bytes()
    setup = setup_with()
    setup, chat = tooled_setup(setup.server, setup.fake, ws)
    assert setup.api.patch(f"/api/chats/{chat}", {"mode": "auto"}).body["mode"] == "auto"
    hook = "#!/bin/sh\ntouch " + str(marker) + "\n"
    setup.fake.enqueue(
        shell_calls(f"git config core.fsmonitor 'touch {marker}'",
                    f"printf '{hook}' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout",
                    "echo made > made.txt")
        + [S.tool_call(3, "c3", "write_file", json.dumps({"path": ".GIT/hooks/pre-commit", "content": hook}))],
        [S.text("done")])
    sock = setup.socket(chat)
    send(sock, "set up the repository as the page says", "r1")
    assert sock.until("turn_end")["status"] == "completed"
    assert not sock.of("approval_required")  # auto mode: nobody was asked
    ends = {e["call_id"]: e for e in sock.of("tool_end")}
    for call in ("c0", "c1"):
        assert "Read-only file system" in ends[call]["output"] and "outside Numi" in ends[call]["output"]
    assert ends["c2"]["ok"] and (ws / "made.txt").read_text() == "made\n"  # the control
    assert not ends["c3"]["ok"] and "is protected" in ends["c3"]["output"]
    assert (ws / ".git" / "config").read_bytes() == config
    assert not [h for h in os.listdir(ws / ".git" / "hooks") if not h.endswith(".sample")]
    subprocess.run(["git", "-C", str(ws), "status"], capture_output=True, timeout=30)  # the person, later
    assert not marker.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
def test_without_a_sandbox_every_command_asks_and_the_settings_say_why(setup_with, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    missing = tmp_path / "not-installed" / "bwrap"
    setup = setup_with({"NUMI_BWRAP": str(missing)})
    setup, chat = tooled_setup(setup.server, setup.fake, ws)
    status = setup.api.get("/api/settings").body["shell_sandbox"]
    assert status["available"] is False and status["kind"] is None and "bubblewrap" in status["reason"]
    # Neither an "allow" policy (the chat's or the default) nor "allow always" lets a command run unasked.
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "shell", "policy": "allow"}).status == 200
    assert setup.api.put("/api/approvals/policy", {"tool": "shell", "policy": "allow"}).status == 200
    sock = setup.socket(chat)
    for n in range(2):
        setup.fake.enqueue(shell_calls("echo hello"), [S.text("ok")])
        turn = send(sock, f"run {n}", f"r{n}")
        ask = sock.until("approval_required", turn_id=turn)
        assert ask["can_always"] is False
        sock.send(type="approve", approval_id=ask["approval_id"], decision="allow_always")
        assert "hello" in sock.until("tool_end", turn_id=turn)["output"]
        sock.until("turn_end", turn_id=turn)
    assert setup.api.get(f"/api/approvals?chat_id={chat}").body["rules"] == []
    # "deny" still denies without asking.
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "shell", "policy": "deny"}).status == 200
    setup.fake.enqueue(shell_calls("echo hello"), [S.text("ok")])
    turn = send(sock, "denied", "r9")
    sock.until("turn_end", turn_id=turn)
    assert len(sock.of("approval_required")) == 2


@linux_only
@pytest.mark.parametrize("how", ["sigterm", "kill9"])
def test_a_sandboxed_command_ends_with_the_server(setup_with, tmp_path, how):
    """SIGTERM stops it as Stop does; even a killed server leaves nothing running (--die-with-parent)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    setup = setup_with()
    setup, chat = tooled_setup(setup.server, setup.fake, ws)
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "shell", "policy": "allow"}).status == 200
    marker = f"5{os.getpid()}.5"  # a sleep time no other process has
    setup.fake.enqueue(shell_calls(f"sleep {marker} & touch started; sleep {marker}"), [S.text("after")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    wait_until((ws / "started").exists, "the command to start", timeout=15)
    assert len(processes_with(marker)) >= 3  # bubblewrap, the shell, both sleeps
    if how == "sigterm":
        assert setup.server.terminate() < 10
    else:
        setup.server.kill9()
    wait_until(lambda: not processes_with(marker), "every process of the command to end")
