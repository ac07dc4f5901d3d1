"""Noticing that catalog.toml changed on disk: a watchdog observer plus a debounce.

Editors save in several steps (truncate + write, or write a temp file + rename,
sometimes with a backup in between), so one save is many events. The callback
runs once the file has been quiet for `debounce` seconds, on the watcher's own
thread. Opening and reading the file are not changes: they are ignored, or the
callback's own read would wake it again.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.2
# close_write comes after the last write of an in-place save; opened / closed_no_write are reads.
_CHANGES = {"created", "modified", "moved", "deleted", "closed"}


class Watcher:
    def __init__(self, path, callback: Callable[[], None], debounce: float = DEBOUNCE_S):
        self.path = os.path.abspath(path)
        self.name = os.path.basename(self.path)
        self.callback, self.debounce = callback, debounce
        self._cond = threading.Condition()
        self._due: float | None = None
        self._stopped = False
        self._observer = None
        self._thread = threading.Thread(target=self._run, name="catalog-watch", daemon=True)

    def start(self) -> None:
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event):
                if event.is_directory or event.event_type not in _CHANGES:
                    return
                paths = (event.src_path, getattr(event, "dest_path", "") or "")
                if any(os.path.basename(os.fsdecode(p)) == watcher.name for p in paths if p):
                    watcher.poke()

        self._observer = self._schedule(Handler())
        self._thread.start()

    def _schedule(self, handler):
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        folder = os.path.dirname(self.path)
        try:
            observer = Observer()
            observer.schedule(handler, folder, recursive=False)
            observer.start()
            return observer
        except OSError as exc:
            # e.g. the inotify watch limit is used up: polling is slower but still applies edits.
            log.warning("file events unavailable (%s); polling %s once a second", exc, self.path)
            observer = PollingObserver(timeout=1)
            observer.schedule(handler, folder, recursive=False)
            observer.start()
            return observer

    def poke(self) -> None:
        """Something changed: run the callback once things are quiet."""
        with self._cond:
            self._due = time.monotonic() + self.debounce
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (self._due is None or time.monotonic() < self._due):
                    self._cond.wait(None if self._due is None else max(0.0, self._due - time.monotonic()))
                if self._stopped:
                    return
                self._due = None
            try:
                self.callback()
            except Exception:
                log.exception("applying a change of %s failed", self.path)

    def stop(self, timeout: float = 2.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout)
        if self._thread.is_alive():
            self._thread.join(timeout)
