"""Memory's app-wide service: the thread that embeds memories (embedder.py), made and started with the app.

A request's system text is built where no service is handed (backend/turns/context), and a
server runs one, so choice.py and the routes reach the running one through this module's
functions; without one (embeddings never started, an in-process test) they do nothing.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from backend.turns.features import AppContext, FeatureService

if TYPE_CHECKING:
    from backend.features.memory.embedder import MemoryEmbedder

_running: MemoryService | None = None


class MemoryService(FeatureService):
    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.embedder: MemoryEmbedder | None = None

    def start(self) -> None:
        global _running
        from backend.features.memory.embedder import MemoryEmbedder  # numpy: loaded when the service starts

        self.embedder = MemoryEmbedder(self.ctx.provided)
        self.embedder.start()
        _running = self

    def stop(self, timeout: float) -> None:
        global _running
        if _running is self:
            _running = None
        if self.embedder is not None:
            self.embedder.stop(timeout)


def _embedder() -> MemoryEmbedder | None:
    running = _running
    return running.embedder if running is not None else None


def changed() -> None:
    """A memory was saved, edited or deleted: its vector is made (or dropped) now, not at the next poll."""
    if (embedder := _embedder()) is not None:
        embedder.wake()


def forgotten() -> None:
    """Every memory was forgotten: the vectors held in memory go too."""
    if (embedder := _embedder()) is not None:
        embedder.forgot()


def similar(query: str, count: int, limit: int) -> list[int] | None:
    """The memories most like `query` by embeddings (embedder.MemoryEmbedder.similar), or None."""
    embedder = _embedder()
    return embedder.similar(query, count, limit) if embedder is not None else None
