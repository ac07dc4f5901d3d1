"""Text from outside made safe to keep and to quote: valid Unicode, inert tags, no secrets.

A Python str can hold a surrogate code point (U+D800–U+DFFF) on its own: JSON
decoders turn an escaped `\\ud83d` into one. UTF-8 cannot carry it, so such a
string fails wherever it is encoded — a SQLite commit, a WebSocket frame. Text
that enters from outside is made well-formed here, once, at the edge.

Text quoted to a model inside an element (`<source>`, `<summary>`) has every `<`
that would open or close that element escaped (`inert_tags`), and a key an
upstream service echoes is cut out of its messages (`redact`).
"""
from __future__ import annotations

import functools
import re
from typing import Any, Hashable

SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def has_surrogate(text: str) -> bool:
    """True when `text` holds a surrogate code point (which UTF-8 cannot encode)."""
    return not text.isascii() and SURROGATE.search(text) is not None


def well_formed(text: str) -> str:
    """`text` with each high+low surrogate pair joined into its character and any other surrogate as U+FFFD."""
    if not has_surrogate(text):
        return text
    # UTF-16 is where surrogates mean something: written out as code units and read
    # back, adjacent halves become one character and a lone half fails to decode.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def well_formed_value(value: Any) -> Any:
    """A JSON-like value (str, list, dict, scalars) with every string, keys included, made well-formed."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, dict):
        return {well_formed_value(k): well_formed_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(well_formed_value(v) for v in value)
    return value


def is_high_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


class SplitPairs:
    """Joins surrogate pairs split across the pieces of a stream, per channel.

    A piece that ends in a high surrogate keeps it back: the next piece of the
    same channel may start with its low half. Whatever is still held when the
    stream ends (`held()`) was a lone half, and is given back as U+FFFD.
    """

    def __init__(self) -> None:
        self._held: dict[Hashable, str] = {}

    def feed(self, channel: Hashable, piece: str) -> str:
        """The part of `piece` (after what was held) that can be passed on now, well-formed."""
        held = self._held.pop(channel, None)
        if held is not None:
            piece = held + piece
        elif not has_surrogate(piece):
            return piece
        if piece and is_high_surrogate(piece[-1]):
            self._held[channel] = piece[-1]
            piece = piece[:-1]
        return well_formed(piece)

    def held(self) -> list[Hashable]:
        """The channels still holding a lone half, each now to be ended with U+FFFD; forgets them."""
        channels = list(self._held)
        self._held.clear()
        return channels


def inert_tags(text: str, *names: str) -> str:
    """`text` in which no `<name …>` or `</name>` of `names` (any case, spaces inside) is a tag any more.

    Quoted text that could write `</source>` or `</summary>` would end its quote and go
    on as if Numi spoke; each `<` that starts such a tag gets a backslash after it.
    """
    return _tag_starts(names).sub(r"<\\", text)


@functools.lru_cache(maxsize=16)
def _tag_starts(names: tuple[str, ...]) -> re.Pattern:
    alternatives = "|".join(re.escape(n) for n in names)
    # `<summary-of-data>` or `<sources>` is another element, not one to escape.
    return re.compile(rf"<(?=\s*/?\s*(?:{alternatives})(?![\w.:-]))", re.IGNORECASE)


SECRET_SHOWN_AS = "[API key]"


def redact(text: str, secret: str | None, shown_as: str = SECRET_SHOWN_AS) -> str:
    """`text` with every copy of `secret` (a key an upstream service may echo) replaced by `shown_as`."""
    if not secret or not text:
        return text
    return text.replace(secret, shown_as)
