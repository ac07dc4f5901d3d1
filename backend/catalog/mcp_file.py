"""catalog.toml's [[mcp_servers]] tables: their format, checks and file layout.

Kept apart from toml_file.py (providers and models) but checked the same way,
with the line of the offending key. The predicates here are shared with the
API (backend/api/mcp.py), so whatever the API accepts is a file Numi can read
back: a value the parser would refuse must never be written.
"""
from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from backend.catalog.checks import SECRET_NAME, SECRET_VALUE, _show, _Table

TRANSPORTS = ("stdio", "http")
DEFAULT_CALL_TIMEOUT = 60.0
MIN_CALL_TIMEOUT, MAX_CALL_TIMEOUT = 1, 600
MCP_KEYS = ("id", "transport", "command", "args", "env", "cwd", "url", "headers", "secret_headers", "enabled",
            "call_timeout")
STDIO_ONLY = ("command", "args", "env", "cwd")
HTTP_ONLY = ("url", "headers", "secret_headers")
MAX_COMMAND = 1000
MAX_ARG = 4000
MAX_ITEMS = 100  # args, env entries, headers: far beyond any real server's needs
MAX_VALUE = 8192
MAX_PATH = 4096
MAX_URL = 2000
# RFC 9110 field names are tokens; anything else would be refused by the HTTP client at start-up.
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$")
ENV_NAME = re.compile(r"^[^=\0]{1,256}$")


# -- predicates shared with the API ------------------------------------------------------

def url_problem(url: str) -> str | None:
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 — raises on a port that is not a number
    except ValueError:
        return "the port in this URL is not a number from 0 to 65535"
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        return "it must be an http:// or https:// URL, such as http://127.0.0.1:8000/mcp"
    return None


def cwd_problem(cwd: str) -> str | None:
    if "\0" in cwd:
        return "it must not contain a NUL character"
    # Relative to what? Numi's own working directory means nothing to the person.
    if not os.path.isabs(os.path.expanduser(cwd)):
        return "it must be an absolute path (or start with ~), such as /home/me/project"
    return None


def header_value_problem(value: str) -> str | None:
    if any(c in value for c in "\r\n\0"):
        return "a header value must be one line (no line breaks)"
    return None


def looks_secret_name(name: str) -> bool:
    """True when a key named `name` would make the file refused as holding a secret (see toml_file)."""
    return bool(SECRET_NAME.search(name))


def looks_secret_value(value: str) -> bool:
    return bool(SECRET_VALUE.search(value))


def secret_id(server_id: str, header: str) -> str:
    """The KeyStore id of one secret header value (toml_file reserves `mcp:` among provider ids)."""
    return f"mcp:{server_id}:{header.lower()}"


# -- the file ----------------------------------------------------------------------------

def _strings(t: _Table, key: str) -> list[str]:
    value = t.t.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        t.fail(key, f'`{key}` must be a list of strings, like {key} = ["--port", "8080"].')
    if len(value) > MAX_ITEMS:
        t.fail(key, f"`{key}` lists more than {MAX_ITEMS} items.")
    return list(value)


def _string_table(t: _Table, key: str, name_ok, name_rule: str) -> dict[str, str]:
    value = t.t.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        t.fail(key, f'`{key}` must be a table of strings, like {key} = {{ NAME = "value" }}.')
    if len(value) > MAX_ITEMS:
        t.fail(key, f"`{key}` has more than {MAX_ITEMS} entries.")
    for name, item in value.items():
        if not name_ok(name):
            t.fail(key, f"`{key}`: {_show(name)} is not a valid name; {name_rule}.")
        if len(item) > MAX_VALUE:
            t.fail(key, f"`{key}.{name}` is longer than {MAX_VALUE} characters.")
    return dict(value)


def mcp_server(table: dict, index: int, lines) -> dict:
    """One checked [[mcp_servers]] table in canonical form (the other transport's fields empty)."""
    t = _Table(table, "mcp_servers", index, lines, MCP_KEYS)
    server = {"id": t.ident("id"),
              "transport": t.choice("transport", TRANSPORTS, required=True),
              "command": None, "args": [], "env": {}, "cwd": None, "url": None, "headers": {}, "secret_headers": []}
    transport = server["transport"]
    for key in HTTP_ONLY if transport == "stdio" else STDIO_ONLY:
        if key in table:
            t.fail(key, f"`{key}` is only for {'http' if transport == 'stdio' else 'stdio'} servers, and this "
                        f'one has transport = "{transport}". Remove it, or change `transport`.')
    if transport == "stdio":
        if "command" not in table:
            t.fail(None, '`command` is missing; a stdio server needs the program to run, such as '
                         'command = "npx".')
        server["command"] = t.text("command", max_len=MAX_COMMAND)
        server["args"] = _strings(t, "args")
        if any(len(a) > MAX_ARG for a in server["args"]):
            t.fail("args", f"an item of `args` is longer than {MAX_ARG} characters.")
        server["env"] = _string_table(t, "env", ENV_NAME.match, "a variable name is not empty and has no = sign")
        cwd = t.text("cwd", max_len=MAX_PATH)
        if cwd is not None and (problem := cwd_problem(cwd)):
            t.fail("cwd", f"`cwd`: {problem}.")
        server["cwd"] = cwd
    else:
        if "url" not in table:
            t.fail(None, '`url` is missing; an http server needs its address, such as '
                         'url = "http://127.0.0.1:8000/mcp".')
        url = t.text("url", max_len=MAX_URL)
        if problem := url_problem(url):
            t.fail("url", f"`url`: {problem}.")
        server["url"] = url
        headers = _string_table(t, "headers", HEADER_NAME.match,
                                "a header name uses letters, digits and ! # $ % & ' * + - . ^ _ ` | ~")
        for name, value in headers.items():
            if problem := header_value_problem(value):
                t.fail("headers", f"`headers.{name}`: {problem}.")
        server["headers"] = headers
        server["secret_headers"] = _secret_headers(t, headers)
    server["enabled"] = t.boolean("enabled", True)
    server["call_timeout"] = t.number("call_timeout", MIN_CALL_TIMEOUT, MAX_CALL_TIMEOUT,
                                      default=DEFAULT_CALL_TIMEOUT)
    return server


def _secret_headers(t: _Table, headers: dict) -> list[str]:
    names = _strings(t, "secret_headers")
    seen: set[str] = {h.lower() for h in headers}
    for name in names:
        if not HEADER_NAME.match(name):
            t.fail("secret_headers", f"`secret_headers`: {_show(name)} is not a valid header name.")
        if name.lower() in seen:
            t.fail("secret_headers", f"`secret_headers`: {_show(name)} is listed twice (or is also in "
                                     "`headers`); header names are compared ignoring case.")
        seen.add(name.lower())
    return names


def unique(servers: list[dict], lines, fail) -> None:
    seen: dict[str, int] = {}
    for i, server in enumerate(servers):
        if server["id"] in seen:
            first = lines.table("mcp_servers", seen[server["id"]])[0]
            span = lines.table("mcp_servers", i)
            also = f" (also at line {first})" if first else ""
            fail(f'the MCP server id "{server["id"]}" is used twice{also}; every [[mcp_servers]] table '
                 "needs its own id.", lines.key(span, "id") if span[0] else None)
        seen[server["id"]] = i


def file_fields(s: dict) -> list[tuple[str, object, object]]:
    """(key, value, default) in file order, for render.py; None leaves the key out."""
    stdio = s["transport"] == "stdio"
    timeout = s["call_timeout"]
    return [("id", s["id"], None), ("transport", s["transport"], None),
            ("command", s["command"] if stdio else None, None),
            ("args", list(s["args"]) if stdio else None, []),
            ("env", dict(s["env"]) if stdio else None, {}),
            ("cwd", s["cwd"] if stdio else None, None),
            ("url", None if stdio else s["url"], None),
            ("headers", None if stdio else dict(s["headers"]), {}),
            ("secret_headers", None if stdio else list(s["secret_headers"]), []),
            ("enabled", bool(s["enabled"]), True),
            ("call_timeout", int(timeout) if float(timeout).is_integer() else timeout, DEFAULT_CALL_TIMEOUT)]
