"""/api/mcp/servers against the real server, with the real MCP test server (tests/mcp_test_server.py) as a
stdio server: CRUD, catalog.toml both ways, secret header values in the keyring only, on-demand start,
restart and stop. Every MCP server process the tests cause is gone when they end."""
from __future__ import annotations

import json
import os
import signal
import sys
import tomllib
from pathlib import Path

import pytest

from tests.mcp_processes import mcp_server_children
from tests.test_catalog_file import catalog_path, save_in_place, save_like_editor, status, wait_until

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
SECRET = "Bearer " + "mcp-api-test-4d9e2b7a1c"
# A server that never asked for a sign-in, on a machine without a keyring (CONTRACT §15).
NO_AUTH = {"auth": None, "account": None, "auth_error": None, "auth_storage": "memory"}
KEYLIKE = "sk-" + "mcp-api-test-0123456789abcdef"  # built, so no scanner mistakes it for a real key
STOP_DEADLINE_S = 20.0  # a server process ends within the SDK's stop escalation (~6 s)


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def numi(start_server):
    """A Numi server that is shut down gracefully at the end; its MCP servers must end with it."""
    server = start_server()
    yield server
    children = mcp_server_children(server.proc.pid)
    if server.proc.poll() is None:
        server.terminate()
    wait_until(lambda: not any(alive(pid) for pid in children), STOP_DEADLINE_S, "MCP servers ended")


def stdio_body(server_id="t", **kw) -> dict:
    return {"id": server_id, "transport": "stdio", "command": sys.executable, "args": [SERVER], **kw}


def listed(api) -> dict:
    r = api.get("/api/mcp/servers")
    assert r.status == 200, r
    return {s["id"]: s for s in r.body}


def file_servers(numi) -> list[dict]:
    return tomllib.loads(catalog_path(numi).read_text()).get("mcp_servers", [])


# -- create, list, start on demand, the file -----------------------------------------------

def test_created_server_is_listed_stopped_then_started_by_its_tools(numi):
    api = numi.api()
    r = api.post("/api/mcp/servers", stdio_body())
    assert r.status == 201, r
    expected = {"id": "t", "transport": "stdio", "command": sys.executable, "args": [SERVER], "env": {},
                "cwd": None, "url": None, "headers": {}, "secret_headers": [], "secret_headers_set": [],
                "enabled": True, "call_timeout": 60, "status": {"state": "stopped", "error": None, **NO_AUTH}}
    assert r.body == expected
    assert api.get("/api/mcp/servers").body == [expected]
    assert api.get("/api/mcp/servers/t").body == expected
    assert mcp_server_children(numi.proc.pid) == set()  # listing never starts a server
    r = api.get("/api/mcp/servers/t/tools")
    assert r.status == 200 and r.body == {"status": {"state": "stopped", "error": None, **NO_AUTH}, "tools": None}, r
    assert mcp_server_children(numi.proc.pid) == set()  # nor does reading its tools

    r = api.post("/api/mcp/servers/t/tools")
    assert r.status == 200, r
    assert r.body["status"] == {"state": "running", "error": None, **NO_AUTH}
    tools = {t["mcp_name"]: t for t in r.body["tools"]}
    assert {"echo", "add", "crash", "pid"} <= set(tools)
    assert tools["echo"] == {"name": "mcp__t__echo", "mcp_name": "echo", "description": "Echo the text back.",
                             "input_schema": tools["echo"]["input_schema"],
                             "fingerprint": tools["echo"]["fingerprint"]}
    assert tools["echo"]["input_schema"]["properties"]["text"]["type"] == "string"
    assert len(tools["echo"]["fingerprint"]) == 64
    assert listed(api)["t"]["status"] == {"state": "running", "error": None, **NO_AUTH}
    assert len(mcp_server_children(numi.proc.pid)) == 1
    assert api.get("/api/mcp/servers/t/tools").body == r.body  # as listed, without asking the server again

    assert file_servers(numi) == [{"id": "t", "transport": "stdio", "command": sys.executable, "args": [SERVER],
                                   "env": {}, "enabled": True, "call_timeout": 60}]
    r = api.patch("/api/mcp/servers/t", {"env": {"LOG_LEVEL": "debug"}, "call_timeout": 5, "enabled": False})
    assert r.status == 200 and r.body["env"] == {"LOG_LEVEL": "debug"} and r.body["call_timeout"] == 5, r
    assert file_servers(numi) == [{"id": "t", "transport": "stdio", "command": sys.executable, "args": [SERVER],
                                   "env": {"LOG_LEVEL": "debug"}, "enabled": False, "call_timeout": 5}]
    # Turned off: its process has ended by the time the answer comes, and it is not started again.
    assert mcp_server_children(numi.proc.pid) == set()
    r = api.post("/api/mcp/servers/t/tools")
    assert r.status == 502 and r.body["error"]["code"] == "mcp_unavailable", r
    assert r.body["error"]["message"] == "The MCP server 't' is turned off. Turn it on in Settings → MCP servers."


def test_a_server_that_cannot_start_is_a_502_with_the_reason(numi):
    api = numi.api()
    assert api.post("/api/mcp/servers", stdio_body("gone", command="/nonexistent/numi-mcp", args=[])).status == 201
    r = api.post("/api/mcp/servers/gone/tools")
    sentence = ("The MCP server 'gone' could not start: the command '/nonexistent/numi-mcp' was not found. "
                "Check it in Settings → MCP servers.")
    assert r.status == 502 and r.body == {"error": {"code": "mcp_unavailable", "message": sentence}}, r
    assert listed(api)["gone"]["status"] == {"state": "crashed", "error": sentence, **NO_AUTH}


# -- restart and delete --------------------------------------------------------------------

def test_restart_brings_a_crashed_server_back(numi):
    api = numi.api()
    api.post("/api/mcp/servers", stdio_body())
    assert api.post("/api/mcp/servers/t/tools").status == 200
    [first] = mcp_server_children(numi.proc.pid)
    os.kill(first, signal.SIGKILL)  # what the `crash` tool does to itself, from outside
    crashed = wait_until(lambda: listed(api)["t"]["status"]["state"] == "crashed" and listed(api)["t"]["status"],
                         STOP_DEADLINE_S, "crash noticed")
    assert crashed["error"].startswith("The MCP server 't' stopped.")
    assert crashed["error"].endswith("Restart it in Settings → MCP servers.")
    # Reading its tools starts nothing: the crash stays, beside the tools it last listed.
    r = api.get("/api/mcp/servers/t/tools")
    assert r.status == 200 and r.body["status"] == crashed and "echo" in {t["mcp_name"] for t in r.body["tools"]}, r
    assert mcp_server_children(numi.proc.pid) == set()
    r = api.post("/api/mcp/servers/t/tools")
    assert r.status == 502 and r.body["error"]["message"] == crashed["error"]

    r = api.post("/api/mcp/servers/t/restart")
    assert r.status == 200 and r.body == {"state": "running", "error": None, **NO_AUTH}, r
    [second] = mcp_server_children(numi.proc.pid)
    assert second != first
    # A new process has listed nothing yet.
    assert api.get("/api/mcp/servers/t/tools").body == {"status": {"state": "running", "error": None, **NO_AUTH}, "tools": None}
    assert api.post("/api/mcp/servers/t/tools").status == 200
    assert api.post("/api/mcp/servers/t/restart").body == {"state": "running", "error": None, **NO_AUTH}
    third = mcp_server_children(numi.proc.pid)
    assert len(third) == 1 and third != {second}  # a running server is replaced too


def test_delete_stops_the_server_and_forgets_it(numi):
    api = numi.api()
    api.post("/api/mcp/servers", stdio_body())
    api.post("/api/mcp/servers", stdio_body("u"))
    assert api.post("/api/mcp/servers/t/tools").status == 200
    [pid] = mcp_server_children(numi.proc.pid)
    assert api.delete("/api/mcp/servers/t").status == 204
    assert not alive(pid)  # stopped before the answer
    assert list(listed(api)) == ["u"]
    assert [s["id"] for s in file_servers(numi)] == ["u"]
    for method, path in (("GET", "/api/mcp/servers/t"), ("PATCH", "/api/mcp/servers/t"),
                         ("DELETE", "/api/mcp/servers/t"), ("GET", "/api/mcp/servers/t/tools"),
                         ("POST", "/api/mcp/servers/t/tools"), ("POST", "/api/mcp/servers/t/restart")):
        r = api.request(method, path, {} if method == "PATCH" else None)
        assert r.status == 404 and r.body["error"]["code"] == "not_found", (method, path, r)


# -- validation ------------------------------------------------------------------------------

HTTP = {"id": "web", "transport": "http", "url": "http://127.0.0.1:9/mcp"}
BAD_BODIES = {
    "missing command": (stdio_body(command=None), "command", "cannot be null"),
    "no command at all": ({"id": "t", "transport": "stdio"}, "command", "needs the program to run"),
    "bad url": ({**HTTP, "url": "ftp://example.com/mcp"}, "url", "Must be an http:// or https:// URL"),
    "no url": ({"id": "web", "transport": "http"}, "url", "needs its address"),
    "bad transport": (stdio_body(transport="sse"), "transport", "Must be one of: stdio, http."),
    "no transport": ({"id": "t", "command": "x"}, "transport", "This field is required."),
    "timeout too small": (stdio_body(call_timeout=0), "call_timeout", "Must be a number from 1 to 600."),
    "timeout too large": (stdio_body(call_timeout=601), "call_timeout", "Must be a number from 1 to 600."),
    "unknown field": (stdio_body(timeout=5), "timeout", "Unknown field."),
    "read-only field": (stdio_body(status={"state": "running"}), "status", "read-only"),
    "bad id": (stdio_body("has spaces"), "id", "Use letters, digits"),
    "no id": ({"transport": "stdio", "command": "x"}, "id", "This field is required."),
    "url on stdio": (stdio_body(url="http://x/mcp"), "url", 'Only for http servers; this one has transport "stdio".'),
    "args on http": ({**HTTP, "args": ["x"]}, "args", "Only for stdio servers"),
    "args not strings": (stdio_body(args=[1]), "args", "Must be a list of strings"),
    "relative cwd": (stdio_body(cwd="src"), "cwd", "must be an absolute path"),
    "secret env name": (stdio_body(env={"GITHUB_TOKEN": "x"}), "env", "looks like a secret"),
    "key-like arg": (stdio_body(args=[f"--key={KEYLIKE}"]), "args", "looks like a secret"),
    "secret header in headers": ({**HTTP, "headers": {"Authorization": "Bearer x"}}, "headers",
                                 "Send a secret as a header instead: name it in secret_headers"),
    "bad header name": ({**HTTP, "headers": {"X Team": "blue"}}, "headers", "is not a valid name"),
    "header twice": ({**HTTP, "headers": {"X-Team": "a"}, "secret_headers": ["x-team"]}, "secret_headers",
                     "listed twice"),
    "value without its header": ({**HTTP, "secret_header_values": {"Authorization": "x"}},
                                 "secret_header_values", "is not in secret_headers"),
    "empty secret value": ({**HTTP, "secret_headers": ["Authorization"], "secret_header_values":
                            {"Authorization": ""}}, "secret_header_values", "must not be empty"),
}


def test_bad_bodies_are_422_with_a_sentence_per_field(numi):
    api = numi.api()
    for case, (body, field, says) in BAD_BODIES.items():
        r = api.post("/api/mcp/servers", body)
        assert r.status == 422 and r.body["error"]["code"] == "invalid", (case, r)
        assert says in r.body["error"]["fields"].get(field, ""), (case, r.body)
    assert listed(api) == {} and file_servers(numi) == []
    assert api.post("/api/mcp/servers", stdio_body()).status == 201
    r = api.post("/api/mcp/servers", stdio_body())
    assert r.status == 422 and "already exists" in r.body["error"]["fields"]["id"], r
    r = api.patch("/api/mcp/servers/t", {"id": "other", "call_timeout": 0, "url": "http://x/mcp"})
    assert r.status == 422 and set(r.body["error"]["fields"]) == {"id", "call_timeout", "url"}, r
    r = api.patch("/api/mcp/servers/t", {"transport": "http"})
    assert r.status == 422 and "needs its address" in r.body["error"]["fields"]["url"], r
    # Switching transport takes the old one's settings away with it.
    r = api.patch("/api/mcp/servers/t", {"transport": "http", "url": "http://127.0.0.1:9/mcp"})
    assert r.status == 200 and (r.body["command"], r.body["args"], r.body["url"]) == \
        (None, [], "http://127.0.0.1:9/mcp"), r
    assert file_servers(numi) == [{"id": "t", "transport": "http", "url": "http://127.0.0.1:9/mcp",
                                   "enabled": True, "call_timeout": 60}]


# -- secret header values --------------------------------------------------------------------

def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_secret_header_values_go_to_the_keyring_only(numi):
    """The fail keyring (conftest): values live in memory for this run, as provider keys do."""
    api, answers = numi.api(), []

    def call(method, path, body=None):
        r = api.request(method, path, body)
        answers.append(json.dumps(r.body) if not isinstance(r.body, bytes) else r.body.decode())
        return r

    r = call("POST", "/api/mcp/servers", {**HTTP, "headers": {"X-Team": "blue"}, "secret_headers": ["Authorization"],
                                          "secret_header_values": {"Authorization": SECRET}})
    assert r.status == 201, r
    assert (r.body["secret_headers"], r.body["secret_headers_set"]) == (["Authorization"], ["Authorization"])
    assert r.body["status"] == {"state": "stopped", "error": None, **NO_AUTH}
    assert file_servers(numi) == [{"id": "web", "transport": "http", "url": "http://127.0.0.1:9/mcp",
                                   "headers": {"X-Team": "blue"}, "secret_headers": ["Authorization"],
                                   "enabled": True, "call_timeout": 60}]
    call("GET", "/api/mcp/servers")
    call("POST", "/api/mcp/servers/web/tools")  # nothing listens there: a 502 that must not echo the header

    r = call("PATCH", "/api/mcp/servers/web", {"secret_header_values": {"Authorization": None}})
    assert r.body["secret_headers_set"] == [] and r.body["status"]["state"] == "unavailable", r
    assert r.body["status"]["error"].startswith("The MCP server 'web' cannot start: Numi has no value for its "
                                                "secret header 'Authorization'. No system keyring")
    r = call("PATCH", "/api/mcp/servers/web", {"secret_header_values": {"authorization": SECRET + "-2"}})
    assert r.body["secret_headers_set"] == ["Authorization"] and r.body["status"]["state"] == "stopped", r
    # A header that stops being secret loses its value; listing it again does not bring the value back.
    call("PATCH", "/api/mcp/servers/web", {"secret_headers": []})
    r = call("PATCH", "/api/mcp/servers/web", {"secret_headers": ["Authorization"]})
    assert r.body["secret_headers_set"] == [], r
    call("PATCH", "/api/mcp/servers/web", {"secret_header_values": {"Authorization": SECRET + "-3"}})
    assert call("DELETE", "/api/mcp/servers/web").status == 204
    r = call("POST", "/api/mcp/servers", {**HTTP, "secret_headers": ["Authorization"]})
    assert r.body["secret_headers_set"] == [], r  # DELETE took the value out of the keyring

    assert not any(SECRET in a for a in answers)
    numi.terminate()
    assert _files_containing(numi.data_dir, b"mcp-api-test-4d9e2b7a1c") == []


def test_real_secret_service(secret_service, start_server, tmp_path):
    data, user = tmp_path / "data", "provider:mcp:web:authorization"  # KeyStore's "provider:" + the secret's id
    body = {"id": "web", "transport": "http", "url": "http://127.0.0.1:9/mcp", "secret_headers": ["Authorization"],
            "secret_header_values": {"Authorization": SECRET}}
    s = start_server(secret_service.server_env(), data_dir=data)
    api = s.api()
    assert api.get("/api/settings").body["keyring"] == {"available": True, "reason": None, "cause": None,
                                                        "fix": None}
    assert api.post("/api/mcp/servers", body).body["secret_headers_set"] == ["Authorization"]
    assert secret_service.password("numi", user) == SECRET
    s.terminate()
    api = start_server(secret_service.server_env(), data_dir=data).api()
    [server] = api.get("/api/mcp/servers").body
    assert server["secret_headers_set"] == ["Authorization"]
    assert (server["status"]["state"], server["status"]["error"]) == ("stopped", None)
    api.delete("/api/mcp/servers/web")
    assert secret_service.password("numi", user) is None
    assert _files_containing(data, b"mcp-api-test-4d9e2b7a1c") == []


# -- hand edits of catalog.toml ----------------------------------------------------------------

def server_table(server_id: str, *extra: str) -> str:
    return "\n".join(["[[mcp_servers]]", f'id = "{server_id}"', 'transport = "stdio"',
                      f"command = {json.dumps(sys.executable)}", f"args = [{json.dumps(SERVER)}]", *extra, ""])


def test_hand_edits_add_and_remove_servers(numi):
    api, path = numi.api(), catalog_path(numi)
    head = path.read_text()
    save_like_editor(path, head + "\n# mine\n" + server_table("t"))
    wait_until(lambda: "t" in listed(api), what="server t added")
    assert api.post("/api/mcp/servers/t/tools").status == 200
    [pid_t] = mcp_server_children(numi.proc.pid)

    save_in_place(path, head + "\n# mine\n" + server_table("t") + "\n" + server_table("u", "call_timeout = 5"))
    added = wait_until(lambda: listed(api).get("u"), what="server u added")
    assert added["call_timeout"] == 5 and added["status"] == {"state": "stopped", "error": None, **NO_AUTH}
    assert mcp_server_children(numi.proc.pid) == {pid_t}  # an unchanged server keeps running

    save_like_editor(path, head + "\n" + server_table("u", "call_timeout = 5"))
    wait_until(lambda: "t" not in listed(api), what="server t removed")
    wait_until(lambda: not alive(pid_t), STOP_DEADLINE_S, "server t stopped")
    assert status(api)["reloads"] == 3 and status(api)["error"] is None
    # An API write after hand edits keeps them (comments too) and adds its own table.
    assert api.post("/api/mcp/servers", stdio_body("v")).status == 201
    assert [s["id"] for s in file_servers(numi)] == ["u", "v"]
    assert path.read_text().startswith(head)


BAD_EDITS = [
    (server_table("t", "", "# why not", "timeout = 5"), 10, "unknown key `timeout`"),
    ('[[mcp_servers]]\nid = "t"\ntransport = "stdio"\n', 3, "`command` is missing"),
    ('[[mcp_servers]]\nid = "t"\ntransport = "http"\nurl = "localhost:8000"\n', 6, "must be an http:// or https://"),
    ('[[mcp_servers]]\nid = "t"\ntransport = "websocket"\n', 5, '`transport` = "websocket" is not known'),
    (server_table("t", "call_timeout = 900"), 8, "`call_timeout` must be a number from 1 to 600"),
    ('[[mcp_servers]]\nid = "t"\ntransport = "http"\nurl = "http://x/mcp"\nheaders = { X-Api-Key = "abc" }\n', 7,
     "`X-Api-Key` looks like an API key"),
]


def test_bad_hand_edits_are_reported_with_their_line_and_change_nothing(numi):
    api, path = numi.api(), catalog_path(numi)
    head = "version = 1\n\n"
    save_like_editor(path, head + server_table("good"))
    wait_until(lambda: "good" in listed(api), what="good server added")
    for text, line, says in BAD_EDITS:
        save_like_editor(path, head + text)
        error = wait_until(lambda: (e := status(api)["error"]) and e["line"] == line and says in e["message"] and e,
                           what=f"error {says!r} reported")
        assert error["message"].startswith(f"catalog.toml line {line}: "), error
        assert list(listed(api)) == ["good"]  # the last good catalog stays in use
        r = api.post("/api/mcp/servers", stdio_body("other"))
        assert r.status == 409 and r.body["error"]["code"] == "catalog_invalid", r
    save_like_editor(path, head + server_table("good", "enabled = false"))
    wait_until(lambda: status(api)["error"] is None and listed(api)["good"]["enabled"] is False, what="fix applied")
