"""Typed provider failures, each carrying a sentence a person can act on."""
from __future__ import annotations


class Explained(Exception):
    """A failure whose `message` is a sentence a person can act on."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class ProviderError(Explained):
    """A model request failed. `message` names the provider and what to do."""

    code = "provider_error"

    def __init__(self, message: str, *, status: int | None = None,
                 retryable: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class AuthError(ProviderError):
    code = "auth"


class RateLimited(ProviderError):
    code = "rate_limited"


class ConnectionFailed(ProviderError):
    code = "unreachable"


class ProviderTimeout(ProviderError):
    code = "timeout"


class BadResponse(ProviderError):
    """The provider answered with something that is not its own wire format."""
    code = "bad_response"


class ContextTooLong(ProviderError):
    code = "context_too_long"
