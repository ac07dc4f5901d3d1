"""Where an MCP server's sign-in is kept: one JSON value per server in the OS keyring, never on disk.

KeyStore (backend/keys.py) keeps it under kind "mcp-oauth" and the server's id,
in memory for this run when there is no keyring. A sign-in in progress keeps
what it gathers in a StagingStorage until it has succeeded.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass

import anyio
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from mcp.shared.auth_utils import calculate_token_expiry

from backend.tools.mcp_config import OAUTH_KEY_KIND

log = logging.getLogger("numi.mcp")


@dataclass
class AuthRecord:
    """One server's sign-in as kept in the keyring."""
    server_url: str
    tokens: OAuthToken | None = None
    expires_at: float | None = None  # the SDK's token_expiry_time, which it does not store itself
    client_info: OAuthClientInformationFull | None = None
    oauth_metadata: OAuthMetadata | None = None
    resource_metadata: ProtectedResourceMetadata | None = None
    auth_server_url: str | None = None
    account: str | None = None

    def to_json(self) -> str:
        def dump(model):
            return None if model is None else model.model_dump(mode="json", exclude_none=True)
        return json.dumps({"server_url": self.server_url, "tokens": dump(self.tokens), "expires_at": self.expires_at,
                           "client_info": dump(self.client_info), "oauth_metadata": dump(self.oauth_metadata),
                           "resource_metadata": dump(self.resource_metadata),
                           "auth_server_url": self.auth_server_url, "account": self.account},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AuthRecord:
        data = json.loads(text)

        def load(model, key):
            return None if data.get(key) is None else model.model_validate(data[key])
        return cls(server_url=data["server_url"], tokens=load(OAuthToken, "tokens"), expires_at=data.get("expires_at"),
                   client_info=load(OAuthClientInformationFull, "client_info"),
                   oauth_metadata=load(OAuthMetadata, "oauth_metadata"),
                   resource_metadata=load(ProtectedResourceMetadata, "resource_metadata"),
                   auth_server_url=data.get("auth_server_url"), account=data.get("account"))


class TokenVault:
    """One server's AuthRecord in the OS keyring (in memory for this run without one); blocking calls."""

    def __init__(self, keys, server: str):
        self._keys, self.server = keys, server

    def load(self, server_url: str) -> AuthRecord | None:
        """The record for this address; one for another address, or one that cannot be read, is no record."""
        text = self._keys.get(self.server, kind=OAUTH_KEY_KIND)
        if not text:
            return None
        try:
            record = AuthRecord.from_json(text)
        except (ValueError, KeyError, TypeError):
            log.warning("The stored sign-in of MCP server %r could not be read; it needs a new sign-in", self.server)
            return None
        return record if record.server_url == server_url else None

    def save(self, record: AuthRecord) -> None:
        self._keys.set(self.server, record.to_json(), kind=OAUTH_KEY_KIND)

    def forget(self) -> None:
        self._keys.delete(self.server, kind=OAUTH_KEY_KIND)

    def in_keyring(self) -> bool:
        return self._keys.status()[0]


class VaultStorage:
    """The SDK's TokenStorage over a TokenVault: what a renewal brings is written back at once."""

    def __init__(self, vault: TokenVault, server_url: str):
        self._vault, self._url = vault, server_url
        self._lock = anyio.Lock()  # read-modify-write of one keyring value

    async def record(self) -> AuthRecord | None:
        return await anyio.to_thread.run_sync(self._vault.load, self._url)

    async def get_tokens(self) -> OAuthToken | None:
        record = await self.record()
        return record.tokens if record else None

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        record = await self.record()
        return record.client_info if record else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        # The same expiry the SDK computes for its context, kept so a restart renews on time.
        await self._update(tokens=tokens, expires_at=calculate_token_expiry(tokens.expires_in))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._update(client_info=client_info)

    async def drop_tokens(self) -> None:
        await self._update(tokens=None, expires_at=None)

    async def _update(self, **changes) -> None:
        async with self._lock:
            record = await self.record()
            if record is None:
                if changes.get("tokens") is None:
                    return  # nothing stored: nothing to drop, and a renewal needs a sign-in first
                record = AuthRecord(server_url=self._url)
            for name, value in changes.items():
                setattr(record, name, value)
            await anyio.to_thread.run_sync(self._vault.save, record)


class StagingStorage:
    """A sign-in's TokenStorage: held in memory, and kept only when the whole sign-in succeeds."""

    def __init__(self, server_url: str, client_info: OAuthClientInformationFull | None = None):
        self.url, self.tokens, self.client_info = server_url, None, client_info

    async def record(self) -> AuthRecord:
        return AuthRecord(server_url=self.url, client_info=self.client_info)

    async def get_tokens(self):
        return self.tokens

    async def get_client_info(self):
        return self.client_info

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def set_client_info(self, client_info) -> None:
        self.client_info = client_info

    async def drop_tokens(self) -> None:
        self.tokens = None
