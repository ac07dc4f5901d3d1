"""The services one server holds for its lifetime: keys and the turn registry."""
from __future__ import annotations

import importlib
import threading


class Runtime:
    def __init__(self, config):
        from backend.keys import KeyStore
        from backend.turns.registry import TurnRegistry

        self.config = config
        self.keys = KeyStore()
        self.registry = TurnRegistry(config, self.keys)

    def start(self) -> None:
        self.registry.start()
        # The SDKs take most of a second to import; do it now, off the start-up
        # path, rather than in the first turn the person waits on.
        threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()

    def shutdown(self, timeout: float) -> None:
        self.registry.shutdown(timeout)


def _warm_up() -> None:
    for name in ("backend.providers", "backend.providers.chat_completions"):
        try:
            importlib.import_module(name)
        except Exception:
            pass  # the first turn reports a real import problem with a proper error
