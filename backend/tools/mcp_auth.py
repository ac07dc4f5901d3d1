"""OAuth for MCP servers over HTTP: the SDK's OAuthClientProvider, kept in the keyring and never left to sign in alone.

Each HTTP server gets one `ServerAuth` for its connection's life, holding one
provider. The provider restores what the SDK does not (a token's expiry and
the authorization server's metadata), so an expired token is renewed before
the request goes out. A connection never starts an interactive sign-in: a 401
on the MCP request itself raises `NeedsSignIn` with the sentence the person
and the model read. Every request the OAuth flow makes of its own (metadata,
registration, tokens) is sent here with a bounded wait, so a hanging
authorization server becomes a sentence, never a stuck turn. The interactive
sign-in (backend/tools/mcp_sign_in.py) uses a second provider of this class.
docs/MCP-SIGN-IN.md tells the whole story.
"""
from __future__ import annotations

import base64
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.shared._httpx_utils import next_request_within_origin
from mcp.shared.auth import (
    OAuthClientMetadata,
    OAuthMetadata,
    ProtectedResourceMetadata,
)
from pydantic import ValidationError

from backend.tools.mcp_config import McpAuthError, NeedsSignIn
from backend.tools.mcp_tokens import TokenVault, VaultStorage

log = logging.getLogger("numi.mcp")

AGAIN = "Sign in again in Settings → MCP servers."
REDIRECT_LIMIT = 5
# Fields of a token response that may name who signed in; the first string found is shown.
ACCOUNT_FIELDS = ("account", "email", "preferred_username", "username", "login", "user_name", "workspace_name")


def auth_timeout() -> float:
    """Seconds Numi waits for one answer from an authorization server (NUMI_MCP_AUTH_TIMEOUT, default 30)."""
    return float(os.environ.get("NUMI_MCP_AUTH_TIMEOUT", "30"))


# -- the provider ------------------------------------------------------------------------------

def client_metadata(redirect_uri: str | None) -> OAuthClientMetadata:
    """What Numi registers as: a public client (PKCE, no secret) that renews its tokens."""
    return OAuthClientMetadata(client_name="Numi", redirect_uris=[redirect_uri] if redirect_uri else None,
                               grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                               token_endpoint_auth_method="none")


class NumiOAuthProvider(OAuthClientProvider):
    """OAuthClientProvider that restores expiry and metadata, bounds its waits, and signs in only when told."""

    def __init__(self, server: str, server_url: str, storage, *, interactive: bool = False,
                 redirect_uri: str | None = None, redirect_handler=None, callback_handler=None, on_event=None):
        super().__init__(server_url, client_metadata(redirect_uri), storage,
                         redirect_handler=redirect_handler, callback_handler=callback_handler)
        self.server, self.storage, self.interactive = server, storage, interactive
        # (kind, sentence): "needs_sign_in", "expired" (renewal refused), "renewed" (None), "failed".
        self.on_event = on_event or (lambda kind, sentence: None)
        self.account: str | None = None  # who the token response names, when it does
        self._renewal_refused: str | None = None

    def reload(self) -> None:
        """Read the keyring again before the next request (after a sign-in or a sign-out)."""
        self.context.clear_tokens()
        self.context.client_info = None
        self._initialized = False

    async def _initialize(self) -> None:
        record = await self.storage.record()
        ctx = self.context
        ctx.current_tokens = record.tokens if record else None
        ctx.token_expiry_time = record.expires_at if record else None
        ctx.client_info = record.client_info if record else None
        if record is not None and record.oauth_metadata is not None:
            ctx.oauth_metadata = record.oauth_metadata
            ctx.protected_resource_metadata = record.resource_metadata
            ctx.auth_server_url = record.auth_server_url
        self._initialized = True

    async def _auth_flow(self, request: httpx2.Request):
        """The SDK's flow, with its own requests sent here and, unless interactive, no sign-in on a 401."""
        inner = super()._auth_flow(request)
        retried = False
        try:
            outgoing = await self._step(inner, None)
            while True:
                if outgoing is request:
                    response = yield outgoing
                    if not self.interactive and _asks_for_sign_in(response):
                        if retried or not self.context.can_refresh_token():
                            raise await self._needs_sign_in()
                        # Refused before its expiry (revoked early): renew once, as if it had expired.
                        retried = True
                        await inner.aclose()
                        self.context.token_expiry_time = 1.0
                        request.headers.pop("Authorization", None)
                        inner = super()._auth_flow(request)
                        outgoing = await self._step(inner, None)
                        continue
                else:
                    response = await self._send(outgoing)
                outgoing = await self._step(inner, response)
        except StopAsyncIteration:
            return
        finally:
            await inner.aclose()  # releases the context lock the inner flow holds

    async def _step(self, inner, response):
        try:
            return await (inner.__anext__() if response is None else inner.asend(response))
        except (StopAsyncIteration, McpAuthError):
            raise
        except (OAuthFlowError, OAuthTokenError, OAuthRegistrationError, ValidationError, ValueError) as exc:
            raise McpAuthError(self._sentence(_words(exc))) from None

    async def _needs_sign_in(self) -> NeedsSignIn:
        if self._renewal_refused is not None:
            kind, why = "expired", (f"The sign-in to the MCP server '{self.server}' has expired and could not be "
                                    f"renewed ({self._renewal_refused}). {AGAIN}")
        elif self.context.current_tokens is not None:
            await self.storage.drop_tokens()  # refused as they are and not renewable: they are dead
            self.context.clear_tokens()
            kind, why = "expired", f"The MCP server '{self.server}' no longer accepts Numi's sign-in. {AGAIN}"
        else:
            kind, why = "needs_sign_in", f"The MCP server '{self.server}' needs a sign-in. Sign in in Settings → " \
                                         f"MCP servers."
        self._renewal_refused = None
        self.on_event(kind, why)
        return NeedsSignIn(why)

    async def _send(self, request: httpx2.Request) -> httpx2.Response:
        """One request of the OAuth flow itself, bounded, following redirects within its origin."""
        seconds = auth_timeout()
        refresh = _grant(request) == "refresh_token"
        try:
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(seconds)) as http:
                response = await http.send(request)
                for _ in range(REDIRECT_LIMIT):
                    follow = next_request_within_origin(response)
                    if follow is None:
                        break
                    response = await http.send(follow)
        except httpx2.TimeoutException:
            raise self._failed(f"its sign-in server ({_origin(request)}) did not answer within {seconds:g} s") \
                from None
        except httpx2.HTTPError:
            raise self._failed(f"its sign-in server ({_origin(request)}) could not be reached") from None
        if response.status_code >= 500:
            raise self._failed(f"its sign-in server answered HTTP {response.status_code} at "
                               f"{_origin(request)}{request.url.path}; try again later")
        self._check_metadata(request, response)
        if self.interactive and request.method != "GET" and self.context.oauth_metadata is None:
            raise self._failed("it asks for a sign-in but publishes no sign-in details (OAuth authorization "
                               "server metadata), so Numi cannot sign in to it")
        if refresh:
            self._note_renewal(response)
        elif _grant(request) == "authorization_code" and response.status_code == 200:
            self.account = _account(response)
        return response

    def _check_metadata(self, request: httpx2.Request, response: httpx2.Response) -> None:
        """A metadata document that is served but cannot be read stops the sign-in rather than guessing."""
        path = request.url.path
        if request.method != "GET" or "/.well-known/" not in path or response.status_code != 200:
            return
        model = ProtectedResourceMetadata if "oauth-protected-resource" in path else OAuthMetadata
        try:
            model.model_validate_json(response.content)
        except ValidationError:
            raise self._failed(f"its sign-in details at {_origin(request)}{path} are not valid OAuth metadata, so "
                               f"Numi cannot sign in to it; tell whoever runs the server") from None

    def _note_renewal(self, response: httpx2.Response) -> None:
        if response.status_code == 200:
            self._renewal_refused = None
            self.on_event("renewed", None)
            return
        error = _json_field(response, "error") or f"HTTP {response.status_code}"
        self._renewal_refused = f"the sign-in server said {error}"
        log.warning("Renewing the sign-in of MCP server %r was refused (%s)", self.server, error)

    def _failed(self, why: str) -> McpAuthError:
        error = McpAuthError(self._sentence(why))
        self.on_event("failed", str(error))
        return error

    def _sentence(self, why: str) -> str:
        what = "sign in to" if self.interactive else "renew the sign-in to"
        end = "" if why.endswith(".") else "."
        again = "" if self.interactive else f" {AGAIN}"
        return f"Numi could not {what} the MCP server '{self.server}': {why}{end}{again}"

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        ok = await super()._handle_refresh_response(response)  # writes renewed tokens back through the storage
        if not ok and response.status_code in (400, 401):
            await self.storage.drop_tokens()  # refused, not unavailable: the stored refresh token is dead
        return ok


def _asks_for_sign_in(response: httpx2.Response) -> bool:
    if response.status_code == 401:
        return True
    return response.status_code == 403 and "insufficient_scope" in response.headers.get("www-authenticate", "")


def _grant(request: httpx2.Request) -> str | None:
    if request.method != "POST" or "form-urlencoded" not in request.headers.get("content-type", ""):
        return None
    try:
        values = parse_qs(request.content.decode("ascii"))
    except (UnicodeDecodeError, httpx2.RequestNotRead):
        return None
    return (values.get("grant_type") or [None])[0]


def _origin(request: httpx2.Request) -> str:
    url = request.url
    return f"{url.scheme}://{url.netloc.decode('ascii')}"


def _json_field(response: httpx2.Response, name: str) -> str | None:
    try:
        value = response.json().get(name)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def _account(response: httpx2.Response) -> str | None:
    """Who the token response names: a field such as `email`, or the claims of an OpenID `id_token` (unverified:
    shown, never trusted)."""
    try:
        body = response.json()
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    sources = [body]
    if isinstance(body.get("id_token"), str) and body["id_token"].count(".") == 2:
        payload = body["id_token"].split(".")[1]
        try:
            sources.append(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))
        except ValueError:
            pass
    for source in sources:
        for name in ACCOUNT_FIELDS:
            value = source.get(name) if isinstance(source, dict) else None
            if isinstance(value, str) and 0 < len(value) <= 200:
                return value
    return None


def _words(exc: BaseException) -> str:
    text = str(exc).strip().rstrip(".") or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"


# -- one server's sign-in ----------------------------------------------------------------------

@dataclass
class ServerAuth:
    """One HTTP server's sign-in for its connection's life: status, the vault, and its one provider."""
    server: str
    url: str
    vault: TokenVault
    state: str | None = None  # None until known: "needs_sign_in" | "signed_in"
    account: str | None = None
    error: str | None = None
    provider: NumiOAuthProvider = field(init=False)
    _loaded: bool = field(default=False, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self):
        self.provider = NumiOAuthProvider(self.server, self.url, VaultStorage(self.vault, self.url),
                                          on_event=self.event)

    def status(self) -> dict:
        """`auth`, `account`, `auth_error` (reads the keyring once, at the first status)."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                record = self.vault.load(self.url)
                if record is not None and record.tokens is not None and self.state is None:
                    self.state, self.account = "signed_in", record.account
            return {"auth": self.state, "account": self.account if self.state == "signed_in" else None,
                    "auth_error": self.error}

    def event(self, kind: str, sentence: str | None) -> None:
        """What the provider saw (NumiOAuthProvider.on_event)."""
        with self._lock:
            self._loaded = True
            if kind in ("needs_sign_in", "expired"):
                self.state, self.account = "needs_sign_in", None
                if kind == "expired":  # a server never signed in to simply asks; that is no failure
                    self.error = sentence
            elif kind == "renewed":
                self.state, self.error = "signed_in", None
            else:
                self.error = sentence

    def begin(self) -> None:
        """A new sign-in starts: the last one's failure no longer stands."""
        with self._lock:
            self.error = None

    def signed_in(self, account: str | None) -> None:
        with self._lock:
            self._loaded = True
            self.state, self.account, self.error = "signed_in", account, None
        self.provider.reload()

    def signed_out(self) -> None:
        with self._lock:
            self._loaded = True
            self.state, self.account, self.error = "needs_sign_in", None, None
        self.provider.reload()

    def failed(self, sentence: str) -> None:
        with self._lock:
            self.error = sentence
            if self.state is None:
                self.state = "needs_sign_in"
