"""Which files a base reads: its folders walked (hidden and build folders left out), checked against the limits."""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path


def _limit(name: str, default: int) -> int:
    # Read at each use: the environment may lower a limit (the tests do, to reach it with a few
    # small files), and a server forked from a preloaded parent imported this module before.
    return int(os.environ.get(name, default))


def max_files() -> int:
    """Files a base may hold."""
    return _limit("NUMI_KNOWLEDGE_MAX_FILES", 50_000)


def max_bytes() -> int:
    """Their total size."""
    return _limit("NUMI_KNOWLEDGE_MAX_BYTES", 10 * 1024 ** 3)


def max_file_bytes() -> int:
    """One file's size: bigger ones are listed as problems while the rest index."""
    return _limit("NUMI_KNOWLEDGE_MAX_FILE_BYTES", 100 * 1024 ** 2)


# Folders that hold what a tool made or fetched, not what a person wrote.
SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target", "dist", "build"})

SUFFIXES = frozenset({
    ".pdf", ".docx", ".epub", ".html", ".htm", ".xhtml", ".md", ".markdown", ".txt", ".text", ".rst", ".csv",
    ".log", ".py", ".js", ".ts", ".tsx", ".jsx", ".java", ".c", ".h", ".cpp", ".hpp", ".cs", ".go", ".rs", ".rb",
    ".php", ".swift", ".kt", ".scala", ".sh", ".sql", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".css",
    ".scss", ".xml", ".lua", ".r", ".m", ".pl", ".dart", ".vue", ".svelte"})


class PathRefused(Exception):
    """A path the person gave cannot be a base's: `reason` says why, in a sentence."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Found:
    path: str
    size: int
    mtime: float


def readable(name: str) -> bool:
    """Whether a file of this name is one a base reads (by its suffix)."""
    return Path(name).suffix.lower() in SUFFIXES


def check_path(raw: str, data_dir: Path) -> str:
    """The absolute, resolved path a base will read; PathRefused when it cannot be one."""
    if not os.path.isabs(raw):
        raise PathRefused(f"{raw!r} is not an absolute path. Give the full path, like /home/me/notes.")
    try:
        resolved = Path(raw).resolve(strict=True)
    except FileNotFoundError:
        raise PathRefused(f"{raw} does not exist.") from None
    except (RuntimeError, OSError) as exc:
        # resolve() says "Symlink loop" as a RuntimeError (3.11) or ELOOP as an OSError.
        raise PathRefused(f"{raw} cannot be read: it is a symbolic link that leads back to itself "
                          f"({exc.__class__.__name__}).") from None
    data = data_dir.resolve()
    if resolved == data or data in resolved.parents or resolved in data.parents:
        raise PathRefused(f"{raw} holds Numi's own data folder ({data}); choose a folder of your own files.")
    if not os.access(resolved, os.R_OK | (os.X_OK if resolved.is_dir() else 0)):
        raise PathRefused(f"{raw} is not readable by Numi (check its permissions).")
    if not (resolved.is_dir() or resolved.is_file()):
        raise PathRefused(f"{raw} is neither a folder nor a file.")
    return str(resolved)


def walk(paths: list[str], stop_after: int | None = None) -> list[Found]:
    """Every readable file under `paths` (folders with their subfolders), each once, in a stable order.

    Symbolic links to folders are not followed (a link can lead back up the tree); links to
    files are read where they point. `stop_after`: stop counting past that many files.
    """
    out: list[Found] = []
    seen: set[str] = set()

    def add(path: str) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return True
        if not stat.S_ISREG(st.st_mode) or path in seen:
            return True
        seen.add(path)
        out.append(Found(path, st.st_size, st.st_mtime))
        return stop_after is None or len(out) <= stop_after

    for root in paths:
        if os.path.isfile(root):
            if not add(root):
                return out
            continue
        for folder, dirs, names in os.walk(root, onerror=None, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
            for name in sorted(names):
                if name.startswith(".") or not readable(name):
                    continue
                if not add(os.path.join(folder, name)):
                    return out
    return out


def find(paths: list[str], path: str) -> Found | None:
    """The file at `path` as walk(paths) finds it, or None when walk would not (gone, hidden, skipped, unreadable).

    What a watched change is checked with, so one file can be re-read without walking the whole base."""
    for root in paths:
        if path == root:
            if os.path.isdir(root):
                return None
            break
        prefix = root.rstrip(os.sep) + os.sep
        if not path.startswith(prefix):
            continue
        *folders, name = path[len(prefix):].split(os.sep)
        if name.startswith(".") or not readable(name):
            return None
        folder = root
        for part in folders:
            folder = os.path.join(folder, part)
            # walk() leaves out hidden and build folders and does not follow links to folders.
            if part.startswith(".") or part in SKIPPED_FOLDERS or os.path.islink(folder):
                return None
        break
    else:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Found(path, st.st_size, st.st_mtime) if stat.S_ISREG(st.st_mode) else None


def check_limits(paths: list[str]) -> None:
    """PathRefused when the files under `paths` pass a base's limits (the sentence names them)."""
    most, most_bytes = max_files(), max_bytes()
    found = walk(paths, stop_after=most)
    if len(found) > most:
        raise PathRefused(f"These folders hold more than {most:,} files Numi can read; a knowledge base "
                          f"holds at most {most:,}. Choose smaller folders, or split them into several bases.")
    total = sum(f.size for f in found)
    if total > most_bytes:
        raise PathRefused(f"These files add up to {size_text(total)}; a knowledge base holds at most "
                          f"{size_text(most_bytes)}. Choose smaller folders, or split them into several bases.")


def size_text(n: int) -> str:
    """A size as a person reads it: 12 KB, 3.4 MB, 10 GB."""
    for unit, scale in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if value >= 10 or value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"
