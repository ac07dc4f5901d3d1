"""The shell's sandbox, through the real shell tool: an approved command finds no secret (the keyring
on a real Secret Service, Numi's environment, the data dir's API token), sees the workspace writable and
the system read-only, the network as set, and ends whole on Stop and timeout. Each secret is first shown
to be within reach of the same command run unconfined, so the test can fail."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from backend.core.cancel import CancelToken
from backend.tools import sandbox
from backend.tools.shell import run_command, shell_tool
from tests.sandbox_checks import Listener, SecretService, processes_with, steal_key_command, wait_until

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's sandbox")
ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-" + "sandbox-test-5e1c7a9b3d"  # built, so no scanner mistakes it for a real key
TOKEN = "token-" + "sandbox-test-8f2d6b0a4c"


@pytest.fixture
def confined(tmp_path, monkeypatch):
    """A workspace and a data dir with a server.json side by side, under a home folder of the test's own."""
    if sys.platform.startswith("linux") and not sandbox.status().available:
        pytest.fail(f"no sandbox here: {sandbox.status().reason}")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (data / "server.json").write_text(json.dumps({"port": 1, "token": TOKEN}))
    return ws, data


def shell(ws, data, command, *, network=False, cancel=None, **kw) -> str:
    tool = shell_tool(ws, data_dir=data, network=lambda: network, **kw)
    return tool.run({"command": command}, cancel or CancelToken())


def unconfined(ws, command) -> str:
    """The same command without a sandbox: what a confined one must not get."""
    return run_command(command, ws, timeout=30, output_cap=100_000, cancel=CancelToken()).output


# --- the three secrets -------------------------------------------------------------------------

@linux_only
def test_an_approved_keyring_command_gets_no_key(confined, tmp_path, monkeypatch):
    ws, data = confined
    service = SecretService(tmp_path / "secret-service")
    try:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", service.address)  # Numi's own session bus
        from keyring.backends.SecretService import Keyring
        Keyring().set_password("numi", "provider:p1", KEY)
        command = steal_key_command(ws, "provider:p1")
        plain = unconfined(ws, command)
        assert "FOUND" in plain and KEY in plain, plain  # within reach without the sandbox
        out = shell(ws, data, command)
    finally:
        service.stop()
    assert "ATTEMPTED" in out and "TRIED 0" in out, out  # it ran, and found no bus to ask
    assert KEY not in out


# A stand-in for Numi's process: /proc/<pid>/environ is the environment a process started with,
# so the marker has to be there from the start. It runs the command both ways and prints both.
PARENT = r"""
import json, sys
from pathlib import Path
from backend.core.cancel import CancelToken
from backend.tools.shell import run_command, shell_tool
ws, data, command = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
plain = run_command(command, ws, timeout=30, output_cap=100_000, cancel=CancelToken()).output
confined = shell_tool(ws, data_dir=data).run({"command": command}, CancelToken())
print(json.dumps({"unconfined": plain, "confined": confined}))
"""


@linux_only
def test_the_parent_process_environment_is_not_numis(confined):
    ws, data = confined
    env = {**os.environ, "NUMI_MARKER": "numi-env-marker-31", "OPENAI_API_KEY": KEY}
    command = "cat /proc/$PPID/environ; echo; cat /proc/1/environ"
    done = subprocess.run([sys.executable, "-c", PARENT, str(ws), str(data), command], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert "numi-env-marker-31" in out["unconfined"] and KEY in out["unconfined"]
    assert "PATH=" in out["confined"]  # it read an environment: the sandbox's own
    for secret in ("numi-env-marker-31", KEY, "DBUS_SESSION_BUS_ADDRESS"):
        assert secret not in out["confined"], out["confined"]


@linux_only
@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_the_data_dirs_api_token_is_out_of_sight(confined, how):
    ws, data = confined
    target = "../data/server.json" if how == "relative" else str(data / "server.json")
    command = f"cat {target}; ls -a {data}"
    assert TOKEN in unconfined(ws, command)
    out = shell(ws, data, command)
    assert TOKEN not in out and "server.json" not in out.replace(target, "")


@linux_only
def test_a_data_dir_inside_the_workspace_stays_hidden(confined, tmp_path):
    """A workspace chosen before such folders were refused."""
    _, data = confined
    ws = tmp_path
    out = shell(ws, data, "cat data/server.json; ls -a data; echo listed")
    assert TOKEN not in out and "server.json" not in out.replace("data/server.json", "") and "listed" in out


@linux_only
def test_the_environment_is_built_from_nothing(confined, monkeypatch):
    ws, data = confined
    monkeypatch.setenv("HARMLESS_SETTING", "x")
    names = {line.split("=", 1)[0] for line in shell(ws, data, "env").splitlines()[:-1] if "=" in line}
    assert names <= {"PATH", "HOME", "LANG", "TERM", "PWD", "SHLVL", "OLDPWD", "_"}, names
    assert {"PATH", "HOME", "LANG", "TERM"} <= names


# --- what a command sees -------------------------------------------------------------------------

@linux_only
def test_workspace_writable_system_read_only_home_and_temp_hidden(confined, tmp_path):
    ws, data = confined
    home = Path(os.environ["HOME"])
    (home / "private.txt").write_text("home-secret")
    outside = Path("/tmp") / f"numi-sandbox-test-{os.getpid()}"
    outside.write_text("tmp-secret")
    try:
        out = shell(ws, data, f"echo made > made.txt; touch /usr/numi-sandbox-test 2>&1; "
                              f"cat {home}/private.txt {outside} 2>&1")
        listed = shell(ws, data, f"ls -A {home} /tmp")
    finally:
        outside.unlink()
    assert (ws / "made.txt").read_text() == "made\n"
    assert "Read-only file system" in out and not Path("/usr/numi-sandbox-test").exists()
    assert "home-secret" not in out and "tmp-secret" not in out
    # Both are empty but for the mount point bubblewrap made on the way to the workspace.
    assert "private.txt" not in listed and outside.name not in listed and "pytest-of" in listed


@linux_only
def test_a_workspace_inside_the_home_folder_is_the_only_part_of_it_seen(confined, tmp_path):
    _, data = confined
    home = Path(os.environ["HOME"])
    ws = home / "project"
    ws.mkdir()
    (ws / "mine.txt").write_text("project file")
    (home / "other.txt").write_text("home-secret")
    out = shell(ws, data, "cat mine.txt; cat ../other.txt 2>&1")
    assert "project file" in out and "home-secret" not in out
    assert shell(ws, data, "ls -A ..").splitlines()[:-1] == ["project"]


@linux_only
def test_only_the_systems_program_folders_are_seen(confined):
    """/home (other users' homes with it), /srv and /mnt are out of sight; git, python3, perl and sh still run."""
    ws, data = confined
    roots = [Path(p) for p in ("/srv", "/mnt", "/home") if os.path.isdir(p)]
    if not roots:
        pytest.skip("this system has none of /srv, /mnt, /home")
    planted = []
    try:
        for root in roots:
            if os.access(root, os.W_OK):  # a file the test can show is there (running as root)
                marker = root / f"numi-sandbox-test-{os.getpid()}"
                marker.write_text("not for the sandbox")
                planted.append(marker)
        command = " ".join(f"ls -A {r} 2>&1;" for r in roots) + "".join(f" cat {m} 2>&1;" for m in planted)
        plain = unconfined(ws, command)
        assert "cannot access" not in plain and plain.count("not for the sandbox") == len(planted)
        out = shell(ws, data, command + " git --version; python3 -c 'print(6 * 7)'; perl -e 'print 2 * 3, qq(\\n)'; "
                                        "sh -c 'echo sh-ok'")
    finally:
        for marker in planted:
            marker.unlink()
    assert "not for the sandbox" not in out
    for root in roots:
        assert f"cannot access '{root}': No such file or directory" in out, out
    assert "git version" in out and "\n42\n" in out and "\n6\n" in out and "sh-ok" in out, out


@linux_only
def test_the_network_is_off_unless_turned_on(confined):
    ws, data = confined
    listener = Listener()
    try:
        off = shell(ws, data, listener.connect_command)
        assert "connected" not in off and listener.connections() == 0
        on = shell(ws, data, listener.connect_command, network=True)
        assert "connected" in on and listener.connections() == 1
    finally:
        listener.close()


# --- Stop and the timeout end the whole sandboxed tree ---------------------------------------------

@linux_only
def test_stop_ends_the_sandbox_and_everything_in_it(confined):
    ws, data = confined
    marker = f"3{os.getpid()}.25"  # a sleep time no other process has
    cancel = CancelToken()
    box = {}
    thread = threading.Thread(target=lambda: box.update(out=shell(
        ws, data, f"sleep {marker} & touch started; sleep {marker}", cancel=cancel)), daemon=True)
    thread.start()
    wait_until((ws / "started").exists, "the command to start")
    assert len(processes_with(marker)) >= 3  # bubblewrap, the shell, both sleeps
    stopped = time.monotonic()
    cancel.cancel()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - stopped < 10
    assert "stopped by the person" in box["out"]
    wait_until(lambda: not processes_with(marker), "every process of the command to end")


@linux_only
def test_the_timeout_ends_the_sandbox_and_everything_in_it(confined):
    ws, data = confined
    marker = f"4{os.getpid()}.75"
    started = time.monotonic()
    out = shell(ws, data, f"sleep {marker} & sleep {marker}", timeout_default=0.5)
    assert time.monotonic() - started < 10 and "timed out after 0.5 s" in out
    wait_until(lambda: not processes_with(marker), "every process of the command to end")


# --- no sandbox ------------------------------------------------------------------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell")
def test_without_bubblewrap_the_status_says_so_and_commands_run_unconfined(tmp_path, monkeypatch):
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(tmp_path / "no" / "bwrap"))
    status = sandbox.status()
    if sys.platform.startswith("linux"):
        assert status.available is False and status.kind is None
        assert str(tmp_path / "no" / "bwrap") in status.reason and "apt install bubblewrap" in status.reason
    (tmp_path / "outside.txt").write_text("seen")
    ws = tmp_path / "ws"
    ws.mkdir()
    out = shell_tool(ws).run({"command": "cat ../outside.txt"}, CancelToken())
    assert out.startswith("seen\n")  # nothing confines it: hence the approvals ask before each command


def test_a_bwrap_that_cannot_start_is_reported(tmp_path, monkeypatch):
    if not sys.platform.startswith("linux"):
        pytest.skip("bubblewrap is Linux's sandbox")
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(broken))
    status = sandbox.status()
    assert status.available is False
    assert "No permissions to create new namespace" in status.reason and "user namespaces" in status.reason


# --- macOS -------------------------------------------------------------------------------------------

def test_the_seatbelt_profile_keeps_paths_inside_their_strings(tmp_path):
    odd = tmp_path / 'ws") (allow default) ("'
    odd.mkdir()
    profile = sandbox.seatbelt_profile(odd, data_dir=tmp_path / "data", tmp=tmp_path, network=False, home=None)
    outside, in_string, escaped = [], False, False
    for c in profile:  # the profile's text outside its string literals
        if in_string:
            in_string = escaped or c != '"'
            escaped = not escaped and c == "\\"
        elif c == '"':
            in_string = True
        else:
            outside.append(c)
    assert "(allow default)" not in "".join(outside) and not in_string
    assert '(subpath "' + str(tmp_path / "data") + '")' in profile and "network" not in profile


def test_the_seatbelt_profile_keeps_protected_names_unwritable_in_any_case_existing_or_not(tmp_path):
    """sandbox-exec cannot run here: the profile's write rule is checked as text, its regex with Python's."""
    profile = sandbox.seatbelt_profile(tmp_path, data_dir=None, tmp=Path("/private/var/folders/x"), network=False,
                                       home=None)
    write_rules = [line for line in profile.splitlines() if "file-write*" in line and str(tmp_path) in line]
    assert write_rules == [f'(allow file-write* (require-all (subpath "{tmp_path}") '
                           f'(require-not (regex #"{sandbox.PROTECTED_REGEX}"))))']
    denied = ["/ws/.git/config", "/ws/.GIT/hooks/pre-commit", "/ws/.git", "/ws/sub/.envrc", "/ws/.VSCode/tasks.json",
              "/ws/.idea", "/ws/p/.husky/pre-commit", "/ws/.pre-commit-config.yaml"]
    allowed = ["/ws/.github/ci.yml", "/ws/.gitignore", "/ws/.envrc.example", "/ws/my.git/x", "/ws/notes.txt",
               "/ws/vscode/settings.json"]
    assert all(re.search(sandbox.PROTECTED_REGEX, p) for p in denied)
    assert not any(re.search(sandbox.PROTECTED_REGEX, p) for p in allowed)


@pytest.mark.skipif(sys.platform != "darwin", reason="sandbox-exec is macOS's sandbox; not testable on this system")
def test_macos_sandbox_hides_home_data_dir_and_keychain(confined, tmp_path):
    ws, data = confined
    home = Path(os.environ["HOME"])
    (home / "private.txt").write_text("home-secret")
    out = shell(ws, data, f"echo made > made.txt; cat {data}/server.json {home}/private.txt 2>&1; "
                          f"touch /usr/local/numi-sandbox-test 2>&1; security find-generic-password -s numi 2>&1")
    assert (ws / "made.txt").read_text() == "made\n"
    assert TOKEN not in out and "home-secret" not in out
    assert not Path("/usr/local/numi-sandbox-test").exists()


@pytest.mark.skipif(sys.platform != "darwin", reason="sandbox-exec is macOS's sandbox; not testable on this system")
def test_macos_sandbox_keeps_git_config_hooks_and_envrc_unwritable(confined):
    ws, data = confined
    subprocess.run(["git", "init", "-q", str(ws)], check=True, capture_output=True, timeout=30)
    config = (ws / ".git" / "config").read_bytes()
    out = shell(ws, data, "git config core.fsmonitor 'touch x'; echo x > .git/hooks/pre-commit; "
                          "echo x > .envrc; mkdir .VSCode; echo made > made.txt")
    assert (ws / ".git" / "config").read_bytes() == config and "outside Numi" in out
    assert not (ws / ".git" / "hooks" / "pre-commit").exists() and not (ws / ".envrc").exists()
    assert not (ws / ".VSCode").exists() and (ws / "made.txt").read_text() == "made\n"
