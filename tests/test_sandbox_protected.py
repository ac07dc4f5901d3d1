"""What other programs run on the person's behalf (git's config and hooks, .envrc, editor settings) stays
read-only to the sandboxed shell: the real bubblewrap sandbox, real git. Each refusal is paired with a
control showing the same kind of write goes through where nothing is protected, and the attack itself
(a git config that a later, unconfined `git status` runs) is shown to work without the sandbox."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from backend.core.cancel import CancelToken
from backend.tools import sandbox
from backend.tools.protected_paths import RESERVED
from backend.tools.shell import run_command, shell_tool
from tests.sandbox_checks import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's sandbox")
NOTE = "this command met protected workspace files"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository as the workspace, a data dir beside it, and a home folder of the test's own."""
    if not sandbox.status().available:
        pytest.fail(f"no sandbox here: {sandbox.status().reason}")
    home, ws, data = tmp_path / "home", tmp_path / "ws", tmp_path / "data"
    for folder in (home, ws, data):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    git(ws, "init", "-q")
    return ws, data


def git(where: Path, *args: str) -> subprocess.CompletedProcess:
    """git run the way the person runs it: unconfined, with their environment."""
    return subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=30)


def shell(ws: Path, data: Path, command: str) -> str:
    return shell_tool(ws, data_dir=data).run({"command": command}, CancelToken())


def fsmonitor_command(marker: Path) -> str:
    return f"git config core.fsmonitor {shlex.quote(f'touch {marker}')}"


def test_git_config_fsmonitor_from_the_sandbox_never_reaches_the_persons_git(repo, tmp_path):
    ws, data = repo
    marker = tmp_path / "pwned"
    before = (ws / ".git" / "config").read_bytes()
    out = shell(ws, data, fsmonitor_command(marker))
    assert "Read-only file system" in out and NOTE in out and "outside Numi" in out, out
    assert (ws / ".git" / "config").read_bytes() == before
    git(ws, "status")  # the person's next git call: their prompt, their editor, by hand
    assert not marker.exists()

    # Control: unconfined, the same command is the attack: the next `git status` runs it.
    plain = tmp_path / "plain"
    git(tmp_path, "init", "-q", str(plain))
    run_command(fsmonitor_command(marker), plain, timeout=30, output_cap=10_000, cancel=CancelToken())
    git(plain, "status")
    assert marker.exists()
    # And inside the sandbox the same write goes through where nothing is protected.
    out = shell(ws, data, f"git config --file settings.ini core.fsmonitor 'touch {marker}' && echo wrote")
    assert "wrote" in out and NOTE not in out and "fsmonitor" in (ws / "settings.ini").read_text()


WRITES = {
    ".git/hooks/pre-commit": "printf '#!/bin/sh\\ntouch x\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/*",
    ".envrc": "echo 'touch x' > .envrc",
    ".vscode/settings.json": "mkdir -p .vscode && echo '{}' > .vscode/settings.json",
    ".idea/workspace.xml": "mkdir -p .idea && echo '<x/>' > .idea/workspace.xml",
    ".husky/pre-commit": "mkdir -p .husky && echo 'touch x' > .husky/pre-commit",
    ".pre-commit-config.yaml": "echo 'repos: []' > .pre-commit-config.yaml",
}
# git runs .husky and .pre-commit-config.yaml only through its hooks and config, which stay read-only,
# so a new one changes nothing: they are protected where they exist, not reserved where they do not.
CASES = [pytest.param(t, c, True, id=f"{t} existing") for t, c in WRITES.items()] + [
    pytest.param(t, c, False, id=f"{t} missing") for t, c in WRITES.items() if t.split("/")[0] in RESERVED]


@pytest.mark.parametrize("target, command, existing", CASES)
def test_hooks_envrc_and_editor_settings_cannot_be_written(repo, target, command, existing):
    ws, data = repo
    path = ws / target
    if existing:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("the person's own\n")
    out = shell(ws, data, f"echo ok > ordinary.txt; {command}")
    assert NOTE in out, out
    if existing:
        assert path.read_text() == "the person's own\n"
    else:
        assert not path.exists()
    assert (ws / "ordinary.txt").read_text() == "ok\n"  # the control, in the same command


def test_protected_folders_cannot_be_moved_or_removed(repo):
    ws, data = repo
    (ws / ".envrc").write_text("mine\n")
    out = shell(ws, data, "mv .git old-git; rm -rf .git .envrc; mv .envrc elsewhere; "
                          "mkdir junk && mv junk moved && echo control")
    assert "control" in out and NOTE in out, out
    assert (ws / ".git" / "config").is_file() and (ws / ".envrc").read_text() == "mine\n"
    assert (ws / "moved").is_dir() and not (ws / "old-git").exists()


def test_a_fresh_workspace_gets_no_git_repository_and_keeps_no_placeholders(tmp_path, monkeypatch):
    if not sandbox.status().available:
        pytest.fail(f"no sandbox here: {sandbox.status().reason}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    out = shell(ws, data, "git init . && git config core.fsmonitor 'touch x'; echo made > made.txt")
    assert NOTE in out, out
    assert sorted(os.listdir(ws)) == ["made.txt"]  # the empty stand-ins are gone again
    assert not (data / sandbox.PLACEHOLDERS).exists()


def test_what_the_person_puts_in_a_placeholder_meanwhile_is_kept(tmp_path, monkeypatch):
    """A repository the person makes while a command runs is theirs: only an empty stand-in is removed."""
    if not sandbox.status().available:
        pytest.fail(f"no sandbox here: {sandbox.status().reason}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    box = {}
    # The command waits for the test's signal file (a condition, not a time).
    command = "touch started; while [ ! -e go ]; do sleep 0.01; done; echo done"
    thread = threading.Thread(target=lambda: box.update(out=shell(ws, data, command)), daemon=True)
    thread.start()
    wait_until((ws / "started").exists, "the command to start")
    assert (ws / ".git").is_dir() and not os.listdir(ws / ".git")  # the stand-in, empty
    assert str(ws / ".git") in (data / sandbox.PLACEHOLDERS).read_text()
    assert git(ws, "init", "-q").returncode == 0  # the person, outside the sandbox
    (ws / "go").touch()
    thread.join(30)
    assert "done" in box["out"]
    assert git(ws, "rev-parse", "--git-dir").stdout.strip() == ".git"
    assert not (ws / ".envrc").exists() and not (ws / ".vscode").exists()


def test_placeholders_a_crash_left_behind_are_removed_by_the_next_command(tmp_path, monkeypatch):
    if not sandbox.status().available:
        pytest.fail(f"no sandbox here: {sandbox.status().reason}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (ws / ".vscode").mkdir()  # left empty by a process that was killed
    (ws / ".idea").mkdir()
    (ws / ".idea" / "theirs.xml").write_text("since filled by the person\n")
    (data / sandbox.PLACEHOLDERS).write_text(f"{ws / '.vscode'}\n{ws / '.idea'}\n")
    shell(ws, data, "true")
    assert not (ws / ".vscode").exists()
    assert (ws / ".idea" / "theirs.xml").read_text() == "since filled by the person\n"


def test_nested_repositories_and_git_folders_named_by_git_files(repo):
    """A folder of projects, a `.git` file pointing into the workspace, a hooks folder set in the config."""
    ws, data = repo
    git(ws, "init", "-q", "project")
    bare = ws / "store.git"
    git(ws, "init", "-q", "--bare", str(bare))
    checkout = ws / "checkout"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {os.path.relpath(bare, checkout)}\n")
    assert git(ws, "config", "core.hooksPath", "tools/hooks").returncode == 0
    (ws / "tools" / "hooks").mkdir(parents=True)
    configs = {p: p.read_bytes() for p in (ws / "project" / ".git" / "config", bare / "config")}
    out = shell(ws, data, "git -C project config core.fsmonitor 'touch x'; "
                          "git -C checkout config core.fsmonitor 'touch x'; "
                          "echo 'touch x' > tools/hooks/pre-commit; echo 'x' > tools/other.txt")
    assert out.count("Read-only file system") >= 3 and NOTE in out, out
    assert {p: p.read_bytes() for p in configs} == configs
    assert not (ws / "tools" / "hooks" / "pre-commit").exists()
    assert (ws / "tools" / "other.txt").read_text() == "x\n"  # the control: beside the hooks folder


def test_reading_git_still_works_in_the_sandbox(repo):
    ws, data = repo
    (ws / "a.txt").write_text("a\n")
    assert git(ws, "add", "a.txt").returncode == 0
    assert git(ws, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "first").returncode == 0
    out = shell(ws, data, "git log --oneline; git status --short; git diff HEAD --stat; touch /usr/numi-x 2>&1")
    # A refused write elsewhere (the system is read-only too) is no protected file.
    assert "first" in out and "Read-only file system" in out and NOTE not in out, out
