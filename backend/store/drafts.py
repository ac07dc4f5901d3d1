"""Drafts: a chat's unsent message (its text and attached file ids), one per chat.

Kept until the message is sent or cleared; a purged chat's draft goes with it (ON DELETE
CASCADE), a soft-deleted chat's is dropped by the route that deletes it.
"""
from __future__ import annotations

from peewee import FloatField, ForeignKeyField, TextField

from backend.store.db import now
from backend.store.models import Base, Chat, JsonText


class Draft(Base):
    chat = ForeignKeyField(Chat, column_name="chat_id", primary_key=True, on_delete="CASCADE")
    text = TextField()
    file_ids = JsonText(column_name="file_ids_json")
    updated_at = FloatField(default=now)


def read(chat_id: str) -> Draft | None:
    return Draft.get_or_none(Draft.chat == chat_id)


def save(chat_id: str, text: str, file_ids: list[str]) -> Draft | None:
    """Store the draft; an empty one (no text, no files) is dropped instead. → the stored draft or None."""
    if not text and not file_ids:
        drop(chat_id)
        return None
    Draft.insert(chat=chat_id, text=text, file_ids=file_ids, updated_at=now()).on_conflict_replace().execute()
    return read(chat_id)


def drop(chat_id: str) -> None:
    Draft.delete().where(Draft.chat == chat_id).execute()
