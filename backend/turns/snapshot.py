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


def stored(hub, chat_id: str, queue: list[dict]) -> list[dict]:
    """No turn is retained in memory: the chat's newest reply as saved stands in for its events
    (a compare's: each column's newest reply, CONTRACT §10)."""
    row = history.latest_reply(chat_id)
    if row is None:
        return [build(hub, None, None, "", "", [], COMPLETE, queue=queue)]
    return [_saved(hub, reply, queue, model_id) for reply, model_id in _columns(row)]


def _columns(row) -> list[tuple]:
    """The newest reply of each column of the compare `row` answers (with its model), or just `row`."""
    user = history.turn_user_message(row)
    parts = user.content_parts if user is not None and isinstance(user.content_parts, dict) else {}
    if user is None or not isinstance(parts.get("compare"), list):
        return [(row, None)]
    firsts = [r for r in history.tree(row.chat_id, after=user.id) if r.parent_id == user.id and r.role == "assistant"]
    out = []
    for first in firsts:
        leaf_id = history.leaf_under(first.id)
        rows = history.by_ids([leaf_id, first.id])
        out.append((rows[leaf_id] if rows[leaf_id].role == "assistant" else rows[first.id], first.model_id))
    return out


def _saved(hub, row, queue: list[dict], model_id: str | None) -> dict:
    message = message_to_dict(row)
    extra = {"sources": message["sources"]} if message["sources"] else {}
    if model_id is not None:
        extra["model_id"] = model_id
    return build(hub, None, message["id"], message["content"], message["reasoning"], message["tool_calls"],
                 message["status"], queue=queue, **extra)
