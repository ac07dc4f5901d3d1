"""A turn's sources (CONTRACT §8): what its tools brought in, numbered from 1 per turn.

What a feature's tools bring in (a web search's results, a fetched page: backend/features/web/)
becomes a source as it arrives: it gets the next number (a URL seen before keeps its first
one), a `sources` event announces the new ones, and the turn's final reply saves the whole
list, so the `[n]` in its text still point somewhere after a reload. A feature reaches the
turn's sources through its `TurnHandle.sources()`.
"""
from __future__ import annotations

import json
import threading
from typing import Callable

from backend.core.text import well_formed_value

KINDS = ("web", "knowledge", "memory")
# The contract's fields, then where the viewer opens a knowledge passage (docs/PROTOCOL.md), then
# the memory a request carried.
_FIELDS = ("title", "url", "file_id", "snippet", "locator", "knowledge_id", "document_id", "path", "memory_id")


class TurnSources:
    """One turn's numbered sources; `publish(type, **fields)` is the turn's."""

    def __init__(self, publish: Callable[..., dict], saved: list | None = None):
        self.publish = publish
        self._lock = threading.Lock()
        self._items: list[dict] = []
        self._numbers: dict[tuple, int] = {}
        # A continued reply keeps the sources its text already cites, under the same numbers.
        for item in saved or ():
            if isinstance(item, dict) and isinstance(item.get("n"), int) and item.get("kind") in KINDS:
                self._items.append(item)
                self._numbers[_key(item["kind"], item)] = item["n"]

    def add(self, kind: str, items: list[dict]) -> list[dict]:
        """Number `items` (each {"title","url"?,"file_id"?,"snippet","locator"?}) and announce the new
        ones; returns every item given, with its `n`."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind of source {kind!r}")
        numbered, new = [], []
        with self._lock:
            for item in items:
                # Titles and snippets come from web pages and services: a lone surrogate in one
                # would fail the saved reply and every socket the `sources` event goes to.
                fields = {k: well_formed_value(item[k]) for k in _FIELDS if item.get(k) is not None}
                fields.setdefault("title", fields.get("url") or "")
                fields.setdefault("snippet", "")
                key = _key(kind, fields)
                n = self._numbers.get(key)
                if n is None:
                    n = self._numbers[key] = len(self._items) + 1
                    self._items.append({"n": n, "kind": kind, **fields})
                    new.append({"n": n, **fields})
                numbered.append({"n": n, **fields})
            # Published under the lock: numbers reach every socket in the order they were given.
            if new:
                self.publish("sources", kind=kind, items=new)
        return numbered

    def all(self) -> list[dict]:
        """Every source of the turn, in number order, each with its `kind`: what the final reply saves."""
        with self._lock:
            return [dict(item) for item in self._items]


def _key(kind: str, item: dict) -> tuple:
    """What makes two items the same source: the URL, else the document or file and the place in
    it, else the text. A memory is one source, whatever its text says."""
    if item.get("memory_id"):
        return ("memory", item["memory_id"])
    if item.get("url"):
        return ("url", item["url"])
    place = json.dumps(item.get("locator"), sort_keys=True)
    if item.get("document_id") is not None:
        return (kind, item.get("knowledge_id"), item["document_id"], place)
    if item.get("file_id"):
        return (kind, item["file_id"], place)
    return (kind, item.get("title"), item.get("snippet"))
