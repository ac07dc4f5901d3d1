"""The web: `web_fetch`, `web_search` on the backend the person chose, and their sources.

Plugged into the engine's points: the tools (fetch for every model that calls tools,
search when a backend is set and usable: Settings → Web search, a key-based one only with
its key), each turn's share (`_TurnWeb`: the fetch reads only the private addresses the
person allowed, a fetch into their own network asks on its card, and what both tools bring
in becomes the turn's numbered sources). Its settings section is `web_fetch`
(fetch_section.py); `web_search`'s is declared in backend/api/settings_sections.py, since
what GET shows of it needs the runtime's key store, and its key routes are
backend/api/settings.py's.
"""
from __future__ import annotations

from backend.core.tools import ToolRegistry
from backend.core.types import ToolCall
from backend.features.web import fetch_section, fetch_setting, recording, search_setting
from backend.tools.fetch import fetch_tool
from backend.tools.web_search import web_search_tool
from backend.turns.features import Feature, Offer, TurnHandle, TurnPart

__all__ = ["FEATURE", "fetch_setting", "recording", "search_setting"]

_FETCH = fetch_tool()  # each turn binds its own (`_TurnWeb`)


def _tools(offer: Offer) -> list:
    if not offer.model_calls_tools:
        return []
    # Each fetch asks by default; search only when a backend is set and can run.
    searching = search_setting.backend(offer.keys) if offer.keys is not None else None
    return [_FETCH, *([web_search_tool(searching)] if searching is not None else [])]


class _TurnWeb(TurnPart):
    """A turn's web tools: what its fetch may read on the person's own network, and its sources."""

    def __init__(self, turn: TurnHandle):
        self.turn = turn
        self.fetches = fetch_setting.TurnFetches(turn.chat_id)

    def bind_tools(self, tools: ToolRegistry) -> None:
        self.fetches.bind(tools)
        recording.bind(tools, self.turn.sources)

    def asks(self, call: ToolCall) -> dict | None:
        # A fetch into the person's own network asks, unless they typed or trusted that address.
        local = self.fetches.unvouched(call)
        return {"local": {"url": local, "reason": fetch_setting.LOCAL_REASON}} if local else None

    def approved(self, call: ToolCall, arguments: str | None, asked: dict | None) -> None:
        local = (asked or {}).get("local")
        self.fetches.grant(call, arguments, local["url"] if local else None)


FEATURE = Feature(
    name="web",
    tools=_tools,
    catalog=lambda: [_FETCH, web_search_tool(None)],
    bind=_TurnWeb,
    settings=(fetch_section.SECTION,),
)
