"""Checking a JSON object's fields, with per-field messages a person can act on.

Every check records its message under the field's name and carries on, so one 422 lists
everything wrong with a request rather than only the first problem. The routes read their
bodies with it (backend/api/validate.py), and so do the features' settings sections.
"""
from __future__ import annotations

import math
from urllib.parse import urlsplit

from backend.errors import invalid

MISSING = object()  # "the field was not sent" — distinct from an explicit null


def _fmt(n) -> str:
    return f"{n:,}".replace(",", " ") if isinstance(n, int) else f"{n:g}"


def _is_number(value) -> bool:
    # bool is an int in Python, but `true` is not a temperature.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class Fields:
    """Checks the fields of one JSON object; `check()` raises a 422 listing every problem."""

    def __init__(self, body: dict, allowed, read_only=(), prefix: str = ""):
        self.body, self.prefix, self.errors = body, prefix, {}
        for name in body:
            if name in read_only:
                self.fail(name, "This field is read-only and cannot be changed.")
            elif name not in allowed:
                self.fail(name, f"Unknown field. Allowed here: {', '.join(sorted(allowed))}.")

    def fail(self, name: str, message: str) -> object:
        self.errors[self.prefix + name] = message
        return MISSING

    def raw(self, name: str, required: bool, nullable: bool):
        """The raw value, or MISSING when absent/already failed; records required/null problems."""
        if self.prefix + name in self.errors:
            return MISSING
        if name not in self.body:
            return self.fail(name, "This field is required.") if required else MISSING
        if self.body[name] is None and not nullable:
            return self.fail(name, "This field cannot be null.")
        return self.body[name]

    def text(self, name, *, max_len: int, required=False, nullable=False, non_empty=False, strip=False):
        value = self.raw(name, required, nullable)
        if value is MISSING or value is None:
            return value
        if not isinstance(value, str):
            return self.fail(name, "Must be a string.")
        if strip:
            value = value.strip()
        if non_empty and not value:
            return self.fail(name, "Must not be empty.")
        if len(value) > max_len:
            return self.fail(name, f"Must be at most {_fmt(max_len)} characters (it has {_fmt(len(value))}).")
        return value

    def number(self, name, lo, hi, *, integer=False, required=False, nullable=False):
        value = self.raw(name, required, nullable)
        if value is MISSING or value is None:
            return value
        kind = "a whole number" if integer else "a number"
        if not _is_number(value) or (integer and value != int(value)) or not lo <= value <= hi:
            return self.fail(name, f"Must be {kind} from {_fmt(lo)} to {_fmt(hi)}.")
        return int(value) if integer else value

    def choice(self, name, options, *, required=False, nullable=False):
        value = self.raw(name, required, nullable)
        if value is MISSING or value is None:
            return value
        if value not in options:
            return self.fail(name, f"Must be one of: {', '.join(options)}.")
        return value

    def boolean(self, name, *, required=False):
        value = self.raw(name, required, False)
        if value is not MISSING and not isinstance(value, bool):
            return self.fail(name, "Must be true or false.")
        return value

    def url(self, name, *, required=False, nullable=False):
        value = self.text(name, max_len=2000, required=required, nullable=nullable, strip=True)
        if value is MISSING or value is None:
            return value
        if value == "" and nullable:
            return None
        try:
            parts = urlsplit(value)
        except ValueError:  # an unclosed [IPv6 literal
            parts = urlsplit("")
        # A control character (NUL, a line break) would corrupt the request line the URL goes into.
        if (parts.scheme not in ("http", "https") or not parts.hostname
                or any(c.isspace() or c < " " or c == "\x7f" for c in value)):
            return self.fail(name, "Must be an http:// or https:// URL, such as http://127.0.0.1:11434/v1.")
        try:
            parts.port  # noqa: B018 — raises on a port that is not a number
        except ValueError:
            return self.fail(name, "The port in this URL is not a number from 0 to 65535.")
        return value

    def check(self) -> None:
        if self.errors:
            raise invalid(self.errors)


def nested(fields: Fields, setting: str, defaults: dict, example: str) -> Fields | None:
    """The fields of the object sent as `setting`; None when it was not sent or is no object (then noted)."""
    body = fields.raw(setting, False, False)
    if body is MISSING:
        return None
    if not isinstance(body, dict):
        fields.fail(setting, example)
        return None
    return Fields(body, allowed=defaults, prefix=setting + ".")
