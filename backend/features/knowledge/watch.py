"""Watching the bases' folders: a change under one asks for that base's changed files to be looked at again.

A burst of changes (a `git checkout` of 500 files, a sync client catching up) is one look:
a base is looked at once its folders have been quiet for QUIET_S, and at the latest
LATEST_S after the first change of the burst, so files that keep changing are still
reflected within seconds. The look names the files that changed, so a base of 10 000 files
is not walked again for one of them; a folder created, moved or removed (or more than
MAX_PATHS files) makes it a look over the whole base. Either reads only what changed (service.py).
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Callable

log = logging.getLogger(__name__)

# Short enough that one saved file is found within a second; a burst's events come far closer together.
QUIET_S = 0.3
LATEST_S = 5.0
MAX_PATHS = 1000
_CHANGES = {"created", "modified", "moved", "deleted", "closed"}


class FolderWatch:
    def __init__(self, changed: Callable[[str, list[str] | None], None]):
        # changed(base_id, paths): the files that changed, or None for the whole base; on this watch's own thread
        self.changed = changed
        self._lock = threading.Condition()
        self._watches: dict[str, list] = {}  # base id -> its observer watches
        self._roots: dict[str, list[str]] = {}  # base id -> the folders and files it reads
        self._due: dict[str, tuple[float, float]] = {}  # base id -> (quiet at, latest at)
        self._paths: dict[str, set[str] | None] = {}  # base id -> the files changed since its last look, or None: all
        self._stopped = False
        self._observer: Any = None  # a watchdog Observer, made by start()
        self._thread = threading.Thread(target=self._run, name="knowledge-watch", daemon=True)

    def start(self) -> None:
        from watchdog.observers import Observer

        self._observer = Observer()
        self._observer.start()
        self._thread.start()

    def watch(self, base_id: str, paths: list[str]) -> None:
        """Watch the base's folders (with their subfolders) and files, in place of what it watched before."""
        from watchdog import events as ev

        self.unwatch(base_id)
        watch = self

        class Handler(ev.FileSystemEventHandler):
            def on_any_event(self, event):
                # Reads (opened, closed_no_write: the base's own reading) are not changes, nor is a folder's
                # own `modified` (a file in it was added or removed: that file's event says which).
                if event.event_type in _CHANGES and not (event.is_directory and event.event_type == "modified"):
                    paths = (event.src_path, getattr(event, "dest_path", "") or "")
                    watch._poke(base_id, tuple(os.fsdecode(p) for p in paths if p), event.is_directory)

        # Changes only: the base's own reading opens and closes every file, and those events would each
        # cost the app's process some work while it indexes (with inotify they are not even delivered).
        changes = [ev.FileCreatedEvent, ev.FileModifiedEvent, ev.FileMovedEvent, ev.FileDeletedEvent,
                   ev.FileClosedEvent, ev.DirCreatedEvent, ev.DirMovedEvent, ev.DirDeletedEvent]
        handles = []
        for path in paths:
            folder = path if os.path.isdir(path) else os.path.dirname(path)
            try:
                handles.append(self._observer.schedule(Handler(), folder, recursive=os.path.isdir(path),
                                                       event_filter=changes))
            except OSError as exc:
                # e.g. the inotify watch limit is used up: the base is still read at start and on changes
                # made through Numi, only not when its files change on their own.
                log.warning("knowledge: cannot watch %s (%s); its changes are read at the next start", path, exc)
        with self._lock:
            self._watches[base_id] = handles
            self._roots[base_id] = list(paths)

    def unwatch(self, base_id: str) -> None:
        with self._lock:
            handles = self._watches.pop(base_id, [])
            self._roots.pop(base_id, None)
            self._due.pop(base_id, None)
            self._paths.pop(base_id, None)
        for handle in handles:
            try:
                self._observer.unschedule(handle)
            except (KeyError, ValueError):
                pass

    def _poke(self, base_id: str, paths: tuple[str, ...], folder: bool = False) -> None:
        with self._lock:
            roots = self._roots.get(base_id)
            if roots is None:
                return
            # A file given by itself is watched through its folder: only its own changes count.
            if not any(p == r or p.startswith(r.rstrip(os.sep) + os.sep) for p in paths for r in roots):
                return
            changed = self._paths.get(base_id, set())
            if changed is not None:
                changed.update(paths)
                if folder or len(changed) > MAX_PATHS:
                    changed = None  # the files under a folder are not named one by one: look at them all
            self._paths[base_id] = changed
            now = time.monotonic()
            _, latest = self._due.get(base_id, (0.0, now + LATEST_S))
            self._due[base_id] = (now + QUIET_S, latest)
            self._lock.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopped:
                    now = time.monotonic()
                    ready = [b for b, (quiet, latest) in self._due.items() if min(quiet, latest) <= now]
                    if ready:
                        break
                    nearest = min((min(d) for d in self._due.values()), default=None)
                    self._lock.wait(None if nearest is None else max(0.0, nearest - now))
                if self._stopped:
                    return
                looks = []
                for base_id in ready:
                    del self._due[base_id]
                    changed = self._paths.pop(base_id, None)
                    looks.append((base_id, None if changed is None else sorted(changed)))
            for base_id, paths in looks:
                try:
                    self.changed(base_id, paths)
                except Exception:
                    log.exception("knowledge: a change under base %s could not be read", base_id)

    def stop(self, timeout: float) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout)
        if self._thread.is_alive():
            self._thread.join(timeout)
