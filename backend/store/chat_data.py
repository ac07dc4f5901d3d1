"""A feature's own data of one chat, carried by export and import (a chat's documents).

The store sits below the features and never imports them, so a feature hands its part in
here: `backend/turns/features.register` registers `Feature.chat_data` under the feature's
name. The export (export_format.py) asks each part for the chat's value and writes those
it gets under the chat's `"features": {name: value}`; the import checks each value it
knows (import_read.py: a refusal is a field problem like any other, and nothing is
imported) and writes it for each chat the import makes (import_write.py), in the import's
short transactions while the chat is still hidden. A file without `features`, or a Numi
without the feature, imports the chat without it; a name this Numi does not know is
ignored.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

MessageIds = Callable[[int], "int | None"]  # a message id of the file -> the id the import gave it, or None


@dataclass(frozen=True)
class ChatData:
    """How one feature's data of a chat travels in an export and comes back on import."""
    # export(chat_id) -> a JSON value (strings, numbers, lists, objects), or None: nothing to carry.
    export: Callable[[str], Any]
    # check(value) -> what `write` takes; raises ValueError with a sentence when the value is refused.
    check: Callable[[Any], Any]
    # write(chat_id, checked, message_ids): store it for a chat the import makes. It runs inside
    # the import's short transactions (backend/store/paced.py): a generator that yields between
    # small writes lets other writers in; anything else it returns is ignored.
    write: Callable[[str, Any, MessageIds], Iterable | None]


_parts: dict[str, ChatData] = {}


def register(name: str, data: ChatData) -> None:
    _parts[name] = data


def unregister(name: str) -> None:
    _parts.pop(name, None)


def parts() -> dict[str, ChatData]:
    """Every registered part, by feature name, in registration order."""
    return dict(_parts)


def exported(chat_id: str) -> dict[str, Any]:
    """The chat's values, by feature name: only the parts that have one."""
    out = {}
    for name, data in _parts.items():
        value = data.export(chat_id)
        if value is not None:
            out[name] = value
    return out
