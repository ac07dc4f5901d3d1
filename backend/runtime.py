"""The services one server holds for its lifetime: keys, the catalog file, app events, MCP, turns.

App-wide services hang off this object, not off the turn registry: the API and
the sockets reach them here, and the registry is handed the ones it uses.
"""
from __future__ import annotations

import importlib
import logging
import threading

from flask import current_app

from backend.store import housekeeping

log = logging.getLogger(__name__)


def runtime() -> Runtime:
    """The per-app services (keys, app events, turn registry) for the current request."""
    return current_app.extensions["numi"]


class Runtime:
    def __init__(self, config):
        from backend.app_events import AppEvents
        from backend.catalog.service import CatalogService
        from backend.keys import KeyStore
        from backend.store.files import FileStore
        from backend.turns.mcp_runtime import McpRuntime
        from backend.turns.registry import TurnRegistry

        self.config = config
        self.keys = KeyStore()
        self.catalog = CatalogService(config.data_dir)
        self.files = FileStore.for_data_dir(config.data_dir)  # attachments, content-addressed
        # Chat-level changes for every window's chat list (/ws/_app) and the desktop shell;
        # whether a chat runs or waits is the registry's to say (made just below).
        self.app_events = AppEvents(lambda chat_id: self.registry.is_running(chat_id),
                                    lambda chat_id: self.registry.is_awaiting(chat_id),
                                    lambda chat_id: self.registry.is_asking(chat_id))
        self.mcp = McpRuntime(self.keys)  # the MCP servers of catalog.toml, for turns and the API
        # The catalog: a turn whose tools were refused turns them off there.
        self.registry = TurnRegistry(config, self.keys, self.app_events, mcp=self.mcp, catalog=self.catalog)
        self.auto_backup = None  # started with the rest, in start()

    def start(self) -> None:
        # Before the first request: catalog.toml is loaded into (or written from) the tables,
        # and what should be gone by now (old trash, temporary chats a crash left) is.
        self.catalog.start()
        self.files.sweep_tmp()
        housekeeping.at_start()
        self.registry.start()
        self.mcp.reload()
        self.auto_backup = _start_auto_backup(self.config.data_dir)
        # The SDKs take most of a second to import; do it now, off the start-up
        # path, rather than in the first turn the person waits on.
        threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()

    def shutdown(self, timeout: float) -> None:
        if self.auto_backup is not None:
            self.auto_backup.stop()  # a copy in progress finishes first (a second or so)
        try:
            self.catalog.stop(timeout=min(2.0, timeout))
        except Exception:
            log.exception("stopping the catalog watcher failed")
        self.registry.shutdown(timeout)
        self.app_events.close()
        self.mcp.close()
        # Temporary chats end with the app. A reply that would not stop in time keeps its
        # chat (its thread may still write to it); the next start removes it once idle.
        try:
            housekeeping.at_exit(keep=self.registry.running_chat_ids())
        except Exception:
            log.exception("removing temporary chats failed; the next start removes them once idle")


def _start_auto_backup(data_dir):
    """The daily copy of numi.db (NUMI_AUTO_BACKUP=0: none); docs/PROTOCOL.md, "Backup"."""
    from backend.store import backup

    if not backup.auto_enabled():
        return None
    auto = backup.AutoBackup(data_dir)
    auto.start()
    return auto


def _warm_up() -> None:
    for name in ("backend.providers", "backend.providers.chat_completions"):
        try:
            importlib.import_module(name)
        except Exception:
            pass  # the first turn reports a real import problem with a proper error
