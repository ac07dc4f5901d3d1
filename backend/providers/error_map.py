"""Provider failures as typed ProviderErrors, with a sentence a person can act on.

ErrorMapper speaks for Chat Completions; the other adapters subclass it for
their own SDK, wording and in-stream error events. The API key never appears
in a sentence: provider messages are scrubbed, and 401/403 bodies (which may
echo a masked key) are not quoted.
"""
from __future__ import annotations

import email.utils
import json
import math
import time
from typing import Any

import openai

from backend.core import sentences
from backend.core.errors import (
    AuthError,
    BadResponse,
    ConnectionFailed,
    ContextTooLong,
    ProviderError,
    ProviderTimeout,
    RateLimited,
)
from backend.core.text import redact
from backend.core.types import ModelRequest

from . import CONNECT_TIMEOUT

CONTEXT_PATTERNS = ("context_length_exceeded", "context length", "context window", "maximum context",
                    "too many tokens", "prompt is too long", "reduce the length", "n_ctx",
                    "exceeds the available context", "input is too long")
# How servers refuse a request because it carries tools: Ollama ("… does not support tools"),
# OpenRouter ("No endpoints found that support tool use"), llama.cpp without --jinja, vLLM
# without --enable-auto-tool-choice, and the usual wordings of the rest.
NO_TOOLS_PATTERNS = ("does not support tools", "doesn't support tools", "does not support tool",
                     "not support function calling", "support tool use", "tool use is not supported",
                     "tools are not supported", "tool calling is not supported", "tools param requires",
                     "tool choice requires", "tool_choice requires", "function calling is not enabled",
                     "does not support function")


class ToolsUnsupported(ProviderError):
    """The provider refused the request because of its tool definitions."""
    code = "tools_unsupported"


class ErrorMapper:
    """One request's SDK and transport exceptions → typed ProviderErrors, in Chat Completions' words."""

    def __init__(self, request: ModelRequest, base_url: str):
        self.p = request.provider
        self.name = request.provider.name
        self.model = request.model
        self.sent_tools = bool(request.tools)
        self.base_url = base_url
        self.started = False  # an event was already yielded

    def scrub(self, text: str, limit: int = 300) -> str:
        text = " ".join(redact(text, self.p.api_key).split())
        return text if len(text) <= limit else text[:limit - 1] + "…"

    # What differs between the adapters that share this mapper.
    sdk: Any = openai  # the SDK whose exception classes are mapped
    wire = "Chat Completions"
    expected = "an OpenAI-compatible API"

    def map(self, exc: BaseException) -> ProviderError | None:
        import httpx2
        sdk = self.sdk
        if isinstance(exc, sdk.APIStatusError):
            return self.status(exc.status_code, exc.body, exc.response.headers)
        if isinstance(exc, sdk.APITimeoutError):
            if isinstance(exc.__cause__, httpx2.ConnectTimeout):
                return ConnectionFailed(
                    f"Could not reach {self.name} at {self.base_url} (no connection within "
                    f"{CONNECT_TIMEOUT:g} s). Is the server running?", retryable=True)
            return ProviderTimeout(f"{self.name} did not answer within {self.p.timeout:g} s.",
                                   retryable=True)
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__
            if isinstance(cause, httpx2.ConnectError) or (cause is None and not self.started):
                reason = self.scrub(str(cause), 120) if cause else ""
                return ConnectionFailed(
                    f"Could not reach {self.name} at {self.base_url}"
                    f"{f' ({reason})' if reason else ''}. Is the server running?", retryable=True)
            return self.dropped()
        if isinstance(exc, httpx2.TimeoutException):
            return ProviderTimeout(f"{self.name} did not answer within {self.p.timeout:g} s.", retryable=True)
        if isinstance(exc, httpx2.TransportError):
            return self.dropped()  # the body was cut while it was being read
        if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
            doc = getattr(exc, "doc", "") or ""
            return BadResponse(
                f"{self.name} sent data that is not {self.wire} JSON"
                f"{f' ({self.scrub(doc, 80)!r})' if doc else ''}. Check that the base URL "
                f"{self.base_url} points at {self.expected}.")
        return None

    def in_stream(self, error: Any) -> ProviderError:
        """An error object sent inside the stream (OpenRouter, vLLM), often with an HTTP-like code."""
        body = error if isinstance(error, dict) else {"message": str(error)}
        code = body.get("code")
        if isinstance(code, int) and 400 <= code <= 599:
            return self.status(code, body, {}, mid_stream=True)
        return ProviderError(f"{self.name} reported an error mid-reply: "
                             f"{self.scrub(self.detail(body) or 'no details')}.")

    def html(self) -> ProviderError:
        return BadResponse(f"{self.name} answered with a web page instead of a Chat Completions stream. "
                           f"Check the base URL {self.base_url} (it usually ends in /v1).")

    def dropped(self) -> ProviderError:
        if self.started:
            return ConnectionFailed(f"The connection to {self.name} dropped mid-reply.", retryable=True)
        return ConnectionFailed(f"The connection to {self.name} closed before it answered.",
                                retryable=True)

    @staticmethod
    def detail(body: Any) -> str:
        if isinstance(body, dict):
            msg = body.get("message") or body.get("error") or body.get("detail")
            if isinstance(msg, dict):
                msg = msg.get("message")
            return msg if isinstance(msg, str) else ""
        if isinstance(body, str) and not body.lstrip().startswith("<"):
            return body  # plain-text bodies are worth quoting; HTML pages are not
        return ""

    def status(self, status: int, body: Any, headers: Any, mid_stream: bool = False) -> ProviderError:
        name, detail = self.name, self.scrub(self.detail(body))
        low = detail.lower()
        code = str(body.get("code") or "") if isinstance(body, dict) else ""
        said = sentences.said(detail)
        where = " mid-reply" if mid_stream else ""
        if status == 401:
            if not self.p.api_key:
                return AuthError(f"{name} needs an API key (HTTP 401). Add one in Settings → Providers.",
                                 status=status)
            return AuthError(f"{name} rejected the API key (HTTP 401). Check the key in Settings → Providers.",
                             status=status)
        if status == 403:
            return AuthError(f"{name} refused access (HTTP 403). Check that the key in Settings → Providers "
                             f"may use the model {self.model}.", status=status)
        if status == 429:
            if code == "insufficient_quota" or "quota" in low:
                return RateLimited(f"{name} says the account is out of quota (HTTP 429){said} "
                                   f"Check the plan and billing with the provider.", status=status)
            wait = retry_after(headers)
            when = f"Wait {_seconds(wait)} and try again." if wait else "Wait a moment and try again."
            return RateLimited(f"{name} is rate-limiting requests (HTTP 429). {when}",
                               status=status, retryable=True, retry_after=wait)
        if self.sent_tools and 400 <= status < 600 and any(k in low for k in NO_TOOLS_PATTERNS):
            return ToolsUnsupported(f"{name} says {self.model} does not take tools (HTTP {status}){said}",
                                    status=status)
        if status == 413 or (status in (400, 422) and any(k in low or k in code for k in CONTEXT_PATTERNS)):
            return ContextTooLong(f"The conversation is too long for {self.model} on {name} (HTTP {status}). "
                                  f"Start a new chat or shorten the conversation.", status=status)
        if status == 404 or (status == 400 and "model" in low and
                             any(k in low for k in ("not found", "not a valid", "does not exist", "unknown"))):
            if "model" in low or code == "model_not_found":
                return ProviderError(f"{name} does not know the model {self.model!r} (HTTP {status}). "
                                     f"Check the model name in Settings → Models.", status=status)
            return ProviderError(f"{name} answered HTTP 404 Not Found for {self.base_url}/chat/completions. "
                                 f"Check the base URL in Settings → Providers (it usually ends in /v1).",
                                 status=status)
        if status >= 500 or status in (408, 409):
            return ProviderError(f"{name} had a server error{where} (HTTP {status}){said} Try again.",
                                 status=status, retryable=True, retry_after=retry_after(headers))
        return ProviderError(f"{name} rejected the request{where} (HTTP {status}){said}", status=status)


def retry_after(headers: Any) -> float | None:
    """Seconds from Retry-After (seconds or an HTTP date) or OpenAI's retry-after-ms."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _seconds(s: float) -> str:
    if s < 1:
        return "a second"
    if s < 120:
        return f"{math.ceil(s)} s"
    return f"{math.ceil(s / 60)} min"
