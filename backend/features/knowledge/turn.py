"""The knowledge feature's share of a chat's tools and turns: `knowledge_search`, its sources, its note."""
from __future__ import annotations

from backend.core.tools import ToolRegistry
from backend.features.knowledge import bases, links, tool
from backend.store import chats
from backend.turns.features import Offer, TurnHandle, TurnPart


def offered(offer: Offer) -> list:
    """knowledge_search, to a model that calls tools, when the chat or its folder names a base."""
    if not offer.model_calls_tools or not links.in_use(offer.chat_id, offer.folder_id):
        return []
    return [tool.knowledge_tool()]


def system_text(chat, tool_names: list[str]) -> str | None:
    """Which bases the chat searches, so the model knows when its question is theirs to answer."""
    if tool.NAME not in tool_names:
        return None
    names = [b.name for b in map(bases.get, links.in_use(chat.id, chat.folder_id)) if b is not None]
    if not names:
        return None
    listed = ", ".join(f"“{n}”" for n in names)
    return (f"The person attached knowledge bases to this chat: {listed}. When a question may be answered by "
            f"their documents, search them with {tool.NAME} and cite the passages you use as [n].")


class TurnKnowledge(TurnPart):
    """One turn's knowledge_search: the chat's bases as they are at each call, numbered as its sources."""

    def __init__(self, turn: TurnHandle):
        self.turn = turn

    def bind_tools(self, tools: ToolRegistry) -> None:
        if tools.get(tool.NAME) is not None:
            tools.add(tool.knowledge_tool(self._search))

    def _search(self, args: dict, cancel) -> str:
        q, limit = tool.arguments(args)
        service = self.turn.service("knowledge")
        if service is None:
            raise RuntimeError("The knowledge bases cannot be searched right now (their index did not start; "
                               "Numi's log says why). Answer without them and say so.")
        chat = chats.get(self.turn.chat_id)
        ids = links.in_use(self.turn.chat_id, chat.folder_id if chat is not None else None)
        if not ids:
            raise ValueError("This chat has no knowledge bases any more. Answer without them.")
        hits = service.search(ids, q, limit)
        numbered = self.turn.sources().add("knowledge", [tool.source_item(h) for h in hits]) if hits else []
        return tool.described(q, [(item["n"], hit) for item, hit in zip(numbered, hits)])
