"""The fields features add to chats and folders (`Feature.fields`): read from a request, saved, shown."""
from __future__ import annotations

from backend.api.validate import MISSING, Fields
from backend.turns import features


def names(kind: str) -> tuple[str, ...]:
    return tuple(f.name for f in features.owner_fields(kind))


def checked(f: Fields, kind: str) -> dict:
    """The request's values of the features' fields, checked; a refusal joins `f`'s errors."""
    out = {}
    for field in features.owner_fields(kind):
        value = f.raw(field.name, False, True)
        if value is MISSING:
            continue
        try:
            out[field.name] = field.check(value)
        except features.FieldRefused as exc:
            f.fail(field.name, str(exc))
    return out


def write(kind: str, owner_id: str, values: dict) -> None:
    """Save checked values (inside the request's transaction)."""
    for field in features.owner_fields(kind):
        if field.name in values:
            field.write(kind, owner_id, values[field.name])


def shown(kind: str, owner_id: str) -> dict:
    """The features' fields of one chat or folder, as GET shows them."""
    return {field.name: field.read(kind, owner_id) for field in features.owner_fields(kind)}
