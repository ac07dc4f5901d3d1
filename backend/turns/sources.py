"""A turn's sources (CONTRACT §8): what its tools brought in, numbered from 1 per turn.

Each `web_search` result and each page `web_fetch` read becomes a source as it arrives:
it gets the next number (a URL seen before keeps its first one), a `sources` event
announces the new ones, and the turn's final reply saves the whole list, so the
`[n]` in its text still point somewhere after a reload. The model reads every page
and snippet as quoted data (`web_search.quoted`), never as instructions.
"""
from __future__ import annotations

import threading
from dataclasses import replace
from typing import Callable

from backend.core.text import well_formed_value
from backend.core.tools import Tool, ToolRegistry
from backend.tools import web_search

KINDS = ("web", "knowledge", "memory")
FETCH = "web_fetch"
SNIPPET_CHARS = 300  # a fetched page's snippet: its first words
_FIELDS = ("title", "url", "file_id", "snippet", "locator")


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

    def bind(self, tools: ToolRegistry) -> None:
        """The turn's web_search and web_fetch (when offered) record what they return here."""
        search = tools.get(web_search.NAME)
        if search is not None:
            tools.add(web_search.recording(search, lambda items: self.add("web", items)))
        fetch = tools.get(FETCH)
        if fetch is not None:
            tools.add(self._fetching(fetch))

    def _fetching(self, tool: Tool) -> Tool:
        def run(args: dict, cancel) -> str:
            page = tool.run(args, cancel)  # raises when nothing was read: no source then
            url, title, text = page_parts(page)
            (item,) = self.add("web", [{"title": title or url or "", "url": url, "snippet": _snippet(text)}])
            return (f"{web_search.QUOTE_NOTE} Cite this page as [{item['n']}].\n"
                    + web_search.quoted(item["n"], url, page))
        return replace(tool, run=run)


def _key(kind: str, item: dict) -> tuple:
    """What makes two items the same source: the URL, else the file and place in it, else the text."""
    if item.get("url"):
        return ("url", item["url"])
    if item.get("file_id"):
        return (kind, item["file_id"], item.get("locator"))
    return (kind, item.get("title"), item.get("snippet"))


def page_parts(page: str) -> tuple[str | None, str, str]:
    """(url, title, text) of web_fetch's answer: its header lines, a blank line, the page's text."""
    head, _, text = page.partition("\n\n")
    url, title = None, ""
    for line in head.splitlines():
        if line.startswith("URL: ") and url is None:
            url = line[5:].strip()
        elif line.startswith("Title: ") and not title:
            title = line[7:].strip()
    return url, title, text


def _snippet(text: str) -> str:
    words = " ".join(text.split())
    if len(words) <= SNIPPET_CHARS:
        return words
    cut = words[:SNIPPET_CHARS].rsplit(" ", 1)[0]
    return cut + "…"
