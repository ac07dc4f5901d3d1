"""An OAuth-protected MCP server for the sign-in tests, built on the SDK's own server-side auth.

It is its own authorization server (`MCPServer(auth_server_provider=…, auth=AuthSettings(…))`): protected
resource metadata, authorization server metadata, dynamic client registration, authorization code with
PKCE and `resource`, refresh. The authorize step approves at once (it redirects straight to the
redirect_uri with the code and state), so a test plays the browser with two GETs. It prints its port
once it listens, serves /mcp, and takes its knobs at run time over plain HTTP:

  POST /test/knobs  {"expires_in": int,         the lifetime it tells the client for a sign-in's tokens
                     "renewed_expires_in": int, … and for renewed ones (it honours an hour, whatever it says)
                     "metadata": "ok"|"missing"|"malformed",   its /.well-known documents
                     "errors": null|int,        /register and /token answer with this status
                     "hang_token": bool}        /token never answers (until this goes back to false)
  POST /test/revoke {"access": bool}            every refresh token (and access token) stops working
  GET  /test/stats                              {"grants": {grant: n}, "registrations": n, "tokens": [every
                                                 access and refresh token issued]}
Tools: `echo(text)`, `revoke()` (revokes every token, as an administrator would mid-session).
"""
from __future__ import annotations

import json
import secrets
import socket
import time
from collections import Counter

import anyio
from mcp.server.auth.provider import AccessToken, AuthorizationCode, RefreshToken, construct_redirect_uri
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthToken

ACCOUNT = "ada@example.test"
LIFETIME = 3600  # what the server honours, whatever it tells the client


class AccountToken(OAuthToken):
    account: str | None = None  # who signed in, as some servers say in the token response


class Knobs:
    def __init__(self):
        self.expires_in, self.renewed_expires_in = LIFETIME, LIFETIME
        self.metadata, self.errors, self.hang_token = "ok", None, False
        self.release = anyio.Event()


class Provider:
    """An in-memory authorization server that approves every authorization at once."""

    def __init__(self, knobs: Knobs):
        self.knobs = knobs
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}
        self.grants, self.registrations, self.issued = Counter(), 0, []

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info
        self.registrations += 1

    async def authorize(self, client, params):
        code = AuthorizationCode(code=secrets.token_urlsafe(24), scopes=params.scopes or [],
                                 expires_at=time.time() + 300, client_id=client.client_id,
                                 code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
                                 redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                                 resource=params.resource, subject=ACCOUNT)
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        self.grants["authorization_code"] += 1
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource,
                           self.knobs.expires_in)

    async def load_refresh_token(self, client, refresh_token):
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        self.grants["refresh_token"] += 1
        return self._issue(client.client_id, scopes, refresh_token.resource, self.knobs.renewed_expires_in)

    async def load_access_token(self, token):
        access = self.access.get(token)
        if access is None or (access.expires_at and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def revoke_all(self, access: bool = True) -> None:
        self.refresh.clear()
        if access:
            self.access.clear()

    def _issue(self, client_id: str, scopes: list[str], resource: str | None, expires_in: int) -> AccountToken:
        access, refresh = f"numi-test-at-{secrets.token_urlsafe(16)}", f"numi-test-rt-{secrets.token_urlsafe(16)}"
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + LIFETIME, resource=resource, subject=ACCOUNT)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource,
                                             subject=ACCOUNT)
        self.issued += [access, refresh]
        return AccountToken(access_token=access, refresh_token=refresh, expires_in=expires_in,
                            scope=" ".join(scopes) or None, account=ACCOUNT)


def build(port: int) -> tuple[object, Provider]:
    """The ASGI app (the MCP server behind the test knobs) and its provider."""
    knobs = Knobs()
    provider = Provider(knobs)
    base = f"http://127.0.0.1:{port}"
    server = MCPServer("numi-oauth-test", auth_server_provider=provider, auth=AuthSettings(
        issuer_url=base, resource_server_url=f"{base}/mcp", validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(enabled=True)))

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def revoke() -> str:
        """Revoke every token this server issued."""
        provider.revoke_all()
        return "revoked"

    inner = server.streamable_http_app()

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return await inner(scope, receive, send)
        path, method = scope["path"], scope["method"]
        if path.startswith("/test/"):
            body = await _body(receive)
            return await _control(knobs, provider, path, body, send)
        if "/.well-known/" in path and knobs.metadata == "missing":
            return await _answer(send, 404, b'{"error": "not_found"}')
        if "/.well-known/" in path and knobs.metadata == "malformed":
            return await _answer(send, 200, b'{"resource": "http://127.0.0.1", "authorization_servers": [')
        if method == "POST" and path in ("/register", "/token") and knobs.errors:
            return await _answer(send, knobs.errors, b'{"error": "server_error", "error_description": "down"}')
        if method == "POST" and path == "/token" and knobs.hang_token:
            await knobs.release.wait()
        return await inner(scope, receive, send)

    return app, provider


async def _control(knobs: Knobs, provider: Provider, path: str, body: bytes, send) -> None:
    data = json.loads(body or b"{}")
    if path == "/test/knobs":
        for name in ("expires_in", "renewed_expires_in", "metadata", "errors", "hang_token"):
            if name in data:
                setattr(knobs, name, data[name])
        if not knobs.hang_token:
            knobs.release.set()
            knobs.release = anyio.Event()
    elif path == "/test/revoke":
        provider.revoke_all(access=data.get("access", True))
    stats = {"grants": dict(provider.grants), "registrations": provider.registrations, "tokens": provider.issued}
    await _answer(send, 200, json.dumps(stats).encode())


async def _body(receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _answer(send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def serve(announce=lambda port: print(port, flush=True)) -> None:
    """Listen on a free port, announce it (print it), then serve: the port is ready before anyone reads it."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    app, _ = build(port)
    announce(port)
    await uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).serve(sockets=[sock])


def run_forked(port_out) -> None:
    """Serve in a process forked by a multiprocessing forkserver; the port goes back through `port_out`."""
    def announce(port: int) -> None:
        port_out.send(port)
        port_out.close()

    anyio.run(serve, announce)


if __name__ == "__main__":
    anyio.run(serve)
