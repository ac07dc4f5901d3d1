"""write_file and edit_file never change what other programs run on the person's behalf (git's config and
hooks, .envrc, editor settings), however the path is spelled: letter case, extra slashes, `..`, a symbolic
or hard link, a git folder or hooks folder named by git's own files. Look-alike names stay writable."""
from __future__ import annotations

import json
import os
import subprocess

import pytest

from backend.core.cancel import CancelToken
from backend.core.tools import execute
from backend.core.types import ToolCall
from backend.tools.workspace import Workspace, workspace_tools

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")


def call(ws, name: str, **args) -> tuple[bool, str]:
    tool = {t.name: t for t in workspace_tools(Workspace(ws))}[name]
    outcome = execute(tool, ToolCall("c1", name, json.dumps(args)), CancelToken())
    return outcome.ok, outcome.result.content


@pytest.fixture
def repo(tmp_path):
    """A git repository with a hooks folder of its own, a nested project, a `.git` file pointing to a
    bare repository inside, and links to .git/config."""
    ws = tmp_path / "ws"
    ws.mkdir()

    def git(*args):
        subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, timeout=30)

    git("init", "-q")
    git("config", "core.hooksPath", "tools/hooks")
    (ws / "tools" / "hooks").mkdir(parents=True)
    (ws / "tools" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    git("init", "-q", "project")
    git("init", "-q", "--bare", "store.git")
    (ws / "checkout").mkdir()
    (ws / "checkout" / ".git").write_text("gitdir: ../store.git\n")
    (ws / "sub").mkdir()
    (ws / ".envrc").write_text("export A=1\n")
    os.symlink(".git/config", ws / "config-link")
    os.symlink(".git/hooks", ws / "hooks-link")
    os.link(ws / ".git" / "config", ws / "config-hardlink")
    return ws


def state(ws) -> dict:
    """What must not change: the bytes of every file other programs run."""
    files = [ws / ".git" / "config", ws / "project" / ".git" / "config", ws / "store.git" / "config",
             ws / ".envrc", ws / "tools" / "hooks" / "pre-commit"]
    return {str(f): f.read_bytes() for f in files} | {"hooks": sorted(os.listdir(ws / ".git" / "hooks"))}


@pytest.mark.parametrize("path", [
    ".git/config", ".GIT/config", ".Git/hooks/pre-commit", "./.git//config", ".git/hooks/pre-commit",
    "config-link", "hooks-link/post-checkout", "config-hardlink",
    ".envrc", ".ENVRC", ".vscode/settings.json", ".VSCode/tasks.json", ".idea/workspace.xml",
    ".husky/pre-commit", ".pre-commit-config.yaml", "sub/.envrc", "project/.git/config",
    "store.git/config", "checkout/.git", "tools/hooks/pre-commit", "tools/hooks/post-merge",
])
def test_writes_to_what_other_programs_run_are_refused(repo, path):
    before = state(repo)
    ok, said = call(repo, "write_file", path=path, content="[core]\n\tfsmonitor = touch pwned\n")
    assert not ok and "is protected" in said and "outside Numi" in said, said
    assert state(repo) == before


def test_dot_dot_into_git_is_refused(repo):
    before = state(repo)
    ok, said = call(repo, "write_file", path="sub/../.git/config", content="x")
    assert not ok and "'..'" in said
    assert state(repo) == before


@pytest.mark.parametrize("path, old", [(".envrc", "A=1"), ("config-link", "[core]"), ("config-hardlink", "[core]"),
                                       ("tools/hooks/pre-commit", "#!/bin/sh")])
def test_edits_are_refused_too(repo, path, old):
    before = state(repo)
    ok, said = call(repo, "edit_file", path=path, old_text=old, new_text=old + "\n\tfsmonitor = x")
    assert not ok and "is protected" in said, said
    assert state(repo) == before


@pytest.mark.parametrize("path", ["notes.txt", ".github/workflows/ci.yml", ".gitignore", ".git-blame-ignore-revs",
                                  ".envrc.example", "tools/other.txt", "sub/readme.md", "vscode/settings.json"])
def test_look_alike_names_stay_writable(repo, path):
    ok, said = call(repo, "write_file", path=path, content="fine\n")
    assert ok, said
    assert (repo / path).read_text() == "fine\n"


def test_a_workspace_inside_a_git_folder_is_never_written(repo):
    ok, said = call(repo / ".git" / "hooks", "write_file", path="pre-push", content="#!/bin/sh\n")
    assert not ok and "is protected (the workspace itself" in said
    assert not (repo / ".git" / "hooks" / "pre-push").exists()
