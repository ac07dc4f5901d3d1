"""Checking one table of catalog.toml: the error with its line, the key checks, the secret patterns.

Shared by toml_file.py ([[providers]], [[models]], the whole file) and
mcp_file.py ([[mcp_servers]]), which both build on it.
"""
from __future__ import annotations

import math
import re

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
# A key name that means a secret: refused wherever it appears, before anything else is checked.
SECRET_NAME = re.compile(r"(?i)^(.*[_-])?(api[_-]?key|apikey|key|secret|token|passw(or)?d|authorization|bearer"
                         r"|credentials?)$")
# A value shaped like a vendor key (sk-…, sk-ant-…, xai-…, gsk_…, AIza…) pasted into some other field.
SECRET_VALUE = re.compile(r"(?<![A-Za-z0-9])(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{8,}|xai-[A-Za-z0-9]{16,}"
                          r"|gsk_[A-Za-z0-9]{16,}|AIza[A-Za-z0-9_-]{30,})")


class CatalogError(Exception):
    """What is wrong with catalog.toml and the line where it is (None when no line applies)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message, self.line = message, line

    def to_dict(self) -> dict:
        return {"message": self.message, "line": self.line}


def _fail(message: str, line: int | None):
    where = f"catalog.toml line {line}: " if line else "catalog.toml: "
    raise CatalogError(where + message, line)


class _Table:
    """Checks the keys of one [[providers]] / [[models]] / [[mcp_servers]] table, failing with its line.

    `lines` finds lines in the file's text (toml_file._Lines).
    """

    def __init__(self, table: dict, section: str, index: int, lines, allowed):
        self.t, self.lines, self.span = table, lines, lines.table(section, index)
        self.what = f"[[{section}]] #{index + 1}"
        if isinstance(table.get("id"), str):
            noun = {"providers": "provider", "models": "model", "mcp_servers": "MCP server"}[section]
            self.what = f'{noun} "{table["id"]}"'
        for key in table:
            if key not in allowed:
                self.fail(key, f"unknown key `{key}`. Allowed: {', '.join(allowed)}.")

    def fail(self, key: str | None, message: str):
        _fail(f"{self.what}: {message}", self.lines.key(self.span, key) if key else self.span[0])

    def text(self, key, *, required=False, max_len=200, default=None):
        if key not in self.t:
            if required:
                self.fail(None, f"`{key}` is missing; every table needs one.")
            return default
        value = self.t[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"`{key}` must be a non-empty string in quotes.")
        if len(value) > max_len:
            self.fail(key, f"`{key}` is longer than {max_len} characters.")
        return value.strip()

    def ident(self, key, *, required=True):
        value = self.text(key, required=required, max_len=128)
        if value is not None and not ID_RE.match(value):
            self.fail(key, f"`{key}` = \"{value}\" may only use letters, digits and . _ : @ - "
                           "(starting with a letter or digit).")
        return value

    def choice(self, key, options, *, required=False, default=None):
        if key not in self.t:
            if required:
                self.fail(None, f"`{key}` is missing; it must be one of: {', '.join(options)}.")
            return default
        value = self.t[key]
        if value not in options:
            self.fail(key, f"`{key}` = {_show(value)} is not known; use one of: {', '.join(options)}.")
        return value

    def number(self, key, lo, hi, *, integer=False, default=None):
        if key not in self.t:
            return default
        value = self.t[key]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or (integer and not isinstance(value, int)) or not lo <= value <= hi:
            kind = "a whole number" if integer else "a number"
            self.fail(key, f"`{key}` must be {kind} from {lo:g} to {hi:g}.")
        return int(value) if integer else float(value)

    def boolean(self, key, default):
        if key not in self.t:
            return default
        if not isinstance(self.t[key], bool):
            self.fail(key, f"`{key}` must be true or false (no quotes).")
        return self.t[key]


def _show(value) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)
