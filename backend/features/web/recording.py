"""The turn's web_search and web_fetch record what they bring in as the turn's sources (CONTRACT §8).

The model reads every page and snippet as quoted data (`web_search.quoted`), never as
instructions.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from backend.core.tools import Tool, ToolRegistry
from backend.tools import web_search
from backend.tools.fetch import NAME as FETCH
from backend.turns.sources import TurnSources

SNIPPET_CHARS = 300  # a fetched page's snippet: its first words


def bind(tools: ToolRegistry, sources: Callable[[], TurnSources]) -> None:
    """The turn's web_search and web_fetch (when offered) record what they return in `sources()`."""
    search = tools.get(web_search.NAME)
    if search is not None:
        tools.add(web_search.recording(search, lambda items: sources().add("web", items)))
    fetch = tools.get(FETCH)
    if fetch is not None:
        tools.add(_fetching(fetch, sources))


def _fetching(tool: Tool, sources: Callable[[], TurnSources]) -> Tool:
    def run(args: dict, cancel) -> str:
        page = tool.run(args, cancel)  # raises when nothing was read: no source then
        url, title, text = page_parts(page)
        (item,) = sources().add("web", [{"title": title or url or "", "url": url,
                                         "snippet": _snippet(text)}])
        return (f"{web_search.QUOTE_NOTE} Cite this page as [{item['n']}].\n"
                + web_search.quoted(item["n"], url, page))
    return replace(tool, run=run)


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
