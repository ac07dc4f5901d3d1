"""The `snapshot` event: a turn's whole state in one event, from memory or as saved (CONTRACT §4)."""
from __future__ import annotations

from backend.core.status import COMPLETE
from backend.store import history
from backend.store.serialize import message_to_dict
from backend.turns.events import make


def build(hub, turn_id: str | None, message_id: int | None, content: str, reasoning: str,
          tool_calls: list, status: str, **extra) -> dict:
    """The one shape of a snapshot, numbered as the hub's newest event."""
    last = hub.last_event_id
    return make("snapshot", event_id=last, turn_id=turn_id, epoch=hub.epoch, message_id=message_id,
                content=content, reasoning=reasoning, tool_calls=tool_calls, status=status,
                last_event_id=last, **extra)


def stored(hub, chat_id: str, queue: list[dict]) -> dict:
    """No turn is retained in memory: the chat's newest reply as saved stands in for its events."""
    row = history.latest_reply(chat_id)
    if row is None:
        return build(hub, None, None, "", "", [], COMPLETE, queue=queue)
    message = message_to_dict(row)
    extra = {"sources": message["sources"]} if message["sources"] else {}
    return build(hub, None, message["id"], message["content"], message["reasoning"], message["tool_calls"],
                 message["status"], queue=queue, **extra)
