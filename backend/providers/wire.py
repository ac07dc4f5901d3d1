"""What the adapters share on the way to and from a provider: the key and
timeouts a client is built with, the server-sent event framing, and the
token estimate used when a provider reports no usage.
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterator

from backend.core.errors import AuthError, ProviderError
from backend.core.types import ProviderConfig

from . import CONNECT_TIMEOUT
from .key_check import key_problem

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, llama.cpp, LM Studio) ignore the key, but the SDKs
# insist on one; an explicit placeholder also stops them from silently using
# OPENAI_API_KEY or ANTHROPIC_API_KEY from the environment.
PLACEHOLDER_KEY = "not-needed"


def sendable_key(p: ProviderConfig) -> str:
    """The key for the request's header; a stored key no header can carry is an AuthError that says so."""
    if p.api_key and (problem := key_problem(p.api_key)):
        # Keys are checked when they are saved; this is one kept before that check existed.
        raise AuthError(f"The API key saved for {p.name} cannot be sent: {problem[0].lower()}{problem[1:]} "
                        f"Set it again in Settings → Providers.")
    return p.api_key or PLACEHOLDER_KEY


def openai_base_url(p: ProviderConfig) -> str:
    """The base URL of an OpenAI-style provider (Chat Completions, Responses)."""
    if p.base_url:
        return p.base_url
    if p.kind == "openai":
        return OPENAI_BASE_URL
    raise ProviderError(f"{p.name} has no base URL. Set it in Settings → Providers "
                        f"(for example http://127.0.0.1:11434/v1).")


def client_timeout(read: float):
    """The SDK client's timeout: `read` seconds for an answer, CONNECT_TIMEOUT to connect."""
    import httpx2
    return httpx2.Timeout(read, connect=CONNECT_TIMEOUT)


def estimate_tokens(text_or_len: str | int) -> int:
    """A token count from characters (about four a token), for providers that report none."""
    n = text_or_len if isinstance(text_or_len, int) else len(text_or_len)
    return math.ceil(n / 4)


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


# --- server-sent events ------------------------------------------------------

def sse_frames(lines: Iterator[str]) -> Iterator[tuple[str, str]]:
    """(event name, data) of each event in a server-sent event stream; the name is '' when none was sent."""
    name, data = "", []
    for line in lines:
        if line:
            if line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif line.startswith("event:"):
                name = line[6:].strip()
            continue  # comments (":") and ids carry nothing here
        if data:
            yield name, "\n".join(data)
        name, data = "", []
    if data:
        yield name, "\n".join(data)


def data_events(lines: Iterator[str]) -> Iterator[dict]:
    """The JSON objects of an OpenAI-style stream, up to `data: [DONE]`; event names are not read."""
    for _, payload in sse_frames(lines):
        if payload.strip() == "[DONE]":
            return
        event = json.loads(payload)
        if isinstance(event, dict):
            yield event


def named_events(lines: Iterator[str]) -> Iterator[dict]:
    """The JSON objects of an Anthropic-style stream; an `event:` name fills in a missing type."""
    for name, payload in sse_frames(lines):
        event = json.loads(payload)
        if isinstance(event, dict):
            if "type" not in event and name:
                event["type"] = name
            yield event
