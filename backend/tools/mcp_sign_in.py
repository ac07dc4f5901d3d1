"""One interactive sign-in to an MCP server, run on the manager's loop.

The SDK's own flow does the protocol (discovery, registration, PKCE, the token
exchange): a second NumiOAuthProvider, this one interactive, is attached to a
bare `initialize` POST. Its redirect handler hands the authorization URL back
to the route (which returns it for the app to open in the system browser); its
callback handler waits on the loopback listener. What the flow gathers is held
in memory and reaches the keyring only when the whole sign-in succeeds, so a
failure at any step stores nothing. The listener closes when the sign-in ends,
however it ends.
"""
from __future__ import annotations

import asyncio
import logging
import os
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp_types import LATEST_PROTOCOL_VERSION

from backend import __version__
from backend.tools.mcp_auth import NumiOAuthProvider, ServerAuth, auth_timeout
from backend.tools.mcp_config import McpAuthError, McpServerConfig, SignInNotNeeded
from backend.tools.mcp_loopback import LoopbackListener
from backend.tools.mcp_tokens import AuthRecord, StagingStorage

log = logging.getLogger("numi.mcp")

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                         "clientInfo": {"name": "Numi", "version": __version__}}}


def sign_in_timeout() -> float:
    """Seconds the listener waits for the browser (NUMI_MCP_SIGN_IN_TIMEOUT, default five minutes)."""
    return float(os.environ.get("NUMI_MCP_SIGN_IN_TIMEOUT", "300"))


class SignIn:
    """A sign-in in progress: `start()` returns the authorization URL, the rest runs on until it ends."""

    def __init__(self, config: McpServerConfig, auth: ServerAuth, on_success):
        self.config, self.auth, self._on_success = config, auth, on_success
        self._listener: LoopbackListener | None = None
        self._provider: NumiOAuthProvider | None = None
        self._staging: StagingStorage | None = None
        self._url: asyncio.Future | None = None
        self._task: asyncio.Task | None = None

    @property
    def name(self) -> str:
        return self.config.name

    async def start(self) -> str:
        """The authorization URL once the SDK knows it; McpAuthError (or SignInNotNeeded) when it cannot be had."""
        loop = asyncio.get_running_loop()
        self.auth.begin()
        record = await anyio.to_thread.run_sync(self.auth.vault.load, self.config.url)
        client = record.client_info if record is not None else None
        self._listener = LoopbackListener(self.name)
        try:
            port = await self._listener.open(_port_of(client))
        except OSError as exc:
            raise McpAuthError(f"Numi could not sign in to the MCP server '{self.name}': it could not listen on "
                               f"127.0.0.1 for the browser's return ({exc.strerror or exc}).") from None
        redirect_uri = self._listener.redirect_uri(port)
        # The authorization server compares redirect URIs exactly: a registration for another port is no use.
        if client is not None and redirect_uri not in [str(u) for u in client.redirect_uris or ()]:
            client = None
        self._staging = StagingStorage(self.config.url, client)
        self._provider = NumiOAuthProvider(self.name, self.config.url, self._staging, interactive=True,
                                           redirect_uri=redirect_uri, redirect_handler=self._redirect,
                                           callback_handler=self._callback)
        self._url = loop.create_future()
        self._task = loop.create_task(self._run(), name=f"mcp-sign-in:{self.name}")
        await asyncio.wait({self._url, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if self._url.done():
            return self._url.result()
        if self._task.cancelled():
            raise McpAuthError(f"The sign-in to the MCP server '{self.name}' was stopped.")
        self._task.result()  # raises its McpAuthError
        raise SignInNotNeeded(f"The MCP server '{self.name}' does not ask for a sign-in: it answered without one.")

    async def cancel(self) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(task, return_exceptions=True)
        elif self._listener is not None:
            await self._listener.close()

    async def _run(self) -> bool:
        """True when signed in, False when the server did not ask for a sign-in; raises McpAuthError."""
        listener = self._listener
        try:
            if not await self._attempt():
                return False
            ctx = self._provider.context
            record = AuthRecord(server_url=self.config.url, tokens=self._staging.tokens,
                                expires_at=ctx.token_expiry_time, client_info=self._staging.client_info,
                                oauth_metadata=ctx.oauth_metadata, resource_metadata=ctx.protected_resource_metadata,
                                auth_server_url=ctx.auth_server_url, account=self._provider.account)
            await anyio.to_thread.run_sync(self.auth.vault.save, record)
            self.auth.signed_in(record.account)
            await self._on_success()
            log.info("Signed in to MCP server %r", self.name)
            # Everything is in place before the browser's page says so.
            listener.stop_listening()
            listener.finish(None)
            return True
        except McpAuthError as exc:
            self._fail(str(exc))
            raise
        except httpx2.TimeoutException:
            sentence = (f"Numi could not sign in to the MCP server '{self.name}': it did not answer within "
                        f"{auth_timeout():g} s.")
            self._fail(sentence)
            raise McpAuthError(sentence) from None
        except httpx2.HTTPError:
            sentence = (f"Numi could not sign in to the MCP server '{self.name}': it could not be reached at "
                        f"{self.config.url}. Check its address in Settings → MCP servers.")
            self._fail(sentence)
            raise McpAuthError(sentence) from None
        except Exception as exc:  # anything else the flow raises is still a sentence, never a stuck sign-in
            sentence = f"Numi could not sign in to the MCP server '{self.name}': {_words(exc)}."
            self._fail(sentence)
            raise McpAuthError(sentence) from None
        finally:
            await listener.close()

    def _fail(self, sentence: str) -> None:
        if self._url.done():  # the person is in the browser: the status says how it ended
            self.auth.failed(sentence)
        log.warning("%s", sentence)
        self._listener.stop_listening()
        self._listener.finish(sentence)

    async def _attempt(self) -> bool:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        async with httpx2.AsyncClient(headers=dict(self.config.headers), timeout=httpx2.Timeout(auth_timeout()),
                                      auth=self._provider) as http:
            async with http.stream("POST", self.config.url, json=INITIALIZE, headers=headers) as response:
                status, session = response.status_code, response.headers.get("mcp-session-id")
            asked = self._url.done()
            if 200 <= status < 300 and session:
                await _end_session(http, self.config.url, session, self._staging.tokens)
        if 200 <= status < 300:
            return asked
        if asked:
            raise McpAuthError(f"Numi could not sign in to the MCP server '{self.name}': it refused the new sign-in "
                               f"(HTTP {status}). Sign in again in Settings → MCP servers.")
        raise McpAuthError(f"Numi could not sign in to the MCP server '{self.name}': it answered HTTP {status} at "
                           f"{self.config.url}. Check its address in Settings → MCP servers.")

    async def _redirect(self, authorization_url: str) -> None:
        if self._provider.context.oauth_metadata is None:
            raise McpAuthError(f"Numi could not sign in to the MCP server '{self.name}': it asks for a sign-in but "
                               f"publishes no sign-in details (OAuth authorization server metadata).")
        split = urlsplit(authorization_url)
        if split.scheme not in ("http", "https") or not split.netloc:
            raise McpAuthError(f"Numi could not sign in to the MCP server '{self.name}': its sign-in page is not a "
                               f"web address.")
        state = (parse_qs(split.query).get("state") or [None])[0]
        self._listener.expect(state, outcome_wait=2 * auth_timeout() + 5)
        self._url.set_result(authorization_url)

    async def _callback(self):
        return await self._listener.code(sign_in_timeout())


async def _end_session(http: httpx2.AsyncClient, url: str, session: str, tokens) -> None:
    """Close the session the sign-in opened (it only proved the token); a failure here changes nothing."""
    headers = {"mcp-session-id": session}
    if tokens is not None:
        headers["Authorization"] = f"Bearer {tokens.access_token}"
    try:
        await http.delete(url, headers=headers, auth=None)
    except httpx2.HTTPError:
        pass


def _port_of(client) -> int:
    """The loopback port a stored registration was made for, so the same registration serves again; else 0."""
    for uri in (client.redirect_uris or ()) if client is not None else ():
        split = urlsplit(str(uri))
        if split.hostname == "127.0.0.1" and split.port:
            return split.port
    return 0


def _words(exc: BaseException) -> str:
    text = str(exc).strip().rstrip(".") or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "…"
