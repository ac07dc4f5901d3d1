"""The cursors of the paged lists: opaque strings naming the row after which the next page starts.

A list ordered newest first by (time, id) pages by keyset: its cursor is the
last row's pair, so rows added or removed meanwhile never shift a page. The
message tree is read oldest first by id, so its cursor is a message id.
"""
from __future__ import annotations

import base64
import json

BAD_CURSOR = "This cursor is not one this server gave out. Start again without a cursor."
MAX_ID_DIGITS = 18  # a message id fits SQLite's 64-bit integer


class BadCursor(ValueError):
    """A cursor this server did not give out; its message says what to do."""

    def __init__(self) -> None:
        super().__init__(BAD_CURSOR)


def encode(key: float, row_id: str) -> str:
    """The cursor after the row with this sort key and id."""
    raw = json.dumps([key, row_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str) -> tuple[float, str]:
    """(sort key, id) of the row `cursor` names; BadCursor when it is not one `encode` made."""
    try:
        key, row_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if isinstance(key, (int, float)) and isinstance(row_id, str):
            return float(key), row_id
    except (ValueError, TypeError):
        pass
    raise BadCursor()


def newest_first(query, key, id_field, cursor: str, limit: int) -> tuple[list, str | None]:
    """A page of `query`, newest first by (`key`, `id_field`), after the row `cursor` names ('' for
    the first page), and the cursor of the next page (None when this one is the last)."""
    if cursor:
        after_key, after_id = decode(cursor)
        query = query.where((key < after_key) | ((key == after_key) & (id_field < after_id)))
    rows = list(query.order_by(key.desc(), id_field.desc()).limit(limit + 1))
    page = rows[:limit]
    if len(rows) <= limit:
        return page, None
    last = page[-1]
    return page, encode(getattr(last, key.name), getattr(last, id_field.name))


def encode_id(message_id: int) -> str:
    """The cursor after this message, in a list ordered by id."""
    return str(message_id)


def decode_id(cursor: str) -> int:
    """The message id `cursor` names (0, before every message, for ''); BadCursor otherwise."""
    if not cursor:
        return 0
    if not (cursor.isascii() and cursor.isdigit()) or len(cursor) > MAX_ID_DIGITS:
        raise BadCursor()
    return int(cursor)
