"""Workspace files other programs run on the person's behalf later: which names, and where they are.

A command or a file tool that could change these would run code outside any sandbox,
without anyone approving it: git reads `.git/config` (core.fsmonitor, core.pager,
aliases, filters) and runs `.git/hooks` at every call, shell prompts and editors call
git on their own; direnv runs `.envrc` when a shell enters the folder; VS Code and
JetBrains IDEs run the tasks, run configurations and programs named in `.vscode` and
`.idea`; in projects using them git's hooks run the scripts in `.husky` and what
`.pre-commit-config.yaml` lists. Names are compared case-insensitively: on a
case-insensitive disk `.GIT/config` is `.git/config`.
"""
from __future__ import annotations

import os
import re
from collections import deque
from pathlib import Path

NAMES = (".git", ".envrc", ".vscode", ".idea", ".husky", ".pre-commit-config.yaml")
# Acted on by merely being there (any git call, entering the folder, opening it in an editor),
# so a command must not create them either; the others act only through git's own hooks.
RESERVED = (".git", ".envrc", ".vscode", ".idea")
_FOLDED = {name.casefold() for name in NAMES}
SCAN_DIRS = 3_000  # folders looked through for nested ones (projects inside the workspace); a bounded wait
# Installed packages: thousands of folders, none a project of the person's.
_NOT_SCANNED = {"node_modules"}
# Inside these only git's objects and large files are kept: never run, and there are many.
_GIT_DATA = {"objects", "lfs"}

# A protected name as a whole path component, in a command's output.
MENTION = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(n) for n in NAMES) + r")(?![\w-]|\.\w)", re.IGNORECASE)

KINDS = ("git's config and hooks, direnv's .envrc, editor tasks and settings in .vscode and .idea, "
         "commit hooks in .husky and .pre-commit-config.yaml")


def protected_name(name: str) -> bool:
    """Whether one path component is a protected name (in any letter case)."""
    return name.casefold() in _FOLDED


def protected_part(parts) -> str | None:
    """The first protected component of a path's components, else None."""
    return next((part for part in parts if protected_name(part)), None)


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def find(root: Path, max_dirs: int = SCAN_DIRS) -> list[Path]:
    """The protected entries in `root` as they are now, nearest first, with the git folders and
    hook folders they name: real paths inside `root` (a link is given as what it points to there);
    nested ones among the first `max_dirs` folders."""
    root = Path(os.path.realpath(root))
    found: list[Path] = []
    queue, seen = deque([root]), 0
    while queue and seen < max_dirs:
        folder = queue.popleft()
        seen += 1
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            if entry.name[:1] == "." and protected_name(entry.name):  # all start with a dot: the cheap test first
                found.append(Path(os.path.realpath(entry.path)))
                if entry.name.casefold() == ".git":
                    found += _git_extras(Path(entry.path))
            elif entry.name not in _NOT_SCANNED and entry.is_dir(follow_symlinks=False):
                queue.append(Path(entry.path))
    out: list[Path] = []
    for path in found:
        if path not in out and _inside(path, root) and path != root and os.path.exists(path):
            out.append(path)
    return out


def _git_extras(dot_git: Path) -> list[Path]:
    """What else a `.git` makes git run or read its config from: the folder a `.git` file points to
    (worktrees, submodules), its common folder, and a core.hooksPath."""
    out = []
    gitdir = dot_git
    if dot_git.is_file() and not dot_git.is_symlink():
        try:
            line = dot_git.read_text("utf-8", "replace").splitlines()[0]
        except (OSError, IndexError):
            line = ""
        if line.startswith("gitdir:"):
            gitdir = Path(os.path.realpath(dot_git.parent / line[len("gitdir:"):].strip()))
            out.append(gitdir)
    try:
        common = (gitdir / "commondir").read_text("utf-8", "replace").strip()
    except OSError:
        common = ""
    if common:
        out.append(Path(os.path.realpath(gitdir / common)))
    for config in dict.fromkeys([gitdir / "config", *(p / "config" for p in out)]):
        hooks = _hooks_path(config)
        if hooks:
            out.append(Path(os.path.realpath(dot_git.parent / os.path.expanduser(hooks))))
    return [p for p in out if os.path.lexists(p)]


_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)


def _hooks_path(config: Path) -> str | None:
    """core.hooksPath as a git config file sets it (the last one wins), roughly: quotes dropped."""
    try:
        text = config.read_text("utf-8", "replace")
    except OSError:
        return None
    values = _HOOKS_PATH.findall(text)
    return values[-1].strip('"') if values else None


def file_ids(entries) -> set[tuple[int, int]]:
    """(st_dev, st_ino) of the entries and of every file in them but git's object store: what a
    hard link elsewhere would also reach."""
    paths = []
    for entry in entries:
        paths.append(entry)
        if os.path.isdir(entry):
            for folder, dirs, files in os.walk(entry):
                dirs[:] = [d for d in dirs if d not in _GIT_DATA]
                paths += [os.path.join(folder, name) for name in files]
    ids = set()
    for path in paths:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        ids.add((st.st_dev, st.st_ino))
    return ids
