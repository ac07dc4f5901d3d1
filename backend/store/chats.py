"""A chat's row and the catalog's models as the turn engine reads and changes them.

The engine (backend/turns/) names what it does to a chat here (touch it, mark it
read, give it a title when it has none …) instead of querying the tables itself;
messages go through backend/store/history.py the same way.
"""
from __future__ import annotations

from backend.store.db import db, now
from backend.store.models import Chat, Folder, ModelEntry, Provider

# What a turn is handed and reads fields of; only this module queries them.
ChatRow = Chat
TOOLS_OFF_MAX = 500  # names in a `tools_off` list (CONTRACT §15)
TOOL_NAME_MAX = 200
ModelRow = ModelEntry
ProviderRow = Provider


# --- chats -------------------------------------------------------------------------------

def get(chat_id: str) -> Chat | None:
    """The chat, in the trash or not; None when there is no such chat."""
    return Chat.get_or_none(Chat.id == chat_id)


def live(chat_id: str) -> Chat | None:
    """The chat unless it is in the trash."""
    return Chat.get_or_none((Chat.id == chat_id) & Chat.deleted_at.is_null())


def mode(chat_id: str) -> str:
    """The chat's mode as it is now (ask, plan, edit, auto)."""
    return Chat.get_by_id(chat_id).mode


def set_mode(chat_id: str, value: str) -> None:
    Chat.update(mode=value).where(Chat.id == chat_id).execute()


def tools_off(chat: Chat) -> tuple[list[str] | None, list[str] | None, list[str]]:
    """The chat's own `tools_off`, its folder's (None without a folder) and the list that
    applies: its own unless null, else its folder's, read now so a folder's change reaches
    its chats at once (CONTRACT §15)."""
    own = chat.tools_off
    folder = None
    if chat.folder_id:
        folder = Folder.select(Folder.tools_off).where(Folder.id == chat.folder_id).first()
    inherited = folder.tools_off if folder is not None else None
    return own, inherited, list(own if own is not None else inherited or [])


def folder_prompt(chat: Chat) -> str:
    """The system prompt of the chat's folder as it is now ("" without one): read at each request,
    so an edit reaches the chats already in it (CONTRACT §12)."""
    if not chat.folder_id:
        return ""
    row = Folder.select(Folder.system_prompt).where(Folder.id == chat.folder_id).first()
    return (row.system_prompt or "") if row is not None else ""


def touch(chat_id: str) -> None:
    """New activity: the chat moves up the list (inside the caller's transaction, if any)."""
    Chat.update(updated_at=now()).where(Chat.id == chat_id).execute()


def mark_read(chat_id: str) -> bool:
    """A window shows the chat; True when it was unread (the list's row then changes)."""
    with db.atomic():
        return Chat.update(unread=False).where((Chat.id == chat_id) & Chat.unread).execute() > 0


def mark_unread(chat_id: str) -> None:
    """A reply ended with no window watching."""
    with db.atomic():
        Chat.update(unread=True).where(Chat.id == chat_id).execute()


def title_if_empty(chat_id: str, title: str) -> bool:
    """Give the chat `title` unless it got one meanwhile; True when it did."""
    with db.atomic():
        return Chat.update(title=title).where((Chat.id == chat_id) & (Chat.title == "")).execute() > 0


# --- models ------------------------------------------------------------------------------

def provider(provider_id: str | None) -> Provider | None:
    """The catalog's provider; None for no id or no such provider."""
    return Provider.get_or_none(Provider.id == provider_id) if provider_id else None


def model(model_id: str | None) -> ModelEntry | None:
    """The catalog model (its provider one attribute away); None for no id or no such model."""
    return ModelEntry.get_or_none(ModelEntry.id == model_id) if model_id else None


def prices(model_id: str | None) -> tuple[float | None, float | None]:
    """USD per million input and output tokens; None where the catalog names no price."""
    found = model(model_id)
    return (found.price_input, found.price_output) if found is not None else (None, None)


def any_model_sees() -> bool:
    """Whether some model of a provider that is turned on can see images."""
    return (ModelEntry.select(ModelEntry.id).join(Provider)
            .where(ModelEntry.supports_vision & Provider.enabled).exists())
