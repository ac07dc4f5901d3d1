"""MCP servers: /api/mcp/servers (docs/PROTOCOL.md, "MCP servers").

The servers live in catalog.toml's [[mcp_servers]] like providers do: a write
changes the `mcp_server` table and rewrites the file in one step (catalog
editing()), then the running servers follow (McpRuntime.reload). Secret header
values go to the keyring only; the file and every answer carry their names.
"""
from __future__ import annotations

from flask import Blueprint

from backend.api.catalog import editing
from backend.api.validate import MISSING, Fields, json_body
from backend.catalog import mcp_file as rules
from backend.catalog.sync import mcp_server_dict
from backend.catalog.toml_file import ID_RE
from backend.errors import ApiError, not_found
from backend.runtime import runtime
from backend.store.models import McpServer
from backend.tools.mcp_config import McpError, SignInNotNeeded

bp = Blueprint("mcp", __name__)

FIELDS = ("transport", "command", "args", "env", "cwd", "url", "headers", "secret_headers", "secret_header_values",
          "enabled", "call_timeout")
READ_ONLY = ("status", "secret_headers_set")
ONLY_FOR = {**{name: "stdio" for name in rules.STDIO_ONLY},
            **{name: "http" for name in rules.HTTP_ONLY + ("secret_header_values",)}}
CLEARED = {"stdio": {"command": None, "args": [], "env": {}, "cwd": None},
           "http": {"url": None, "headers": {}, "secret_headers": []}}
SECRET_HINT = {
    "http": "Send a secret as a header instead: name it in secret_headers and give its value in "
            "secret_header_values (kept in the OS keyring).",
    "stdio": "Numi cannot keep a stdio server's settings in the keyring yet: let the server read the secret "
             "itself (a wrapper script, its own config), or use an http server with secret_headers.",
}


def _no_secret(field: str, what: str = "This") -> str:
    hint = SECRET_HINT[ONLY_FOR.get(field, "http")]
    return f"{what} looks like a secret, and {field} is written to catalog.toml. {hint}"


def _mcp():
    """The runtime's McpRuntime (one per server process)."""
    return runtime().mcp


@bp.record_once
def _follow_the_file(state) -> None:
    # A saved edit of catalog.toml changes the table from the watcher's thread: the servers follow it.
    numi = state.app.extensions["numi"]
    numi.catalog.on_mcp_change(lambda: numi.mcp.reload())


def _server(server_id: str) -> McpServer:
    row = McpServer.get_or_none(McpServer.id == server_id)
    if row is None:
        raise not_found("MCP server")
    return row


def _server_json(row: McpServer) -> dict:
    data = mcp_server_dict(row)
    keys = runtime().keys
    data["secret_headers_set"] = [n for n in data["secret_headers"] if keys.has(rules.secret_id(row.id, n))]
    data["status"] = _status(row.id)
    return data


def _status(server_id: str) -> dict:
    """Its process and its sign-in: {"state", "error", "auth", "account", "auth_error", "auth_storage"}."""
    status = {**_mcp().status(server_id), **_mcp().auth_status(server_id)}
    if status["auth"] == "needs_sign_in" and status["state"] == "crashed":
        # Its session ended only for want of a sign-in: `auth` (and `auth_error`) say so, and a
        # sign-in starts it again; "crashed" beside that would send the person to the wrong fix.
        status.update(state="stopped", error=None)
    return status


# -- checking a body ------------------------------------------------------------------------

def _strings(f: Fields, name: str):
    value = f.raw(name, False, False)
    if value is MISSING:
        return MISSING
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f.fail(name, 'Must be a list of strings, like ["--port", "8080"].')
    if len(value) > rules.MAX_ITEMS:
        return f.fail(name, f"List at most {rules.MAX_ITEMS} items.")
    if any(len(v) > rules.MAX_ARG for v in value):
        return f.fail(name, f"Each item must be at most {rules.MAX_ARG} characters.")
    if any(rules.looks_secret_value(v) for v in value):
        return f.fail(name, _no_secret(name, "An item"))
    return value


def _string_map(f: Fields, name: str, name_ok, name_rule: str, *, nullable_values=False, value_check=None):
    value = f.raw(name, False, False)
    if value is MISSING:
        return MISSING
    if not isinstance(value, dict):
        return f.fail(name, 'Must be an object of strings, like {"NAME": "value"}.')
    if len(value) > rules.MAX_ITEMS:
        return f.fail(name, f"At most {rules.MAX_ITEMS} entries.")
    for key, item in value.items():
        if not name_ok(key):
            return f.fail(name, f"{key!r} is not a valid name: {name_rule}.")
        if item is None and nullable_values:
            continue
        if not isinstance(item, str):
            return f.fail(name, f"The value of {key!r} must be a string.")
        if len(item) > rules.MAX_VALUE:
            return f.fail(name, f"The value of {key!r} must be at most {rules.MAX_VALUE} characters.")
        problem = value_check(key, item) if value_check else None
        if problem:
            return f.fail(name, problem)
    return value


def _file_value(field: str):
    """Checks an entry of a map written to catalog.toml: the parser refuses anything secret-looking."""
    def check(key: str, value: str) -> str | None:
        if field == "headers" and (problem := rules.header_value_problem(value)):
            return f"The value of {key!r}: {problem}."
        if rules.looks_secret_name(key):
            return _no_secret(field, f"The name {key!r}")
        if rules.looks_secret_value(value):
            return _no_secret(field, f"The value of {key!r}")
        return None
    return check


def _secret_value(key: str, value: str) -> str | None:
    if not value:
        return f"The value of {key!r} must not be empty (send null to remove it)."
    problem = rules.header_value_problem(value)
    return f"The value of {key!r}: {problem}." if problem else None


def _changes(body: dict, current: McpServer | None) -> tuple[dict, dict]:
    """(column changes, secret header values by name: a string to set, None to remove)."""
    creating = current is None
    f = Fields(body, ("id",) + FIELDS if creating else FIELDS, READ_ONLY + (() if creating else ("id",)))
    changes = {}
    if creating:
        server_id = f.text("id", max_len=128, required=True, non_empty=True, strip=True)
        if server_id is not MISSING and not ID_RE.match(server_id):
            f.fail("id", "Use letters, digits and . _ : @ - (starting with a letter or digit), at most 128.")
        elif server_id is not MISSING and McpServer.get_or_none(McpServer.id == server_id) is not None:
            f.fail("id", "An MCP server with this id already exists. Choose another id, or change that one.")
        changes["id"] = server_id
    transport = f.choice("transport", rules.TRANSPORTS, required=creating)
    changes["transport"] = transport
    if transport is MISSING:
        transport = getattr(current, "transport", None)
    for name, only in ONLY_FOR.items():
        if name in body and transport in rules.TRANSPORTS and only != transport:
            f.fail(name, f'Only for {only} servers; this one has transport "{transport}".')
    changes.update(
        command=f.text("command", max_len=rules.MAX_COMMAND, non_empty=True, strip=True),
        args=_strings(f, "args"),
        env=_string_map(f, "env", rules.ENV_NAME.match, "not empty, and no = sign", value_check=_file_value("env")),
        cwd=f.text("cwd", max_len=rules.MAX_PATH, nullable=True, strip=True),
        url=f.url("url"),
        headers=_string_map(f, "headers", rules.HEADER_NAME.match, "letters, digits and ! # $ % & ' * + - . ^ _ "
                            "` | ~", value_check=_file_value("headers")),
        secret_headers=_strings(f, "secret_headers"),
        enabled=f.boolean("enabled"),
        call_timeout=f.number("call_timeout", rules.MIN_CALL_TIMEOUT, rules.MAX_CALL_TIMEOUT),
    )
    values = _string_map(f, "secret_header_values", rules.HEADER_NAME.match, "an HTTP header name",
                         nullable_values=True, value_check=_secret_value)
    if changes["cwd"] == "":
        changes["cwd"] = None
    if changes["cwd"] not in (MISSING, None) and (problem := rules.cwd_problem(changes["cwd"])):
        f.fail("cwd", problem[0].upper() + problem[1:] + ".")
    for name in ("command", "cwd", "url"):
        if isinstance(changes[name], str) and rules.looks_secret_value(changes[name]):
            f.fail(name, _no_secret(name))
    changes = {k: v for k, v in changes.items() if v is not MISSING}
    if not creating and transport != current.transport:
        changes = {**CLEARED[current.transport], **changes}  # the old transport's settings go with it
    _check_result(f, changes, current, transport, values)
    f.check()
    return changes, (values if values is not MISSING else {})


def _check_result(f: Fields, changes: dict, current: McpServer | None, transport, values) -> None:
    """Rules about the server as it will be, not about one field."""
    def final(name):
        return changes.get(name, getattr(current, name, None) if current is not None else None)

    if transport == "stdio" and not final("command") and "command" not in f.errors:
        f.fail("command", "A stdio server needs the program to run, such as npx.")
    if transport == "http" and not final("url") and "url" not in f.errors:
        f.fail("url", "An http server needs its address, such as http://127.0.0.1:8000/mcp.")
    if transport != "http" or "secret_headers" in f.errors or "headers" in f.errors:
        return
    secret = final("secret_headers") or []
    plain = {h.lower() for h in final("headers") or {}}
    seen: set[str] = set()
    for name in secret:
        if not rules.HEADER_NAME.match(name):
            f.fail("secret_headers", f"{name!r} is not a valid HTTP header name.")
        elif name.lower() in seen or name.lower() in plain:
            f.fail("secret_headers", f"{name!r} is listed twice, or is also in headers (names are compared "
                                     "ignoring case).")
        seen.add(name.lower())
    if values is not MISSING and "secret_header_values" not in f.errors:
        unknown = [name for name in values if name.lower() not in seen]
        if unknown:
            f.fail("secret_header_values", f"{', '.join(map(repr, unknown))} is not in secret_headers; list a "
                                           "header there before giving its value.")


def _apply_secrets(server_id: str, values: dict, dropped=()) -> None:
    keys = runtime().keys
    for name in dropped:
        keys.delete(rules.secret_id(server_id, name))
    for name, value in values.items():
        if value is None:
            keys.delete(rules.secret_id(server_id, name))
        else:
            keys.set(rules.secret_id(server_id, name), value)


# -- routes -------------------------------------------------------------------------------

@bp.get("/api/mcp/servers")
def list_servers():
    return [_server_json(s) for s in McpServer.select().order_by(McpServer.created_at, McpServer.id)]


@bp.post("/api/mcp/servers")
def create_server():
    body = json_body()
    with editing():
        changes, values = _changes(body, None)
        row = McpServer.create(**changes)
    _apply_secrets(row.id, values)
    _mcp().reload()
    return _server_json(row), 201


@bp.get("/api/mcp/servers/<server_id>")
def get_server(server_id):
    return _server_json(_server(server_id))


@bp.patch("/api/mcp/servers/<server_id>")
def patch_server(server_id):
    body = json_body()
    with editing():
        row = _server(server_id)
        before = {name.lower() for name in row.secret_headers or []}
        changes, values = _changes(body, row)
        for name, value in changes.items():
            setattr(row, name, value)
        row.save()
    # A header no longer secret (or the server no longer http) takes its value out of the keyring too.
    dropped = before - {name.lower() for name in row.secret_headers or []}
    _apply_secrets(row.id, values, dropped)
    _mcp().reload()
    return _server_json(row)


@bp.delete("/api/mcp/servers/<server_id>")
def delete_server(server_id):
    with editing():
        row = _server(server_id)
        names = list(row.secret_headers or [])
        row.delete_instance()
    _apply_secrets(server_id, {}, names)
    _mcp().reload()  # it is no longer configured, so its process ends
    return "", 204


def _on_process(server_id: str, action):
    """`action(server_id)` on a configured server's process; a failure there is a 502 with its sentence."""
    _server(server_id)
    try:
        return action(server_id)
    except McpError as exc:
        raise ApiError(502, "mcp_unavailable", str(exc)) from None


@bp.get("/api/mcp/servers/<server_id>/tools")
def listed_tools(server_id):
    """What is known without starting anything: a GET never starts a process (CONTRACT §2)."""
    _server(server_id)
    return {"status": _status(server_id), "tools": _mcp().listed_tools(server_id)}


@bp.post("/api/mcp/servers/<server_id>/tools")
def list_tools(server_id):
    """Start the server if needed and list its tools now."""
    tools = _on_process(server_id, _mcp().list_tools)
    return {"status": _status(server_id), "tools": tools}


@bp.post("/api/mcp/servers/<server_id>/restart")
def restart(server_id):
    _on_process(server_id, _mcp().restart)
    return _status(server_id)


@bp.post("/api/mcp/servers/<server_id>/sign-in")
def sign_in(server_id):
    """Start a sign-in: the URL the app opens in the system browser; the browser comes back to Numi on loopback."""
    _server(server_id)
    try:
        return {"authorize_url": _mcp().sign_in(server_id)}
    except SignInNotNeeded as exc:
        raise ApiError(409, "sign_in_not_needed", str(exc)) from None
    except McpError as exc:
        raise ApiError(502, "sign_in_failed", str(exc)) from None


@bp.delete("/api/mcp/servers/<server_id>/sign-in")
def sign_out(server_id):
    """Sign out: the tokens leave the keyring and the server's session ends."""
    _server(server_id)
    _mcp().sign_out(server_id)
    return "", 204

