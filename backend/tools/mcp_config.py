"""What an MCP server is and how its failures are worded, without the SDK.

Importing the `mcp` SDK takes over a second; the server imports this module at
start-up and the SDK only when a server is first started.
"""
from __future__ import annotations

from dataclasses import dataclass, field

OAUTH_KEY_KIND = "mcp-oauth"  # KeyStore kind of an MCP server's sign-in: one JSON value per server id


class McpError(ValueError):
    """A failure worded for the person and the model; a ValueError so Numi's tool runner shows it as-is."""


class McpAuthError(McpError):
    """A sign-in or renewal that failed, worded for the person (and the model, when a call fails)."""


class NeedsSignIn(McpAuthError):
    """The MCP server refused the request for want of a sign-in."""


class SignInNotNeeded(McpError):
    """A sign-in was asked of a server that has none."""


@dataclass(frozen=True)
class McpServerConfig:
    name: str
    transport: str = "stdio"  # "stdio" | "http" (Streamable HTTP)
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # merged over the SDK's minimal safe environment
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    call_timeout: float = 60.0  # seconds one tool call may take

    @property
    def oauth(self) -> bool:
        """Whether the server may ask for an OAuth sign-in: over HTTP, unless Numi sends its own Authorization."""
        return self.transport == "http" and "authorization" not in {name.lower() for name in self.headers}

    def __post_init__(self):
        if self.transport not in ("stdio", "http"):
            raise ValueError(f"MCP server {self.name!r}: transport must be 'stdio' or 'http'.")
        if self.transport == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: a stdio server needs a command.")
        if self.transport == "http" and not self.url:
            raise ValueError(f"MCP server {self.name!r}: an http server needs a url.")
