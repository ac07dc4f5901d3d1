"""Which files a workspace has: .gitignore rules, a tree walk, and a live index kept by file events.

The index leaves ignored files out (a workspace's node_modules or .venv would
dwarf the rest), so a .gitignore change means a rescan. Events are applied in
the order watchdog reports them; a create whose file is already gone is
dropped, since its delete follows.
"""
from __future__ import annotations

import logging
import os
import stat
import threading
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Callable, Iterator

log = logging.getLogger(__name__)

GITIGNORE = ".gitignore"
SKIPPED = ".git"  # git's own store: never listed, searched or indexed


@dataclass(frozen=True)
class Rule:
    parts: tuple[str, ...]  # glob per path component; "**" spans any number of them
    negate: bool
    dir_only: bool


def _unescape(segment: str) -> str:
    """A gitignore segment as an fnmatch pattern: `\\*` is a literal star, `\\x` a plain x."""
    out, i = [], 0
    while i < len(segment):
        c = segment[i]
        if c == "\\" and i + 1 < len(segment):
            i += 1
            c = segment[i]
            out.append(f"[{c}]" if c in "*?[" else c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def parse_gitignore(text: str) -> list[Rule]:
    """The rules of one .gitignore file, in file order."""
    rules = []
    for line in text.splitlines():
        stripped = line.rstrip(" ")
        if stripped.endswith("\\") and len(stripped) < len(line):
            stripped += " "  # "foo\ " keeps its escaped trailing space
        line = stripped
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        # A slash anywhere but the end anchors the pattern to the .gitignore's folder;
        # without one it matches a name at any depth.
        anchored = "/" in line
        parts = tuple(_unescape(p) for p in line.strip("/").split("/") if p)
        if not anchored:
            parts = ("**",) + parts
        rules.append(Rule(parts, negate, dir_only))
    return rules


def _match(pattern: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether the path components match the rule's, "**" spanning any number of them.

    A .gitignore comes with the workspace, so its rules may be hostile: trying each split for
    each "**" in turn would take depth^k steps for k of them. Instead the set of positions the
    pattern so far can end at is carried forward: len(pattern) × len(parts) steps at most.
    """
    if len(pattern) == 2 and pattern[0] == "**" and pattern[1] != "**":
        return bool(parts) and fnmatchcase(parts[-1], pattern[1])  # the common "*.pyc" case, fast
    ends = {0}  # how many components the pattern so far can have consumed
    for i, segment in enumerate(pattern):
        if segment == "**":
            if i == len(pattern) - 1:
                return min(ends) < len(parts)  # "dir/**": everything inside, not the folder itself
            ends = set(range(min(ends), len(parts) + 1))
        else:
            ends = {n + 1 for n in ends if n < len(parts) and fnmatchcase(parts[n], segment)}
        if not ends:
            return False
    return len(parts) in ends


class IgnoreRules:
    """The .gitignore files of a tree (root and nested), re-read when one changes on disk."""

    def __init__(self, root):
        self.root = Path(root)
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple, list[Rule]]] = {}

    def rules_in(self, rel_dir: str) -> list[Rule]:
        path = self.root / rel_dir / GITIGNORE
        try:
            st = os.lstat(path)
        except OSError:
            return []
        if not stat.S_ISREG(st.st_mode):
            return []  # a symlinked .gitignore could point anywhere; not ours to read
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
        with self._lock:
            hit = self._cache.get(rel_dir)
        if hit and hit[0] == key:
            return hit[1]
        try:
            rules = parse_gitignore(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            rules = []
        with self._lock:
            self._cache[rel_dir] = (key, rules)
        return rules

    def matched(self, rel: str, is_dir: bool) -> bool:
        """Whether the rules exclude this path itself (its folders are taken as not excluded)."""
        parts = tuple(rel.split("/"))
        verdict = False
        # Root first, deepest last: a nested .gitignore overrides its parents, a later line an earlier one.
        for depth in range(len(parts)):
            for rule in self.rules_in("/".join(parts[:depth])):
                if (is_dir or not rule.dir_only) and _match(rule.parts, parts[depth:]):
                    verdict = not rule.negate
        return verdict

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the path or any folder above it is excluded (git cannot re-include below those)."""
        parts = rel.split("/")
        if SKIPPED in parts:
            return True
        for i in range(1, len(parts)):
            if self.matched("/".join(parts[:i]), True):
                return True
        return self.matched(rel, is_dir)


def join(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def walk(root, rules: IgnoreRules | None, under: str = "",
         recursive: bool = True) -> Iterator[tuple[str, bool]]:
    """(relative path, is_dir) below `under`, parents before children, names sorted; never follows links.

    `under` itself must not be excluded: only what is below it is checked.
    """
    try:
        with os.scandir(os.path.join(root, under)) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return  # vanished or unreadable: nothing to list
    for entry in entries:
        if entry.name == SKIPPED:
            continue
        rel = join(under, entry.name)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if rules is not None and rules.matched(rel, is_dir):
            continue
        yield rel, is_dir
        if is_dir and recursive:
            yield from walk(root, rules, rel)


def under_key(rel: str) -> tuple[str, ...]:
    """Sort key giving the same order as walk()."""
    return tuple(rel.split("/"))


class FileIndex:
    """The workspace's files and folders, minus ignored ones, kept fresh by watchdog."""

    def __init__(self, root, rules: IgnoreRules | None = None):
        self.root = os.path.realpath(root)
        self.rules = rules or IgnoreRules(self.root)
        self._cond = threading.Condition()  # an RLock inside: predicates may call files()
        self._files: set[str] = set()
        self._dirs: set[str] = set()
        self._observer = None
        self.changes = 0  # events applied so far; waiters are woken on each

    @property
    def running(self) -> bool:
        return self._observer is not None

    def start(self) -> None:
        if self._observer is not None:
            return
        # Watch first, then scan under the lock: events from during the scan wait and apply after it.
        with self._cond:
            self._observer = self._schedule(self._handler())
            self._rescan()

    def stop(self, timeout: float = 2.0) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout)
        with self._cond:
            self._cond.notify_all()

    def files(self) -> frozenset[str]:
        with self._cond:
            return frozenset(self._files)

    def dirs(self) -> frozenset[str]:
        with self._cond:
            return frozenset(self._dirs)

    def entries(self, under: str = "", recursive: bool = True) -> list[tuple[str, bool]]:
        """What walk() would give for `under`, from memory, in the same order."""
        prefix = under + "/" if under else ""
        depth = under.count("/") + 1 if under else 0
        with self._cond:
            found = [(p, d) for group, d in ((self._files, False), (self._dirs, True))
                     for p in group if p.startswith(prefix)
                     and (recursive or p.count("/") == depth)]
        return sorted(found, key=lambda e: under_key(e[0]))

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until `predicate()` holds (checked on each change), or `timeout` seconds; its last value."""
        with self._cond:
            return bool(self._cond.wait_for(predicate, timeout))

    # --- applying events (watchdog's thread) ---

    def _handler(self):
        from watchdog.events import FileSystemEventHandler

        index = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                try:
                    index._apply(event)
                except Exception:
                    log.exception("indexing %s failed", event.src_path)

        return Handler()

    def _schedule(self, handler):
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        try:
            observer = Observer()
            observer.schedule(handler, self.root, recursive=True)
            observer.start()
            return observer
        except OSError as exc:
            # e.g. the inotify watch limit is used up: polling is slower but keeps the index right.
            log.warning("file events unavailable (%s); polling %s", exc, self.root)
            observer = PollingObserver(timeout=1)
            observer.schedule(handler, self.root, recursive=True)
            observer.start()
            return observer

    def _rel(self, path) -> str | None:
        if not path:
            return None
        rel = os.path.relpath(os.fsdecode(path), self.root)
        if rel == "." or rel == os.pardir or rel.startswith(os.pardir + os.sep):
            return None
        rel = rel.replace(os.sep, "/")
        return None if SKIPPED in rel.split("/") else rel

    def _apply(self, event) -> None:
        kind = event.event_type
        if kind not in ("created", "deleted", "moved", "modified"):
            return  # opened/closed/attrib do not change which files exist
        src = self._rel(event.src_path)
        dest = self._rel(getattr(event, "dest_path", "")) if kind == "moved" else None
        with self._cond:
            if any(p and p.rsplit("/", 1)[-1] == GITIGNORE for p in (src, dest)):
                self._rescan()  # the rules changed: what is ignored may have changed anywhere below
            elif kind == "deleted":
                self._drop(src)
            elif kind == "moved":
                self._drop(src)
                self._add(dest)
            elif kind == "created":
                self._add(src)
            else:
                return  # a modified file is still the same file
            self.changes += 1
            self._cond.notify_all()

    def _rescan(self) -> None:
        files, dirs = set(), set()
        for rel, is_dir in walk(self.root, self.rules):
            (dirs if is_dir else files).add(rel)
        self._files, self._dirs = files, dirs

    def _add(self, rel: str | None) -> None:
        if rel is None:
            return
        try:
            is_dir = stat.S_ISDIR(os.lstat(os.path.join(self.root, rel)).st_mode)
        except OSError:
            return  # already gone again; its delete event is on the way or applied
        if self.rules.ignored(rel, is_dir):
            return
        parts = rel.split("/")
        # A folder's own event may come after its first file's.
        self._dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        if not is_dir:
            self._files.add(rel)
            return
        self._dirs.add(rel)
        # Files made before the new folder was watched get no events of their own.
        for sub, sub_is_dir in walk(self.root, self.rules, rel):
            (self._dirs if sub_is_dir else self._files).add(sub)

    def _drop(self, rel: str | None) -> None:
        if rel is None:
            return
        self._files.discard(rel)
        if rel in self._dirs:
            self._dirs.discard(rel)
            prefix = rel + "/"
            self._files = {p for p in self._files if not p.startswith(prefix)}
            self._dirs = {p for p in self._dirs if not p.startswith(prefix)}
