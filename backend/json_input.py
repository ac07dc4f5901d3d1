"""JSON from outside the process (socket frames, request bodies), read strictly.

Nothing is coerced and nothing that would fail later is let in: no NaN or
Infinity, no number a float or SQLite's 64-bit integer cannot hold, no string
that is not valid Unicode (a lone surrogate from a `\\ud800` escape), and no
nesting deeper than MAX_DEPTH. Each problem is named by where it is in the
document (`title`, `params.top_p`, `attachments[2]`).
"""
from __future__ import annotations

import json
from typing import Any

from backend.core.text import has_surrogate, well_formed

MAX_DEPTH = 100  # arrays and objects inside each other; far beyond any real body or frame
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
MAX_PROBLEMS = 20  # named in one answer; a document with more has them fixed in rounds

NOT_UNICODE = "This text holds an unpaired surrogate (a \\ud800–\\udfff escape without its other half), " \
              "which is not valid Unicode. Send it as UTF-8, or escape both halves of the pair."
NOT_UNICODE_NAME = "This name holds an unpaired surrogate, which is not valid Unicode."
NOT_A_NUMBER = "{literal} is not a number JSON allows; send a finite number."
TOO_LARGE = "{literal} is outside the numbers Numi can store " \
            "(whole numbers from -9223372036854775808 to 9223372036854775807)."


class JsonInputError(ValueError):
    """The document cannot be used; `kind` says why:

    - "syntax": not JSON at all; `message` is the parser's own account;
    - "depth": nested deeper than MAX_DEPTH;
    - "values": some values are refused; `problems` maps each place to a sentence.
    """

    def __init__(self, kind: str, message: str, problems: dict[str, str] | None = None):
        super().__init__(message)
        self.kind, self.message, self.problems = kind, message, problems or {}


class _Refused:
    """A number the parser met but will not hand on; `why` says so."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why


def _constant(literal: str) -> _Refused:  # NaN, Infinity, -Infinity
    return _Refused(NOT_A_NUMBER.format(literal=literal))


def _int(literal: str) -> int | _Refused:
    # The length check comes first: int() of a 5 000-digit literal is refused by Python itself.
    if len(literal) <= 20:
        value = int(literal)
        if INT_MIN <= value <= INT_MAX:
            return value
    shown = literal if len(literal) <= 30 else literal[:12] + "…" + literal[-6:]
    return _Refused(TOO_LARGE.format(literal=shown))


def _float(literal: str) -> float | _Refused:
    value = float(literal)
    if value in (float("inf"), float("-inf")):  # 1e400: no double holds it
        return _Refused(TOO_LARGE.format(literal=literal if len(literal) <= 30 else literal[:30] + "…"))
    return value


def loads(text: str | bytes) -> Any:
    """The JSON value of `text`, or JsonInputError saying what is wrong and where."""
    try:
        value = json.loads(text, parse_constant=_constant, parse_int=_int, parse_float=_float)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:  # JSONDecodeError, and UnicodeDecodeError for bytes that are not UTF-8
        raise JsonInputError("syntax", str(exc)) from None
    found = problems(value)
    if found:
        where, why = next(iter(found.items()))
        raise JsonInputError("values", f"{where}: {why}" if where else why, found)
    return value


def _too_deep() -> JsonInputError:
    return JsonInputError("depth", f"Arrays and objects nest deeper than {MAX_DEPTH} levels.")


def problems(value: Any) -> dict[str, str]:
    """Where `value` holds what `loads` refuses, in document order (at most MAX_PROBLEMS places).

    Iterative, so a deep document cannot exhaust the stack here; JsonInputError
    when it nests deeper than MAX_DEPTH.
    """
    found: dict[str, str] = {}
    # (value, its path, depth); children are pushed in reverse so they pop in order
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack and len(found) < MAX_PROBLEMS:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if has_surrogate(item):
                found[path] = NOT_UNICODE
        elif isinstance(item, _Refused):
            found[path] = item.why
        elif isinstance(item, dict):
            if depth >= MAX_DEPTH:
                raise _too_deep()
            children = []
            for key, child in item.items():
                if has_surrogate(key):
                    children.append((_Refused(NOT_UNICODE_NAME), _member(path, well_formed(key)), depth + 1))
                elif isinstance(child, (str, dict, list, _Refused)):
                    children.append((child, _member(path, key), depth + 1))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            if depth >= MAX_DEPTH:
                raise _too_deep()
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in reversed(list(enumerate(item)))
                         if isinstance(child, (str, dict, list, _Refused)))
    return found


def _member(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
