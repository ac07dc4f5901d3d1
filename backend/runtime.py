"""The services one server holds for its lifetime: keys and the turn registry."""
from __future__ import annotations


class Runtime:
    def __init__(self, config):
        from backend.keys import KeyStore
        from backend.turns.registry import TurnRegistry

        self.config = config
        self.keys = KeyStore()
        self.registry = TurnRegistry(config, self.keys)

    def start(self) -> None:
        self.registry.start()

    def shutdown(self, timeout: float) -> None:
        self.registry.shutdown(timeout)
