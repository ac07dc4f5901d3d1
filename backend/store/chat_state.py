"""What belongs to one chat besides its messages, by key: its tool policies, its standing
"allow always" rules, the plan it is carrying out (each feature names its own key).

Kept apart from the app's settings (backend/store/settings.py) so that it goes with its
chat: a purged chat's rows are removed by ON DELETE CASCADE, and a chat that is gone
keeps nothing written for it afterwards.
"""
from __future__ import annotations

from backend.store.db import db
from backend.store.models import Chat, ChatState


def get(chat_id: str, key: str, default=None):
    """The chat's value under `key`, or `default` when none is stored."""
    row = ChatState.get_or_none((ChatState.chat == chat_id) & (ChatState.key == key))
    return default if row is None or row.value is None else row.value


def put(chat_id: str, key: str, value) -> None:
    """Store the chat's value under `key`; None removes it. Nothing is stored for a chat that is gone."""
    with db.atomic():
        if value is None:
            ChatState.delete().where((ChatState.chat == chat_id) & (ChatState.key == key)).execute()
        elif Chat.select().where(Chat.id == chat_id).exists():
            ChatState.insert(chat=chat_id, key=key, value=value).on_conflict_replace().execute()


def of_every_chat(key: str) -> list[tuple[str, object]]:
    """(chat id, value) of each chat that has a value under `key`, by chat id."""
    query = ChatState.select(ChatState.chat, ChatState.value).where(ChatState.key == key).order_by(ChatState.chat)
    return [(row.chat_id, row.value) for row in query]
