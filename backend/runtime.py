"""The services one server holds for its lifetime: keys, the catalog file and the turn registry."""
from __future__ import annotations

import importlib
import logging
import threading

log = logging.getLogger(__name__)


class Runtime:
    def __init__(self, config):
        from backend.catalog.service import CatalogService
        from backend.keys import KeyStore
        from backend.turns.registry import TurnRegistry

        self.config = config
        self.keys = KeyStore()
        self.catalog = CatalogService(config.data_dir)
        self.registry = TurnRegistry(config, self.keys)

    def start(self) -> None:
        # Before the first request: catalog.toml is loaded into (or written from) the tables.
        self.catalog.start()
        self.registry.start()
        # The SDKs take most of a second to import; do it now, off the start-up
        # path, rather than in the first turn the person waits on.
        threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()

    def shutdown(self, timeout: float) -> None:
        try:
            self.catalog.stop(timeout=min(2.0, timeout))
        except Exception:
            log.exception("stopping the catalog watcher failed")
        self.registry.shutdown(timeout)


def _warm_up() -> None:
    for name in ("backend.providers", "backend.providers.chat_completions"):
        try:
            importlib.import_module(name)
        except Exception:
            pass  # the first turn reports a real import problem with a proper error
