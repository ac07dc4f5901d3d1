"""Reading request bodies and query strings, with per-field messages a person can act on.

Every check records its message under the field's name and carries on, so one
422 lists everything wrong with a request rather than only the first problem.
"""
from __future__ import annotations

from flask import request

from backend.errors import invalid
from backend.fields import MISSING, Fields  # noqa: F401 (re-exported: the routes read bodies with them)
from backend.providers.key_check import key_problem
from backend.request_body import json_body  # noqa: F401 (re-exported: the routes read bodies with it)


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
