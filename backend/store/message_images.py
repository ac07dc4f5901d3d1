"""Images a model drew, kept on the assistant message whose step drew them (CONTRACT §13).

The message's `content_parts` holds them as `{"images": [item, …]}` beside whatever else it
holds; an item is `{"file_id", "prompt", "width", "height", "model", "backend",
"thumbnail_file_id"?}` (docs/PROTOCOL.md "Images"). The images feature adds them
(backend/features/images/); the message's JSON shows them as `images`, and export and import
carry them with their files, as they do a message's attachments. The store knows the key
because of that: the files are the store's to export.
"""
from __future__ import annotations

from typing import Any

from backend.store.db import db
from backend.store.models import Message

KEY = "images"
TEXT_KEYS = ("model", "backend")  # text or null


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def well_formed(item: Any) -> bool:
    """Whether `item` is an image item as Numi writes it (an imported row may hold anything)."""
    return (isinstance(item, dict) and isinstance(item.get("file_id"), str) and isinstance(item.get("prompt"), str)
            and _whole(item.get("width")) and _whole(item.get("height"))
            and all(item.get(k) is None or isinstance(item.get(k), str) for k in TEXT_KEYS)
            and (item.get("thumbnail_file_id") is None or isinstance(item.get("thumbnail_file_id"), str)))


def items(content_parts: Any) -> list[dict]:
    """The images a row's `content_parts` holds, as the message's JSON lists them."""
    raw = content_parts.get(KEY) if isinstance(content_parts, dict) else None
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        if well_formed(item):
            shown = {"file_id": item["file_id"], "prompt": item["prompt"], "width": item["width"],
                     "height": item["height"], "model": item.get("model"), "backend": item.get("backend")}
            if item.get("thumbnail_file_id"):
                shown["thumbnail_file_id"] = item["thumbnail_file_id"]
            out.append(shown)
    return out


def file_ids(content_parts: Any) -> list[str]:
    """Every file the images name: each image and its thumbnail."""
    return [i for item in items(content_parts) for i in (item["file_id"], item.get("thumbnail_file_id")) if i]


def add(message_id: int, item: dict) -> bool:
    """Add an image to a message (after the ones it has); False when there is no such message."""
    with db.atomic():
        row = Message.get_or_none(Message.id == message_id)
        if row is None:
            return False
        parts = dict(row.content_parts) if isinstance(row.content_parts, dict) else {}
        parts[KEY] = [*items(parts), item]
        Message.update(content_parts=parts).where(Message.id == message_id).execute()
    return True
