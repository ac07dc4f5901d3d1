"""[[mcp_servers]] in catalog.toml (parsing, errors with their line, writing back) and McpRuntime against
the real MCP test server (tests/mcp_test_server.py), in this process with a database of its own."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from keyring.backends import fail

from backend.catalog import sync
from backend.catalog.render import HEADER, render
from backend.catalog.toml_file import CatalogData, CatalogError, parse
from backend.core.cancel import CancelToken
from backend.keys import KeyStore
from backend.store.db import db, open_database
from backend.tools.mcp_client import McpError
from backend.turns.mcp_runtime import McpRuntime

SERVER = str(Path(__file__).with_name("mcp_test_server.py"))
HINT = "Restart it in Settings → MCP servers."
KEYLIKE = "sk-" + "mcp-test-0123456789abcdef"  # built, so no scanner mistakes it for a real key

GOOD = """\
version = 1

# tools on this machine
[[mcp_servers]]
id = "files"          # shown in tool names
transport = "stdio"
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
env = { LOG_LEVEL = "info" }
cwd = "/tmp"

[[mcp_servers]]
id = "web"
transport = "http"
url = "https://mcp.example.com/mcp"
headers = { X-Team = "blue" }
secret_headers = ["Authorization"]
enabled = false
call_timeout = 30
"""

FILES = {"id": "files", "transport": "stdio", "command": "npx",
         "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"LOG_LEVEL": "info"},
         "cwd": "/tmp", "url": None, "headers": {}, "secret_headers": [], "enabled": True, "call_timeout": 60.0}
WEB = {"id": "web", "transport": "http", "command": None, "args": [], "env": {}, "cwd": None,
       "url": "https://mcp.example.com/mcp", "headers": {"X-Team": "blue"}, "secret_headers": ["Authorization"],
       "enabled": False, "call_timeout": 30.0}
from tests.mcp_processes import mcp_server_children
from tests.test_keys import DictKeyring

# -- the file format ----------------------------------------------------------------------

def test_mcp_servers_are_parsed_with_their_defaults():
    assert parse(GOOD).mcp_servers == [FILES, WEB]
    minimal = parse('[[mcp_servers]]\nid = "m"\ntransport = "stdio"\ncommand = "srv"\n').mcp_servers
    assert minimal == [{**FILES, "id": "m", "command": "srv", "args": [], "env": {}, "cwd": None}]


def table(*lines: str) -> str:
    return "version = 1\n\n[[mcp_servers]]\n" + "\n".join(lines) + "\n"


BAD_FILES = {
    "missing command": (table('id = "a"', 'transport = "stdio"'), 3, "`command` is missing"),
    "bad url": (table('id = "a"', 'transport = "http"', 'url = "ftp://example.com"'), 6,
                "must be an http:// or https:// URL"),
    "missing url": (table('id = "a"', 'transport = "http"'), 3, "`url` is missing"),
    "bad transport": (table('id = "a"', 'transport = "sse"', 'url = "http://x"'), 5,
                      '`transport` = "sse" is not known; use one of: stdio, http'),
    "no transport": (table('id = "a"', 'command = "x"'), 3, "`transport` is missing"),
    "unknown key": (table('id = "a"', 'transport = "stdio"', 'command = "x"', "", "# a comment", "timeout = 5"), 9,
                    "unknown key `timeout`. Allowed: id, transport, command"),
    "timeout too small": (table('id = "a"', 'transport = "stdio"', 'command = "x"', "call_timeout = 0.5"), 7,
                          "`call_timeout` must be a number from 1 to 600"),
    "timeout too large": (table('id = "a"', 'transport = "stdio"', 'command = "x"', "call_timeout = 601"), 7,
                          "`call_timeout` must be a number from 1 to 600"),
    "url on stdio": (table('id = "a"', 'transport = "stdio"', 'command = "x"', 'url = "http://x"'), 7,
                     "`url` is only for http servers"),
    "env on http": (table('id = "a"', 'transport = "http"', 'url = "http://x"', 'env = { A = "1" }'), 7,
                    "`env` is only for stdio servers"),
    "args not strings": (table('id = "a"', 'transport = "stdio"', 'command = "x"', "args = [1, 2]"), 7,
                         "`args` must be a list of strings"),
    "env not strings": (table('id = "a"', 'transport = "stdio"', 'command = "x"', "env = { A = 1 }"), 7,
                        "`env` must be a table of strings"),
    "relative cwd": (table('id = "a"', 'transport = "stdio"', 'command = "x"', 'cwd = "src"'), 7,
                     "must be an absolute path"),
    "bad id": (table('id = "no spaces"', 'transport = "stdio"', 'command = "x"'), 4, "may only use letters"),
    "duplicate id": (table('id = "a"', 'transport = "stdio"', 'command = "x"', "", "[[mcp_servers]]", 'id = "a"',
                           'transport = "stdio"', 'command = "y"'), 9, 'the MCP server id "a" is used twice'),
    "header secret twice": (table('id = "a"', 'transport = "http"', 'url = "http://x"',
                                  'headers = { X-Team = "blue" }', 'secret_headers = ["x-team"]'), 8,
                            'listed twice (or is also in `headers`)'),
    "secret in headers": (table('id = "a"', 'transport = "http"', 'url = "http://x"',
                                'headers = { Authorization = "Bearer abc" }'), 7,
                          "`Authorization` looks like an API key. Secrets never go in catalog.toml: list the "
                          "HTTP header's name in `secret_headers`"),
    "secret env name": (table('id = "a"', 'transport = "stdio"', 'command = "x"', "", "[mcp_servers.env]",
                              'GITHUB_TOKEN = "abc"'), 9, "`GITHUB_TOKEN` looks like an API key"),
    "key-like arg": (table('id = "a"', 'transport = "stdio"', 'command = "x"', f'args = ["--key={KEYLIKE}"]'), 7,
                     "the value of `args` looks like an API key"),
    "reserved provider id": ('[[providers]]\nid = "mcp:web"\nkind = "openai"\nname = "x"\n', 2,
                             "provider ids starting with `mcp:` are reserved"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_mcp_tables_are_refused_with_their_line(case):
    text, line, says = BAD_FILES[case]
    with pytest.raises(CatalogError) as err:
        parse(text)
    assert err.value.line == line, err.value.message
    assert says in err.value.message and err.value.message.startswith(f"catalog.toml line {line}: "), \
        err.value.message


def test_writing_back_keeps_comments_and_touches_only_what_changed():
    data = parse(GOOD)
    assert render(GOOD, data) == GOOD  # nothing changed: not one byte
    data.mcp_servers[1] = {**WEB, "call_timeout": 45.0, "headers": {}, "enabled": True}
    data.mcp_servers.append({**FILES, "id": "more", "args": [], "env": {}, "cwd": None})
    text = render(GOOD, data)
    assert "# tools on this machine" in text and 'id = "files"          # shown in tool names' in text
    assert "call_timeout = 45\n" in text and "X-Team" not in text and "enabled = false" not in text
    assert parse(text).mcp_servers == data.mcp_servers
    del data.mcp_servers[0]
    text = render(text, data)
    assert 'id = "files"' not in text and "# tools on this machine" in text
    assert parse(text).mcp_servers == data.mcp_servers


def test_a_fresh_file_documents_mcp_servers_and_holds_the_new_ones():
    text = render(None, CatalogData([], [], [FILES]))
    assert text.startswith(HEADER) and "# [[mcp_servers]]" in text and "# secret_headers = " in text
    assert parse(text).mcp_servers == [FILES]
    assert parse(HEADER).mcp_servers == []  # the example is all comments


# -- McpRuntime -----------------------------------------------------------------------------

def stdio(server_id="t", **kw) -> dict:
    return {**FILES, "id": server_id, "command": sys.executable, "args": [SERVER], "env": {}, "cwd": None, **kw}


def http(server_id, url, **kw) -> dict:
    return {**WEB, "id": server_id, "url": url, "headers": {}, "secret_headers": [], "enabled": True, **kw}


@pytest.fixture
def catalog(tmp_path):
    """The catalog tables in a fresh database; `catalog(*servers)` makes the table hold exactly those."""
    open_database(str(tmp_path / "numi.db"))

    def put(*servers: dict) -> None:
        with db.connection_context():
            sync.apply(CatalogData([], [], list(servers)))

    yield put
    if not db.is_closed():
        db.close()


@pytest.fixture
def make_runtime():
    """Runtimes for one test; closing them must leave no server process behind."""
    made = []
    before = mcp_server_children(os.getpid(), stdio_only=True)

    def make(keys=None) -> McpRuntime:
        runtime = McpRuntime(keys or KeyStore(fail.Keyring()))
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()
    assert mcp_server_children(os.getpid(), stdio_only=True) - before == set()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def call(tools, tool_name: str, **arguments) -> str:
    [tool] = [t for t in tools if t.name == tool_name]
    return tool.run(arguments, CancelToken())


def test_tools_of_enabled_servers_start_on_demand(catalog, make_runtime):
    catalog(stdio("t"), stdio("off", enabled=False))
    mcp = make_runtime()
    mcp.reload()
    assert mcp.status("t") == {"state": "stopped", "error": None}
    assert mcp.status("off") == {"state": "stopped", "error": None}
    tools = mcp.tools()
    names = [t.name for t in tools]
    assert "mcp__t__echo" in names and not any(n.startswith("mcp__off__") for n in names)
    assert mcp.status("t") == {"state": "running", "error": None}
    assert call(tools, "mcp__t__add", a=2, b=3) == "5"
    listed = mcp.list_tools("t")
    assert [t["name"] for t in listed] == names  # the API shows the names a turn uses
    echo = next(t for t in listed if t["mcp_name"] == "echo")
    assert echo["description"] == "Echo the text back." and len(echo["fingerprint"]) == 64
    assert echo["input_schema"]["properties"]["text"]["type"] == "string"
    with pytest.raises(McpError, match="turned off"):
        mcp.list_tools("off")


def test_a_server_that_cannot_start_is_left_out_and_says_why(catalog, make_runtime):
    catalog(stdio("t"), stdio("broken", command="/nonexistent/numi-mcp"))
    mcp = make_runtime()
    mcp.reload()
    assert {t.name.split("__")[1] for t in mcp.tools()} == {"t"}
    status = mcp.status("broken")
    assert status["state"] == "crashed"
    assert status["error"] == ("The MCP server 'broken' could not start: the command '/nonexistent/numi-mcp' "
                               "was not found. Check it in Settings → MCP servers.")


def test_restart_after_the_crash_tool(catalog, make_runtime):
    catalog(stdio("t"))
    mcp = make_runtime()
    mcp.reload()
    tools = mcp.tools()
    first = int(call(tools, "mcp__t__pid"))
    with pytest.raises(McpError, match="crashing on purpose"):
        call(tools, "mcp__t__crash")
    assert mcp.status("t")["state"] == "crashed"
    assert mcp.tools() == []  # a crashed server stays out of turns until it is restarted
    assert mcp.restart("t") == {"state": "running", "error": None}
    assert not alive(first)
    assert int(call(mcp.tools(), "mcp__t__pid")) != first


def test_reload_follows_the_table(catalog, make_runtime):
    catalog(stdio("t"), stdio("u"))
    mcp = make_runtime()
    mcp.reload()
    tools = mcp.tools()
    pid_t, pid_u = int(call(tools, "mcp__t__pid")), int(call(tools, "mcp__u__pid"))
    catalog(stdio("t"), stdio("u", call_timeout=5.0))  # t unchanged, u changed
    mcp.reload()
    assert not alive(pid_u) and mcp.status("u")["state"] == "stopped"
    assert int(call(mcp.tools(), "mcp__t__pid")) == pid_t  # still the same process
    catalog(stdio("u", call_timeout=5.0))
    mcp.reload()
    assert not alive(pid_t) and mcp.status("t") == {"state": "stopped", "error": None}
    assert mcp.tools()[0].name.startswith("mcp__u__")
    mcp.close()
    mcp.close()
    assert mcp.tools() == []  # shut down: nothing to offer, and no error for the turn


@pytest.fixture
def http_server():
    """The test server on Streamable HTTP; it prints its port once it is listening."""
    proc = subprocess.Popen([sys.executable, SERVER, "--http"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}/mcp"
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_secret_headers_come_from_the_keyring(catalog, make_runtime, http_server):
    backend = DictKeyring()
    keys = KeyStore(backend)
    catalog(http("web", http_server, headers={"X-Team": "blue"}, secret_headers=["Authorization"]))
    mcp = make_runtime(keys)
    mcp.reload()
    status = mcp.status("web")
    assert status["state"] == "unavailable"
    assert status["error"] == ("The MCP server 'web' cannot start: Numi has no value for its secret header "
                               "'Authorization'. Set it in Settings → MCP servers.")
    assert mcp.tools() == []
    with pytest.raises(McpError, match="no value for its secret header 'Authorization'"):
        mcp.list_tools("web")

    keys.set("mcp:web:authorization", "Bearer from-the-keyring")
    assert backend.secrets == {("numi", "provider:mcp:web:authorization"): "Bearer from-the-keyring"}
    assert mcp.restart("web") == {"state": "running", "error": None}  # restart reads the keyring again
    tools = mcp.tools()
    assert call(tools, "mcp__web__header", name="Authorization") == "Bearer from-the-keyring"
    assert call(tools, "mcp__web__header", name="X-Team") == "blue"


def test_without_a_keyring_the_missing_secret_says_why(catalog, make_runtime):
    catalog(http("web", "http://127.0.0.1:9/mcp", secret_headers=["Authorization"]))
    store = KeyStore(fail.Keyring())
    mcp = make_runtime(store)
    mcp.reload()
    # The keyring's reason says what is missing and how to get it (its fix is per platform).
    reason = store.status_json()["reason"]
    assert reason.startswith("No system keyring (Secret Service) was found; keys are kept in memory until Numi quits. ")
    assert mcp.status("web")["error"] == (
        "The MCP server 'web' cannot start: Numi has no value for its secret header 'Authorization'. "
        f"{reason} Set it in Settings → MCP servers.")


def test_a_disabled_server_needs_no_secret(catalog, make_runtime):
    catalog(http("web", "http://127.0.0.1:9/mcp", secret_headers=["Authorization"], enabled=False))
    mcp = make_runtime(KeyStore(fail.Keyring()))
    mcp.reload()
    assert mcp.status("web") == {"state": "stopped", "error": None}
    assert mcp.restart("web") == {"state": "stopped", "error": None}

