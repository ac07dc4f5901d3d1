"""Where a turn's sources are on disk: on its newest assistant row, from that row's first commit.

A reply cites its sources as `[n]` from its first words (a research report above
all), and its partial text is committed every half second (CONTRACT §4 rule 3).
The sources go into the same commits, so a process killed mid-reply leaves the
text with the list its numbers point into, and Continue goes on from both. One
row of the turn holds them at a time: a newer row takes them over in the
transaction that gives them to it, so a finished turn has them on its final
reply only (docs/PROTOCOL.md "Web search and sources").
"""
from __future__ import annotations

import threading

from backend.store import history
from backend.store.db import db
from backend.turns.sources import TurnSources


class SavedSources:
    """Which row holds the turn's sources, and how many; `row_id`: a continued reply that holds them already."""

    def __init__(self, sources: TurnSources, row_id: int | None = None):
        self.sources = sources
        # Taken before any transaction, by the flusher and the turn alike: a move is never half seen.
        self._lock = threading.Lock()
        self.row_id = row_id
        self.count = len(sources.all()) if row_id is not None else 0

    def flush_partial(self, row_id: int, content: str, reasoning: str) -> None:
        """Commit a streaming row's text, with the turn's sources when it does not hold them all yet."""
        with self._lock:
            items = self.sources.all()
            if not items or self._holds(row_id, items):
                history.save_partial(row_id, content, reasoning)
                return
            if history.save_partial(row_id, content, reasoning, sources=items, sources_from=self.row_id):
                self.row_id, self.count = row_id, len(items)

    def save(self, row_id: int, fields: dict, with_sources: bool) -> None:
        """Commit a row's final form; `with_sources` (the turn's final reply): every source goes on it."""
        with self._lock, db.atomic():
            items = self.sources.all() if with_sources else []
            history.save(row_id, **fields, **({"citation_sources": items} if items else {}))
            if items:
                self._moved(row_id, items)

    def keep_on(self, row_id: int) -> None:
        """A turn that ended before its final reply keeps every source on its last row."""
        with self._lock:
            items = self.sources.all()
            if not items or self._holds(row_id, items):
                return
            with db.atomic():
                history.save(row_id, citation_sources=items)
                self._moved(row_id, items)

    def _holds(self, row_id: int, items: list) -> bool:
        return self.row_id == row_id and self.count == len(items)

    def _moved(self, row_id: int, items: list) -> None:
        """Inside the transaction that gave `row_id` the sources: the row that held them lets go."""
        if self.row_id is not None and self.row_id != row_id:
            history.save(self.row_id, citation_sources=None)
        self.row_id, self.count = row_id, len(items)
