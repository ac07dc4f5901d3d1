"""Memory's share of a chat's requests and turns: what a request carries, `remember`, and its card."""
from __future__ import annotations

from backend.core.tools import ToolRegistry
from backend.core.types import ToolCall
from backend.features.memory import choice, service, store, switch, tool, untrusted
from backend.store import chats
from backend.turns import approvals
from backend.turns.features import Offer, TurnHandle, TurnPart
from backend.turns.outbound import MEMORY


def offered(offer: Offer) -> list:
    """remember, to a model that calls tools, while memory is on for the chat and it is not temporary."""
    if not offer.model_calls_tools or not switch.on_for(offer.chat_id, offer.folder_id):
        return []
    return [tool.remember_tool()]


def system_text(chat, tool_names: list[str]) -> str | None:
    """The memories the request carries, quoted as data (none while memory is off for the chat)."""
    if not switch.on_for_chat(chat):
        choice.carried(chat.id, [])
        return None
    chosen, count = choice.choose(choice.latest_user_text(chat.id))
    choice.carried(chat.id, chosen)
    return choice.system_text(chosen, count) if chosen else None


class TurnMemory(TurnPart):
    """One turn's memory: the memories its request carried as its sources, and its own `remember`."""

    def __init__(self, turn: TurnHandle):
        self.turn = turn

    def bind_tools(self, tools: ToolRegistry) -> None:
        # The request is planned by now (and so are the turn's sources, a continued reply's included).
        used = choice.last_carried(self.turn.chat_id) or []
        if used:
            self.turn.sources().add("memory", [choice.source_item(m) for m in used])
            self.turn.read(MEMORY)  # what sends text out afterwards asks (CONTRACT §11)
        if tools.get(tool.NAME) is not None:
            tools.add(tool.remember_tool(self._remember))

    def asks(self, call: ToolCall) -> dict | None:
        if call.name != tool.NAME:
            return None
        card = {}
        places = untrusted.read_on_branch(self.turn.chat_id)
        if places:  # whatever the policy or rules: text from outside may have asked for it
            card["untrusted"] = untrusted.card(places)
        text = tool.text_of_call(call.arguments)
        old = store.near_duplicate(text) if text is not None else None
        if old is not None and old.text != text and (card or self._would_ask(call)):
            # The card says which memory the fact would replace; an allowed call updates it unasked.
            card["updates"] = {"memory_id": old.id, "text": old.text}
        return card or None

    def _would_ask(self, call: ToolCall) -> bool:
        policy = approvals.policy_for(self.turn.chat_id, tool.NAME, True, chats.mode(self.turn.chat_id))
        return policy == "ask" and not approvals.covered(self.turn.chat_id, call)

    def _remember(self, args: dict, cancel) -> str:
        text = tool.text_of(args)
        if not switch.on_for(self.turn.chat_id, None):
            raise ValueError("Memory is off for this chat now; nothing was saved.")
        memory, old = store.save(text, self.turn.chat_id)
        service.changed()
        if old is not None and old.text == text:
            return f"Already remembered ({memory.id}); nothing changed."
        extra = {"previous_text": old.text} if old is not None else {}
        self.turn.publish("memory_saved", memory_id=memory.id, text=memory.text, updated=old is not None, **extra)
        if old is not None:
            return f"Updated the memory {memory.id}, which said: {old.text}"
        return f"Saved to memory ({memory.id})."
