"""MCP servers that need an OAuth sign-in, over the real Numi server and a real OAuth-protected MCP server
(tests/mcp_oauth_server.py, the SDK's own server-side auth): the sign-in with the test as the browser, a tool
call in a turn, silent renewal, a revoked sign-in, sign-out, a forged callback, servers that misbehave, and no
token anywhere but the keyring."""
from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tests.chat_samples import export_zip
from tests.conftest import Setup
from tests.fakeprovider import script as S
from tests.test_catalog_file import wait_until

HERE = Path(__file__).parent
PLAIN_SERVER = str(HERE / "mcp_test_server.py")
ECHO, REVOKE = "mcp__o__echo", "mcp__o__revoke"
ACCOUNT = "ada@example.test"
DONE = "You can close this tab and return to Numi."


# The OAuth server imports the MCP SDK and its web stack, about 1.5 s of CPU: a multiprocessing
# forkserver that has imported them once forks each one instead (one forkserver per test process).
FORKS = multiprocessing.get_context("forkserver")
FORKS.set_forkserver_preload(["tests.mcp_oauth_server"])


class OAuthServer:
    """tests/mcp_oauth_server.py as a process of its own (forked from FORKS), with its knobs."""

    def __init__(self):
        from tests.mcp_oauth_server import run_forked

        port_in, port_out = FORKS.Pipe(duplex=False)
        self.proc = FORKS.Process(target=run_forked, args=(port_out,), daemon=True)
        self.proc.start()
        port_out.close()
        with port_in:
            self.base = f"http://127.0.0.1:{port_in.recv()}"
        self.url = f"{self.base}/mcp"

    def knobs(self, **values) -> dict:
        return httpx2.post(f"{self.base}/test/knobs", json=values, timeout=10).json()

    def stats(self) -> dict:
        return self.knobs()

    def close(self) -> None:
        self.proc.kill()
        self.proc.join(10)
        self.proc.close()


@pytest.fixture
def oauth():
    server = OAuthServer()
    yield server
    server.close()


@pytest.fixture
def signed(setup_with, oauth):
    """`signed(env)`: a Numi server with a tool-capable model and the OAuth server configured as 'o'."""
    made = []

    def make(env: dict | None = None):
        setup = setup_with(env)
        assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
        r = setup.api.post("/api/mcp/servers", {"id": "o", "transport": "http", "url": oauth.url, "call_timeout": 20})
        assert r.status == 201, r
        setup.oauth = oauth
        made.append(setup)
        return setup

    yield make
    for setup in made:
        if setup.server.proc.poll() is None:
            setup.api.request("DELETE", "/api/mcp/servers/o")


def status(setup, server: str = "o") -> dict:
    r = setup.api.get(f"/api/mcp/servers/{server}")
    assert r.status == 200, r
    return r.body["status"]


def listening(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (from /proc), so a test sees a listener close."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink().as_posix()
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def callback_port(authorize_url: str) -> int:
    redirect = parse_qs(urlsplit(authorize_url).query)["redirect_uri"][0]
    return urlsplit(redirect).port


def browse(authorize_url: str) -> httpx2.Response:
    """What the system browser does: open the authorization page, follow its redirect back to Numi."""
    approved = httpx2.get(authorize_url, timeout=10)
    assert approved.status_code == 302, approved.text
    return httpx2.get(approved.headers["location"], timeout=30)


def sign_in(setup) -> str:
    r = setup.api.post("/api/mcp/servers/o/sign-in")
    assert r.status == 200, r
    url = r.body["authorize_url"]
    page = browse(url)
    assert page.status_code == 200 and DONE in page.text, page.text
    assert status(setup)["auth"] == "signed_in"
    return url


def run_turn(setup, chat: str, *calls: tuple[str, dict]) -> tuple[list[dict], dict]:
    """One turn in which the model calls `calls` in order, each approved; (tool_end events, turn_end)."""
    steps = [[S.tool_call(0, f"c{n}", name, json.dumps(args))] for n, (name, args) in enumerate(calls)]
    setup.fake.enqueue(*steps, [S.text("done")])
    sock = setup.socket(chat)
    try:
        sock.send(type="send", request_id=f"r{time.monotonic_ns()}", content="use the tools")
        while True:
            try:
                event = sock.recv(30)
            except TimeoutError:
                raise AssertionError(f"the turn did not end: {[e['type'] for e in sock.events]}") from None
            if event["type"] == "approval_required":
                sock.send(type="approve", approval_id=event["approval_id"], decision="allow")
            elif event["type"] == "turn_end":
                return sock.of("tool_end"), event
    finally:
        sock.close()


def files_containing(root: Path, needles: list[str]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.name}: {n[:16]}…" for n in needles if n.encode() in data]
    return found


# -- the sign-in and what it gives -------------------------------------------------------------

def test_sign_in_then_a_tool_call_in_a_turn(signed):
    setup = signed()
    pid, before = setup.server.proc.pid, listening(setup.server.proc.pid)
    assert status(setup) == {"state": "stopped", "error": None, "auth": None, "account": None, "auth_error": None,
                             "auth_storage": "memory"}
    r = setup.api.post("/api/mcp/servers/o/tools")
    assert r.status == 502 and "needs a sign-in" in r.body["error"]["message"], r
    assert status(setup)["auth"] == "needs_sign_in"

    r = setup.api.post("/api/mcp/servers/o/sign-in")
    assert r.status == 200, r
    url = r.body["authorize_url"]
    query = parse_qs(urlsplit(url).query)
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [setup.oauth.url]
    assert urlsplit(query["redirect_uri"][0]).hostname == "127.0.0.1"
    assert callback_port(url) in listening(pid)
    page = browse(url)
    assert page.status_code == 200 and DONE in page.text
    assert listening(pid) == before  # the listener closed after its one callback
    assert status(setup) == {"state": "stopped", "error": None, "auth": "signed_in", "account": ACCOUNT,
                             "auth_error": None, "auth_storage": "memory"}

    chat = setup.chat(title="t")
    ends, end = run_turn(setup, chat, (ECHO, {"text": "hello"}))
    assert [(e["ok"], e["output"]) for e in ends] == [(True, "hello")] and end["status"] == "completed"
    offered = {t["function"]["name"] for t in setup.fake.requests[0].body["tools"]}
    assert {ECHO, REVOKE} <= offered


def test_a_call_while_signed_out_says_to_sign_in_and_the_turn_goes_on(signed):
    setup = signed()
    chat = setup.chat(title="t")
    # Never signed in: the turn meets the 401, leaves the server out, and the model (which knew
    # its tools from an earlier chat) calls one anyway.
    ends, end = run_turn(setup, chat, (ECHO, {"text": "hello"}))
    assert end["status"] == "completed" and not ends[0]["ok"], ends
    assert "needs a sign-in" in ends[0]["output"] and "Settings → MCP servers" in ends[0]["output"], ends[0]
    assert ECHO not in {t["function"]["name"] for t in setup.fake.requests[0].body.get("tools", [])}
    assert status(setup)["auth"] == "needs_sign_in"
    # A server the chat switched off says nothing of sign-ins: its tools are simply not there.
    assert setup.api.patch(f"/api/chats/{chat}", {"tools_off": ["mcp__o__*"]}).status == 200
    ends, _ = run_turn(setup, chat, (ECHO, {"text": "again"}))
    assert "no tool named" in ends[0]["output"], ends[0]


def test_expired_tokens_are_renewed_without_asking(signed):
    setup = signed()
    # The sign-in's tokens are expired as soon as issued (the server itself honours an hour); a renewed
    # one says 1 s, so the second call, a little later, renews again.
    setup.oauth.knobs(expires_in=0, renewed_expires_in=1)
    sign_in(setup)
    chat = setup.chat(title="t")
    ends, end = run_turn(setup, chat, (ECHO, {"text": "one"}))
    assert [(e["ok"], e["output"]) for e in ends] == [(True, "one")] and end["status"] == "completed"
    grants = setup.oauth.stats()["grants"]
    assert grants["authorization_code"] == 1 and grants["refresh_token"] >= 1, grants
    renewed = time.time()
    wait_until(lambda: time.time() > renewed + 1.5, 5, "the renewed token's second passed")
    ends, end = run_turn(setup, chat, (ECHO, {"text": "two"}))
    assert [(e["ok"], e["output"]) for e in ends] == [(True, "two")]
    again = setup.oauth.stats()["grants"]
    assert again["authorization_code"] == 1 and again["refresh_token"] > grants["refresh_token"], again
    assert status(setup)["auth"] == "signed_in" and status(setup)["auth_error"] is None


def test_a_revoked_sign_in_asks_to_sign_in_again_and_the_turn_goes_on(signed):
    setup = signed()
    sign_in(setup)
    chat = setup.chat(title="t")
    ends, end = run_turn(setup, chat, (REVOKE, {}), (ECHO, {"text": "after"}))
    assert ends[0]["ok"] and not ends[1]["ok"]
    assert "could not be renewed" in ends[1]["output"] and "Sign in again in Settings → MCP servers" in \
        ends[1]["output"], ends[1]
    assert end["status"] == "completed" and setup.fake.requests[-1].body["messages"][-1]["role"] == "tool"
    now = status(setup)
    assert now["auth"] == "needs_sign_in" and now["account"] is None and "Sign in again" in now["auth_error"]
    # Signing in again brings it back.
    sign_in(setup)
    assert setup.api.post("/api/mcp/servers/o/tools").status == 200


def test_sign_out_forgets_the_tokens_and_ends_a_sign_in_in_progress(signed):
    setup = signed()
    pid, before = setup.server.proc.pid, listening(setup.server.proc.pid)
    sign_in(setup)
    assert setup.api.post("/api/mcp/servers/o/tools").status == 200
    assert setup.api.delete("/api/mcp/servers/o/sign-in").status == 204
    assert status(setup)["auth"] == "needs_sign_in" and status(setup)["account"] is None
    r = setup.api.post("/api/mcp/servers/o/tools")
    assert r.status == 502 and "needs a sign-in" in r.body["error"]["message"], r

    url = setup.api.post("/api/mcp/servers/o/sign-in").body["authorize_url"]
    assert callback_port(url) in listening(pid)
    assert setup.api.delete("/api/mcp/servers/o/sign-in").status == 204
    assert listening(pid) == before
    with pytest.raises(httpx2.ConnectError):
        browse(url)
    assert setup.oauth.stats()["grants"] == {"authorization_code": 1}


def test_a_server_without_a_sign_in_is_a_409(setup):
    plain = subprocess.Popen([sys.executable, PLAIN_SERVER, "--http"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
    try:
        url = f"http://127.0.0.1:{int(plain.stdout.readline())}/mcp"  # printed once it listens
        r = setup.api.post("/api/mcp/servers", {"id": "p", "transport": "http", "url": url})
        assert r.status == 201, r
        r = setup.api.post("/api/mcp/servers/p/sign-in")
        assert r.status == 409 and "does not ask for a sign-in" in r.body["error"]["message"], r
        assert status(setup, "p")["auth"] is None
    finally:
        plain.kill()
        plain.wait(10)
        plain.stdout.close()
    r = setup.api.post("/api/mcp/servers", {"id": "s", "transport": "stdio", "command": sys.executable,
                                            "args": [PLAIN_SERVER]})
    assert r.status == 201
    r = setup.api.post("/api/mcp/servers/s/sign-in")
    assert r.status == 409 and "has no sign-in" in r.body["error"]["message"], r


# -- bad input: each a sentence, nothing stored, nothing left listening ------------------------

def test_a_forged_callback_completes_nothing(signed):
    setup = signed()
    pid, before = setup.server.proc.pid, listening(setup.server.proc.pid)
    for forged in ("code=stolen&state=forged", "code=stolen"):
        url = setup.api.post("/api/mcp/servers/o/sign-in").body["authorize_url"]
        page = httpx2.get(f"http://127.0.0.1:{callback_port(url)}/callback?{forged}", timeout=10)
        assert page.status_code == 400 and "state did not match" in page.text and DONE not in page.text
        assert listening(pid) == before
        now = status(setup)
        assert now["auth"] != "signed_in" and "state did not match" in now["auth_error"], now
        with pytest.raises(httpx2.ConnectError):  # the real redirect finds nobody listening
            browse(url)
    assert setup.oauth.stats()["grants"] == {}
    assert setup.api.post("/api/mcp/servers/o/tools").status == 502


@pytest.mark.parametrize("knobs, words", [
    ({"metadata": "missing"}, "publishes no sign-in details"),
    ({"metadata": "malformed"}, "are not valid OAuth metadata"),
    ({"errors": 500}, "answered HTTP 500"),
    ({"errors": 400}, "Registration failed"),
], ids=["metadata-missing", "metadata-malformed", "server-error", "registration-refused"])
def test_a_server_that_cannot_sign_in_is_a_502_with_a_sentence(signed, knobs, words):
    setup = signed()
    pid, before = setup.server.proc.pid, listening(setup.server.proc.pid)
    setup.oauth.knobs(**knobs)
    r = setup.api.post("/api/mcp/servers/o/sign-in")
    assert r.status == 502 and r.body["error"]["code"] == "sign_in_failed", r
    message = r.body["error"]["message"]
    assert message.startswith("Numi could not sign in to the MCP server 'o': ") and words in message, message
    assert listening(pid) == before
    assert status(setup)["auth"] != "signed_in" and setup.oauth.stats()["grants"] == {}


def test_a_sign_in_never_completed_times_out_and_closes(signed):
    setup = signed({"NUMI_MCP_SIGN_IN_TIMEOUT": "1"})
    pid, before = setup.server.proc.pid, listening(setup.server.proc.pid)
    url = setup.api.post("/api/mcp/servers/o/sign-in").body["authorize_url"]
    error = wait_until(lambda: status(setup)["auth_error"], 15, "the sign-in timed out")
    assert "was not completed within 1 s" in error and "Sign in again" in error, error
    assert listening(pid) == before
    with pytest.raises(httpx2.ConnectError):
        browse(url)
    assert status(setup)["auth"] == "needs_sign_in"


def test_a_hanging_token_endpoint_is_a_sentence(signed):
    setup = signed({"NUMI_MCP_AUTH_TIMEOUT": "1"})
    pid, before = setup.server.proc.pid, listening(setup.server.proc.pid)
    url = setup.api.post("/api/mcp/servers/o/sign-in").body["authorize_url"]
    setup.oauth.knobs(hang_token=True)
    try:
        page = browse(url)
    finally:
        setup.oauth.knobs(hang_token=False)
    assert page.status_code == 400 and "did not answer within 1 s" in page.text, page.text
    now = status(setup)
    assert now["auth"] == "needs_sign_in" and "did not answer within 1 s" in now["auth_error"], now
    assert listening(pid) == before
    assert setup.api.post("/api/mcp/servers/o/tools").status == 502  # nothing was stored


# -- where the tokens are (and are not) ---------------------------------------------------------

def test_no_token_reaches_the_database_the_catalog_the_logs_or_an_export(signed):
    setup = signed()
    setup.oauth.knobs(expires_in=0)  # a renewal too: every token the server issues is looked for
    sign_in(setup)
    chat = setup.chat(title="t")
    run_turn(setup, chat, (ECHO, {"text": "hello"}))
    tokens = setup.oauth.stats()["tokens"]
    assert len(tokens) >= 4
    answers = [json.dumps(setup.api.get("/api/mcp/servers").body),
               json.dumps(setup.api.get(f"/api/chats/{chat}/export?format=json").body)]
    archive = export_zip(setup.api)
    answers += [archive.read(name).decode("utf-8", "replace") for name in archive.namelist()]
    assert not [t for t in tokens if any(t in a for a in answers)]
    setup.server.terminate()
    assert files_containing(setup.server.data_dir, tokens) == []


def test_real_secret_service_keeps_the_sign_in_across_a_restart(secret_service, start_server, fake, oauth, tmp_path):
    data = tmp_path / "data"
    oauth.knobs(expires_in=0)  # so the first use after the restart renews, with what the keyring kept
    s = start_server(secret_service.server_env(), data_dir=data)
    setup = Setup(s, fake)
    assert setup.api.post("/api/mcp/servers", {"id": "o", "transport": "http", "url": oauth.url}).status == 201
    sign_in(setup)
    assert status(setup)["auth_storage"] == "keyring"
    assert json.loads(secret_service.password("numi", "mcp-oauth:o"))["account"] == ACCOUNT
    s.terminate()

    before = oauth.stats()["grants"]
    setup = Setup(start_server(secret_service.server_env(), data_dir=data), fake)
    assert status(setup) == {"state": "stopped", "error": None, "auth": "signed_in", "account": ACCOUNT,
                             "auth_error": None, "auth_storage": "keyring"}
    r = setup.api.post("/api/mcp/servers/o/tools")
    assert r.status == 200 and [t["mcp_name"] for t in r.body["tools"]] == ["echo", "revoke"], r
    after = oauth.stats()["grants"]
    assert after["authorization_code"] == before["authorization_code"] == 1  # no new sign-in
    assert after["refresh_token"] > before.get("refresh_token", 0)
    # The server leaves the table: its sign-in leaves the keyring.
    assert setup.api.delete("/api/mcp/servers/o").status == 204
    assert secret_service.password("numi", "mcp-oauth:o") is None
    setup.server.terminate()
    assert files_containing(data, oauth.stats()["tokens"]) == []
