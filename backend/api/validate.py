"""Reading request bodies and query strings, with per-field messages a person can act on.

Every check records its message under the field's name and carries on, so one
422 lists everything wrong with a request rather than only the first problem.
"""
from __future__ import annotations

import math
from urllib.parse import urlsplit

from flask import request

from backend import json_input
from backend.errors import ApiError, invalid
from backend.providers.key_check import key_problem

MISSING = object()  # "the field was not sent" — distinct from an explicit null


def json_body() -> dict:
    """The request's JSON object, read strictly (backend.json_input); an empty body counts as {}.

    A value JSON allows but Numi cannot keep (a lone surrogate, NaN, a number
    beyond 64 bits) is a 422 naming each place; a body that is not JSON, or
    nests too deep to read, is a 400.
    """
    raw = request.get_data(cache=True)
    if not raw:
        return {}
    if request.mimetype != "application/json":
        raise ApiError(415, "unsupported_media_type", "Send the request body as application/json.")
    try:
        data = json_input.loads(raw)
    except json_input.JsonInputError as exc:
        if exc.kind == "syntax":
            raise ApiError(400, "bad_request", f"The request body is not valid JSON ({exc.message}). "
                           "Send one JSON object.") from None
        if exc.kind == "depth":
            raise ApiError(400, "bad_request", f"The request body nests arrays and objects deeper than "
                           f"{json_input.MAX_DEPTH} levels. Send a flatter JSON object.") from None
        raise invalid({where or "body": why for where, why in exc.problems.items()}) from None
    if not isinstance(data, dict):
        raise ApiError(422, "invalid", "The request body must be a JSON object, like {\"name\": \"value\"}.",
                       {"body": "Send a JSON object, not a list or a single value."})
    return data


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


def api_key_field(f: Fields, *, required: bool):
    """The `api_key` field: a key a request's header can carry (see backend.providers.key_check)."""
    api_key = f.text("api_key", max_len=4096, required=required, non_empty=required, nullable=not required,
                     strip=True)
    if isinstance(api_key, str) and (problem := key_problem(api_key)):
        return f.fail("api_key", problem)
    return api_key


def int_arg(name: str, default: int, lo: int, hi: int) -> int:
    raw = request.args.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = lo - 1
    if not lo <= value <= hi:
        raise invalid({name: f"Must be a whole number from {lo} to {hi}."})
    return value


def bool_arg(name: str) -> bool | None:
    """`1/true/yes` → True, `0/false/no` → False, absent or empty → None."""
    raw = request.args.get(name, "").strip().lower()
    if raw == "":
        return None
    if raw in ("1", "true", "yes"):
        return True
    if raw in ("0", "false", "no"):
        return False
    raise invalid({name: "Must be true or false (1 or 0)."})
