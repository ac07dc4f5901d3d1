"""Watching the bases' folders: a change under one asks for that base to be looked over again.

A burst of changes (a `git checkout` of 500 files, a sync client catching up) is one look:
a base is looked over once its folders have been quiet for QUIET_S, and at the latest
LATEST_S after the first change of the burst, so files that keep changing are still
reflected within seconds. The look itself reads only what changed (service.py).
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Callable

log = logging.getLogger(__name__)

QUIET_S = 1.0
LATEST_S = 5.0
_CHANGES = {"created", "modified", "moved", "deleted", "closed"}


class FolderWatch:
    def __init__(self, changed: Callable[[str], None]):
        self.changed = changed  # changed(base_id), on this watch's own thread
        self._lock = threading.Condition()
        self._watches: dict[str, list] = {}  # base id -> its observer watches
        self._roots: dict[str, list[str]] = {}  # base id -> the folders and files it reads
        self._due: dict[str, tuple[float, float]] = {}  # base id -> (quiet at, latest at)
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
        from watchdog.events import FileSystemEventHandler

        self.unwatch(base_id)
        watch = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                # Reads (opened, closed_no_write: the base's own reading) are not changes.
                if event.event_type in _CHANGES:
                    watch._poke(base_id, (event.src_path, getattr(event, "dest_path", "") or ""))

        handles = []
        for path in paths:
            folder = path if os.path.isdir(path) else os.path.dirname(path)
            try:
                handles.append(self._observer.schedule(Handler(), folder, recursive=os.path.isdir(path)))
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
        for handle in handles:
            try:
                self._observer.unschedule(handle)
            except (KeyError, ValueError):
                pass

    def _poke(self, base_id: str, paths: tuple[str, ...]) -> None:
        with self._lock:
            roots = self._roots.get(base_id)
            if roots is None:
                return
            # A file given by itself is watched through its folder: only its own changes count.
            if not any(os.fsdecode(p) == r or os.fsdecode(p).startswith(r.rstrip(os.sep) + os.sep)
                       for p in paths if p for r in roots):
                return
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
                for base_id in ready:
                    del self._due[base_id]
            for base_id in ready:
                try:
                    self.changed(base_id)
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
