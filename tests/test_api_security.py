"""CONTRACT §2 against the real server: token, cookie, Host, Origin, body types, CSP."""
from __future__ import annotations

import http.client
import json
import re

import pytest

# One route of each kind and method; ids need not exist: auth runs before lookup.
GUARDED = [
    ("GET", "/api/providers"), ("POST", "/api/providers"), ("PATCH", "/api/providers/p_x"),
    ("DELETE", "/api/providers/p_x"), ("PUT", "/api/providers/p_x/key"), ("DELETE", "/api/providers/p_x/key"),
    ("POST", "/api/providers/p_x/discover"),
    ("GET", "/api/models"), ("POST", "/api/models"), ("PATCH", "/api/models/m_x"), ("DELETE", "/api/models/m_x"),
    ("GET", "/api/settings"), ("PATCH", "/api/settings"),
    ("GET", "/api/chats"), ("POST", "/api/chats"), ("GET", "/api/chats/c_x"), ("PATCH", "/api/chats/c_x"),
    ("DELETE", "/api/chats/c_x"), ("POST", "/api/chats/c_x/restore"), ("GET", "/api/chats/c_x/messages"),
]
WS_HEADERS = {
    "Upgrade": "websocket", "Connection": "Upgrade",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13",
}


def raw(server, method, path, headers=None, body: bytes | None = None, host: str | None = None):
    """One request with exactly the given headers (plus Host); returns (status, headers, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    hdrs = {"Host": host or f"127.0.0.1:{server.port}", **(headers or {})}
    conn.request(method, path, body=body, headers=hdrs)
    resp = conn.getresponse()
    # A 101 leaves the socket upgraded: read nothing more from it.
    data = b"" if resp.status == 101 else resp.read()
    result = resp.status, resp.headers, data
    conn.close()
    return result


def bearer(server):
    return {"Authorization": f"Bearer {server.token}"}


def json_headers(server, **extra):
    return {**bearer(server), "Content-Type": "application/json", **extra}


def error_code(data: bytes) -> str:
    return json.loads(data)["error"]["code"]


# -- token ----------------------------------------------------------------------

def test_health_needs_no_token(server):
    status, _, data = raw(server, "GET", "/api/health")
    assert status == 200 and json.loads(data)["ok"] is True


@pytest.mark.parametrize("auth", [None, "Bearer wrong-token", "Basic abc", "Bearer "])
def test_every_route_kind_needs_the_token(server, auth):
    headers = {"Authorization": auth} if auth else {}
    for method, path in GUARDED:
        body = b"{}" if method in ("POST", "PATCH", "PUT") else None
        hdrs = {**headers, "Content-Type": "application/json"} if body else headers
        status, _, data = raw(server, method, path, hdrs, body)
        assert status == 401, (method, path, status)
        err = json.loads(data)["error"]
        assert err["code"] == "unauthorized" and err["message"].endswith(".")
    status, _, _ = raw(server, "GET", "/ws/c_x", {**headers, **WS_HEADERS})
    assert status == 401


def test_wrong_cookie_is_refused(server):
    status, _, _ = raw(server, "GET", "/api/chats", {"Cookie": "numi_session=nope"})
    assert status == 401


def test_cookie_sign_in(server):
    status, headers, _ = raw(server, "GET", f"/?token={server.token}")
    assert status in (302, 303, 307)
    assert headers["Location"].endswith("/") and "token" not in headers["Location"]
    cookie = headers["Set-Cookie"]
    parts = [p.strip().lower() for p in cookie.split(";")]
    name, value = cookie.split(";", 1)[0].split("=", 1)
    assert name == "numi_session" and len(value) >= 32
    assert "httponly" in parts and "samesite=strict" in parts and "path=/" in parts
    status, _, data = raw(server, "GET", "/api/chats", {"Cookie": f"numi_session={value}"})
    assert status == 200 and json.loads(data)["items"] == []


def test_the_cookie_does_not_carry_the_token_and_neither_stands_in_for_the_other(server):
    # A cookie for 127.0.0.1 reaches every port there: what it carries must not be the token.
    value = server.session_cookie().split("=", 1)[1]
    assert value != server.token and server.token not in value
    # The session secret is no Bearer token: not for data, nor for minting sign-in addresses.
    as_bearer = {"Authorization": f"Bearer {value}"}
    assert raw(server, "GET", "/api/chats", as_bearer)[0] == 401
    assert raw(server, "POST", "/api/sign-in-links", as_bearer)[0] == 401
    assert raw(server, "GET", "/ws/c_x", {**as_bearer, **WS_HEADERS})[0] == 401
    # Nor is the token a cookie.
    assert raw(server, "GET", "/api/chats", {"Cookie": f"numi_session={server.token}"})[0] == 401
    # Control: each in its own place is accepted.
    assert raw(server, "GET", "/api/chats", bearer(server))[0] == 200
    assert raw(server, "GET", "/api/chats", {"Cookie": f"numi_session={value}"})[0] == 200


def test_every_sign_in_gives_the_same_session_and_a_restart_a_new_one(tmp_path):
    from tests.numi_client import ServerProcess

    server = ServerProcess(tmp_path / "data").start()
    try:
        first = server.session_cookie()
        assert server.session_cookie() == first
        server.terminate()
        server.start()
        assert server.session_cookie() != first
        assert raw(server, "GET", "/api/chats", {"Cookie": first})[0] == 401
    finally:
        server.stop()


def test_sign_in_with_wrong_token_is_401_without_cookie(server):
    status, headers, data = raw(server, "GET", "/?token=wrong")
    assert status == 401
    assert "Set-Cookie" not in headers
    assert server.token.encode() not in data


# -- Host -------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1", "localhost",
                                  "127.0.0.1:1", "0.0.0.0:{port}", "[::1]:{port}"])
def test_foreign_host_is_403_even_with_token(server, host):
    host = host.format(port=server.port)
    for method, path in (("GET", "/api/chats"), ("GET", "/api/health"), ("GET", "/")):
        status, _, data = raw(server, method, path, bearer(server), host=host)
        assert status == 403, (host, path)
        assert error_code(data) == "forbidden_host"
    status, _, _ = raw(server, "GET", "/ws/c_x", {**bearer(server), **WS_HEADERS}, host=host)
    assert status == 403


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}"])
def test_allowed_hosts(server, host):
    status, _, _ = raw(server, "GET", "/api/chats", bearer(server), host=host.format(port=server.port))
    assert status == 200


# -- Origin -----------------------------------------------------------------------

FOREIGN_ORIGINS = ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}",
                   "http://localhost", "http://127.0.0.1:{port}.evil.example"]


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
def test_foreign_origin_is_403_on_writes(server, origin, api):
    origin = origin.format(port=server.port)
    chat = api.post("/api/chats", {"title": "kept"}).body
    attempts = [
        ("POST", "/api/chats", b'{"title": "new"}'),
        ("PATCH", f"/api/chats/{chat['id']}", b'{"title": "changed"}'),
        ("DELETE", f"/api/chats/{chat['id']}", None),
        ("PUT", "/api/providers/p_x/key", b'{"api_key": "k"}'),
    ]
    for method, path, body in attempts:
        status, _, data = raw(server, method, path, json_headers(server, Origin=origin), body)
        assert status == 403, (method, origin)
        assert error_code(data) == "forbidden_origin"
    items = api.get("/api/chats").body["items"]
    assert [(c["id"], c["title"]) for c in items] == [(chat["id"], "kept")]


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
def test_foreign_origin_websocket_upgrade_is_http_403(server, origin, api):
    chat = api.post("/api/chats", {}).body
    origin = origin.format(port=server.port)
    status, _, data = raw(server, "GET", f"/ws/{chat['id']}", {**bearer(server), **WS_HEADERS, "Origin": origin})
    assert status == 403
    assert error_code(data) == "forbidden_origin"


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_allowed_origins_pass(server, api, origin):
    origin = origin.format(port=server.port)
    status, _, _ = raw(server, "POST", "/api/chats", json_headers(server, Origin=origin), b"{}")
    assert status == 201
    chat_id = api.get("/api/chats").body["items"][0]["id"]
    status, _, _ = raw(server, "GET", f"/ws/{chat_id}", {**bearer(server), **WS_HEADERS, "Origin": origin})
    assert status not in (401, 403)


def test_get_with_foreign_origin_is_allowed(server):
    # The contract refuses foreign origins on writes and upgrades; a GET cannot change anything.
    status, _, _ = raw(server, "GET", "/api/chats", {**bearer(server), "Origin": "http://evil.example"})
    assert status == 200


# -- Sec-Fetch-Site ---------------------------------------------------------------

def cookie(server) -> dict:
    return {"Cookie": server.session_cookie()}


@pytest.mark.parametrize("site", ["same-site", "cross-site", "Cross-Site"])
def test_cookie_from_another_page_is_403_everywhere(server, api, site):
    """Cookies ignore ports: a page on another 127.0.0.1 port is same-site and its requests carry the cookie."""
    chat = api.post("/api/chats", {"title": "kept"}).body
    headers = {**cookie(server), "Sec-Fetch-Site": site}
    attempts = [("GET", "/api/chats", None), ("GET", f"/api/chats/{chat['id']}/messages", None),
                ("POST", "/api/chats", b'{"title": "new"}'), ("PATCH", f"/api/chats/{chat['id']}", b'{"title": "x"}'),
                ("DELETE", f"/api/chats/{chat['id']}", None)]
    for method, path, body in attempts:
        hdrs = {**headers, "Content-Type": "application/json"} if body else headers
        status, _, data = raw(server, method, path, hdrs, body)
        assert status == 403, (method, path, status)
        err = json.loads(data)["error"]
        assert err["code"] == "forbidden_site" and err["message"].endswith("."), err
    for path in (f"/ws/{chat['id']}", "/ws/_app"):
        status, _, data = raw(server, "GET", path, {**headers, **WS_HEADERS})
        assert status == 403 and error_code(data) == "forbidden_site", path  # never a 101
    assert [(c["id"], c["title"]) for c in api.get("/api/chats").body["items"]] == [(chat["id"], "kept")]


@pytest.mark.parametrize("site", ["same-origin", "none", None])
def test_cookie_from_the_page_itself_or_outside_is_allowed(server, api, site):
    headers = {**cookie(server), **({"Sec-Fetch-Site": site} if site else {})}
    status, _, data = raw(server, "GET", "/api/chats", headers)
    assert status == 200, data
    status, _, _ = raw(server, "POST", "/api/chats", {**headers, "Content-Type": "application/json"}, b"{}")
    assert status == 201
    chat_id = api.get("/api/chats").body["items"][0]["id"]
    status, _, _ = raw(server, "GET", f"/ws/{chat_id}", {**headers, **WS_HEADERS})
    assert status == 101


@pytest.mark.parametrize("site", ["same-site", "cross-site"])
def test_bearer_token_is_not_held_to_the_site(server, site):
    status, _, _ = raw(server, "GET", "/api/chats", {**bearer(server), "Sec-Fetch-Site": site})
    assert status == 200
    status, _, _ = raw(server, "POST", "/api/chats", json_headers(server, **{"Sec-Fetch-Site": site}), b"{}")
    assert status == 201
    # Even beside the cookie: the request proves it holds the token itself.
    status, _, _ = raw(server, "GET", "/api/chats", {**bearer(server), **cookie(server), "Sec-Fetch-Site": site})
    assert status == 200


def test_sign_in_and_the_page_need_no_site_check(server):
    """A link from outside (the desktop shell, the browser opening the printed URL) signs in; the page holds
    no data. The wrong token is still a 401 without a cookie, whatever the site."""
    headers = {"Sec-Fetch-Site": "cross-site"}
    status, hdrs, _ = raw(server, "GET", f"/?token={server.token}", headers)
    assert status == 303 and hdrs["Set-Cookie"].startswith("numi_session=")
    status, hdrs, _ = raw(server, "GET", "/?token=wrong", headers)
    assert status == 401 and "Set-Cookie" not in hdrs
    assert raw(server, "GET", "/", {**headers, **cookie(server)})[0] == 200
    assert raw(server, "GET", "/api/health", {**headers, **cookie(server)})[0] == 200


# -- body types -------------------------------------------------------------------

@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", None])
def test_non_json_body_is_415_and_changes_nothing(server, api, ctype):
    chat = api.post("/api/chats", {"title": "before"}).body
    provider = api.post("/api/providers", {"kind": "openai", "name": "OpenAI"}).body
    headers = bearer(server) | ({"Content-Type": ctype} if ctype else {})
    body = b'{"title": "after", "api_key": "sk-415"}'
    for method, path in (("POST", "/api/chats"), ("PATCH", f"/api/chats/{chat['id']}"),
                         ("PUT", f"/api/providers/{provider['id']}/key"), ("PATCH", "/api/settings")):
        status, _, data = raw(server, method, path, headers, body)
        assert status == 415, (method, path)
        assert error_code(data) == "unsupported_media_type"
    assert [c["title"] for c in api.get("/api/chats").body["items"]] == ["before"]
    assert api.get("/api/providers").body[0]["has_key"] is False


def test_json_body_with_charset_is_accepted(server):
    headers = {**bearer(server), "Content-Type": "application/json; charset=utf-8"}
    status, _, _ = raw(server, "POST", "/api/chats", headers, b'{"title": "ok"}')
    assert status == 201


def test_multipart_on_a_json_route_is_415(server, api):
    headers = {**bearer(server), "Content-Type": "multipart/form-data; boundary=x"}
    body = b'--x\r\nContent-Disposition: form-data; name="title"\r\n\r\nhi\r\n--x--\r\n'
    status, _, _ = raw(server, "POST", "/api/chats", headers, body)
    assert status == 415
    assert api.get("/api/chats").body["items"] == []


# -- CSP --------------------------------------------------------------------------

def _csp(headers) -> dict[str, list[str]]:
    policy = headers["Content-Security-Policy"]
    return {d.split()[0]: d.split()[1:] for d in (p.strip() for p in policy.split(";")) if d}


@pytest.mark.parametrize("path", ["/", "/?token=wrong"])
def test_html_carries_a_strict_csp(server, path):
    status, headers, _ = raw(server, "GET", path)
    assert status in (200, 401)
    assert headers["Content-Type"].startswith("text/html")
    csp = _csp(headers)
    for directive in ("default-src", "script-src", "connect-src"):
        assert csp[directive] == ["'self'"], directive
    assert set(csp["img-src"]) <= {"'self'", "data:", "blob:"}
    assert csp["object-src"] == ["'none'"]
    assert csp["frame-ancestors"] == ["'none'"]
    assert csp["base-uri"] == ["'none'"]
    # The one framed origin: the preview listener's, another loopback port (CONTRACT §2 and §9).
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", " ".join(csp.pop("frame-src")))
    assert not any("unsafe-eval" in v or "http" in v for values in csp.values() for v in values)
