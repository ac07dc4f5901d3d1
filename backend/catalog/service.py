"""Keeping catalog.toml and the catalog tables equal, in both directions.

One lock orders everything that touches the pair: the watcher applying a saved
edit, and an API write changing the tables and rewriting the file. The hash of
the bytes last loaded or written is what the tables hold; a file event whose
content has that hash is the app's own write (or a save without changes) and is
skipped, so a write never sets off a reload.
"""
from __future__ import annotations

import hashlib
import logging
import os
import threading
from contextlib import contextmanager
from pathlib import Path

from backend.catalog import sync
from backend.catalog.render import render
from backend.catalog.toml_file import CatalogError, parse
from backend.durable import fsync_dir
from backend.store.db import db

log = logging.getLogger(__name__)

FILE_NAME = "catalog.toml"


def _hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _by_id(items: list[dict]) -> dict:
    return {item["id"]: item for item in items}


class CatalogInvalid(Exception):
    """An API write was refused because the file on disk has an error the person must fix first."""

    def __init__(self, error: CatalogError):
        super().__init__(error.message)
        self.error = error


class CatalogService:
    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / FILE_NAME
        self._lock = threading.RLock()
        self._known_hash: str | None = None  # of the bytes the tables hold
        self.error: CatalogError | None = None
        self.reloads = 0  # saved edits applied by the watcher
        self.skipped = 0  # file events whose content was already applied (e.g. the app's own writes)
        self._watcher = None
        # Told (outside the lock, after the commit) when a change reached the mcp_server table,
        # so the running MCP servers follow the file; API writes to MCP servers reload on their own.
        self._mcp_listeners: list = []
        self._mcp_changed = False

    def on_mcp_change(self, callback) -> None:
        self._mcp_listeners.append(callback)

    def _notify_mcp(self) -> None:
        with self._lock:
            changed, self._mcp_changed = self._mcp_changed, False
        if not changed:
            return
        for callback in list(self._mcp_listeners):
            try:
                callback()
            except Exception:
                log.exception("applying the MCP servers of catalog.toml failed")

    # -- life cycle ---------------------------------------------------------------

    def start(self, watch: bool = True) -> None:
        with self._lock, db.connection_context():
            raw = self._read()
            if raw is None:
                try:
                    self._write(None)
                    log.info("wrote %s from the database", self.path)
                except OSError as exc:  # a read-only data dir must not keep Numi from starting
                    self.error = CatalogError(f"Numi could not write catalog.toml ({exc.strerror}).", None)
                    log.warning("could not write %s: %s", self.path, exc)
            elif self._ingest(raw) == "invalid":
                log.warning("%s has an error; using the catalog from the database: %s",
                            self.path, self.error.message)
        self._notify_mcp()
        if watch:
            from backend.catalog.watch import Watcher
            self._watcher = Watcher(self.path, self._on_change)
            self._watcher.start()

    def stop(self, timeout: float = 2.0) -> None:
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            watcher.stop(timeout)

    def status(self) -> dict:
        with self._lock:
            return {"path": str(self.path), "error": self.error.to_dict() if self.error else None,
                    "reloads": self.reloads, "skipped": self.skipped}

    # -- file → tables ------------------------------------------------------------

    def _read(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None

    def _ingest(self, raw: bytes) -> str:
        """Load `raw` into the tables: "skipped" (already there), "applied" or "invalid"."""
        digest = _hash(raw)
        if digest == self._known_hash:
            self.error = None  # e.g. an edit undone back to the catalog in use
            return "skipped"
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = raw[:exc.start].count(b"\n") + 1
                raise CatalogError(f"catalog.toml line {line} is not UTF-8 text. Save the file as UTF-8.",
                                   line) from None
            data = parse(text)
        except CatalogError as exc:
            if self.error is None or self.error.message != exc.message:
                log.warning("catalog.toml not applied: %s", exc.message)
            self.error = exc
            return "invalid"
        mcp_changed = _by_id(data.mcp_servers) != _by_id(sync.read_mcp_servers())  # order is not a change
        changed = sync.apply(data)
        self._mcp_changed |= mcp_changed
        self._known_hash, self.error = digest, None
        log.info("catalog.toml applied (%d rows changed)", changed)
        return "applied"

    def _on_change(self) -> None:
        with self._lock, db.connection_context():
            raw = self._read()
            if raw is None:
                # Deleted or moved away: put the catalog in use back rather than drop every model.
                self._write(None)
                log.info("catalog.toml was removed; wrote it again from the catalog in use")
                return
            outcome = self._ingest(raw)
            if outcome == "applied":
                self.reloads += 1
            elif outcome == "skipped":
                self.skipped += 1
        self._notify_mcp()

    # -- tables → file ------------------------------------------------------------

    @contextmanager
    def editing(self):
        """Change the tables inside this block; the file is rewritten before the commit.

        An edit saved on disk but not applied yet is applied first, so the
        rewrite cannot undo it; if that edit is invalid, CatalogInvalid is
        raised and nothing changes (overwriting would throw the person's edit away).
        """
        try:
            with self._lock:
                raw = self._read()
                outcome = self._ingest(raw) if raw is not None else "skipped"
                if outcome == "invalid":
                    raise CatalogInvalid(self.error)
                if outcome == "applied":
                    self.reloads += 1  # a saved edit the watcher had not got to yet
                with db.atomic():
                    yield
                    self._write(raw.decode("utf-8") if raw is not None else None)
        finally:
            self._notify_mcp()  # that saved edit may have changed the MCP servers

    def _write(self, current_text: str | None) -> None:
        """Render the tables into the file atomically: temp file in the same dir, fsync, rename."""
        data = render(current_text, sync.read_db()).encode("utf-8")
        if current_text is not None and data == current_text.encode("utf-8"):
            return  # nothing changed (e.g. a PATCH with the values already there): leave the file alone
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        mode = 0o600
        try:
            mode = self.path.stat().st_mode & 0o777
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            # Before the rename: the watcher must see this hash as already applied.
            self._known_hash, self.error = _hash(data), None
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        fsync_dir(self.path.parent)
