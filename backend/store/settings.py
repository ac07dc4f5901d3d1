"""App settings: the key-value rows of the `setting` table, and the sections of /api/settings.

Every read and write of those rows goes through here. A feature with a section in
GET/PATCH /api/settings declares it once, `register(Section(...))`, and the settings
routes show, check and save whatever is registered. What belongs to one chat is not
kept here but in backend/store/chat_state.py, which goes with its chat.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from backend.store.models import Setting


def get(key: str, default=None):
    """The value stored under `key`, or `default` when it was never set."""
    row = Setting.get_or_none(Setting.key == key)
    return default if row is None or row.value is None else row.value


def put(key: str, value) -> None:
    """Store `value` under `key`; None removes the row."""
    if value is None:
        # The column is NOT NULL and JsonText stores None as NULL: no row means "unset".
        Setting.delete().where(Setting.key == key).execute()
    else:
        Setting.insert(key=key, value=value).on_conflict_replace().execute()


def get_object(key: str) -> dict:
    """A setting kept as an object (compaction, research…); {} when unset or not an object."""
    value = get(key)
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Section:
    """One top-level key of GET/PATCH /api/settings.

    `validate(fields)` reads the section from a PATCH body (the request's
    backend.api.validate.Fields) and returns the value sent, or MISSING when it was
    not sent or is wrong; each problem goes into `fields` as a sentence saying what
    to send. `merge`: the keys sent go into the current value (else they replace it
    whole). `current()`: the value as it stands, defaults filling what is unset (when
    None: the stored row, else `defaults`); `shown()`: what GET gives (when None:
    `current()`). An object's `defaults` also name the keys a PATCH may send.
    """
    name: str
    defaults: Any
    validate: Callable[[Any], Any]
    merge: bool = False
    current: Callable[[], Any] | None = None
    shown: Callable[[], Any] | None = None

    def value(self):
        return self.current() if self.current is not None else get(self.name, self.defaults)

    def view(self):
        return self.shown() if self.shown is not None else self.value()

    def save(self, sent) -> None:
        """Store what a PATCH sent (already validated): merged into the current value, or as it is."""
        put(self.name, {**self.value(), **sent} if self.merge else sent)


_sections: dict[str, Section] = {}


def register(section: Section) -> Section:
    """Add a section to /api/settings (a section registered again under its name replaces it)."""
    _sections[section.name] = section
    return section


def unregister(name: str) -> None:
    """Drop a section (a feature unplugged); its stored value stays."""
    _sections.pop(name, None)


def sections() -> list[Section]:
    """Every registered section, in the order they were first registered."""
    return list(_sections.values())


def find(name: str) -> Section | None:
    return _sections.get(name)
