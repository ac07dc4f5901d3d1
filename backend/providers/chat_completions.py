"""OpenAI Chat Completions (and every server that copies it) through the
official `openai` SDK.

`stream(request, control)` yields the internal StreamEvents; see
backend/providers/__init__.py for the order and the close() behaviour.
No retries here (max_retries=0): the turn runner retries before the first
token, where it can also fall back to another model.
"""
from __future__ import annotations

import email.utils
import json
import math
import time
import uuid
from typing import Any, Iterator

import openai

from backend.core import sentences
from backend.core.errors import (AuthError, BadResponse, ConnectionFailed, ContextTooLong,
                                 ProviderError, ProviderTimeout, RateLimited)
from backend.core.text import redact
from backend.core.types import (Message, ModelRequest, ProviderConfig, ReasoningDelta,
                                StepEnd, StreamEvent, TextDelta, ToolCallDelta, ToolCallStart,
                                Usage)

from . import CONNECT_TIMEOUT, StreamControl
from .key_check import key_problem
from .relay import as_body, as_sent, as_url, relay

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, llama.cpp, LM Studio) ignore the key, but the SDK
# insists on one; an explicit placeholder also stops it from silently using
# OPENAI_API_KEY from the environment.
PLACEHOLDER_KEY = "not-needed"

_CONTEXT_PATTERNS = ("context_length_exceeded", "context length", "context window", "maximum context",
                     "too many tokens", "prompt is too long", "reduce the length", "n_ctx",
                     "exceeds the available context", "input is too long")
# How servers refuse a request because it carries tools: Ollama ("… does not support tools"),
# OpenRouter ("No endpoints found that support tool use"), llama.cpp without --jinja, vLLM
# without --enable-auto-tool-choice, and the usual wordings of the rest.
_NO_TOOLS_PATTERNS = ("does not support tools", "doesn't support tools", "does not support tool",
                      "not support function calling", "support tool use", "tool use is not supported",
                      "tools are not supported", "tool calling is not supported", "tools param requires",
                      "tool choice requires", "tool_choice requires", "function calling is not enabled",
                      "does not support function")


class ToolsUnsupported(ProviderError):
    """The provider refused the request because of its tool definitions."""
    code = "tools_unsupported"


# --- request ----------------------------------------------------------------

def to_wire_messages(request: ModelRequest) -> list[dict]:
    out: list[dict] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for m in request.messages:
        out.append(_wire_message(m))
    return out


def _wire_message(m: Message) -> dict:
    # Reasoning is never sent back: Chat Completions has no field for it and
    # servers such as DeepSeek reject `reasoning_content` in input messages.
    if m.role == "assistant":
        msg: dict[str, Any] = {"role": "assistant"}
        if m.tool_calls:
            msg["content"] = m.content or None
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments or "{}"}}
                                 for c in m.tool_calls]
        else:
            msg["content"] = m.content
        return msg
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    if m.role == "user" and m.images:
        # Content parts only where there is an image: plain strings are what every
        # compatible server understands, and some refuse arrays outright.
        parts: list[dict] = [{"type": "text", "text": m.content}] if m.content else []
        parts.extend({"type": "image_url", "image_url": {"url": f"data:{i.mime};base64,{i.data}"}}
                     for i in m.images)
        return {"role": "user", "content": parts}
    return {"role": m.role, "content": m.content}


def build_params(request: ModelRequest) -> dict:
    """The keyword arguments of chat.completions.create for this request."""
    kw: dict[str, Any] = {"model": request.model, "messages": to_wire_messages(request),
                          "stream": True, "stream_options": {"include_usage": True}}
    if request.tools:
        kw["tools"] = [{"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in request.tools]
    p = request.params or {}
    for name in ("temperature", "top_p"):
        if p.get(name) is not None:
            kw[name] = p[name]
    if p.get("max_tokens") is not None:
        # OpenAI's own API deprecated max_tokens (reasoning models refuse it);
        # compatible servers mostly only know max_tokens.
        key = "max_completion_tokens" if request.provider.kind == "openai" else "max_tokens"
        kw[key] = p["max_tokens"]
    effort = p.get("reasoning_effort")
    if effort is not None and effort != "off":
        kw["reasoning_effort"] = effort
    return kw


def sendable_key(p: ProviderConfig) -> str:
    """The key for the request's header; a stored key no header can carry is an AuthError that says so."""
    if p.api_key and (problem := key_problem(p.api_key)):
        # Keys are checked when they are saved; this is one kept before that check existed.
        raise AuthError(f"The API key saved for {p.name} cannot be sent: {problem[0].lower()}{problem[1:]} "
                        f"Set it again in Settings → Providers.")
    return p.api_key or PLACEHOLDER_KEY


def _base_url(p: ProviderConfig) -> str:
    if p.base_url:
        return p.base_url
    if p.kind == "openai":
        return OPENAI_BASE_URL
    raise ProviderError(f"{p.name} has no base URL. Set it in Settings → Providers "
                        f"(for example http://127.0.0.1:11434/v1).")


def wire_request(request: ModelRequest) -> tuple[str, dict]:
    """The endpoint and JSON body stream() posts for this request."""
    return as_url(_base_url(request.provider), "/chat/completions"), as_body(build_params(request))


# --- response -----------------------------------------------------------------

def stream(request: ModelRequest, control: StreamControl) -> Iterator[StreamEvent]:
    p = request.provider
    base_url = _base_url(p)
    kw = build_params(request)
    errors = _ErrorMapper(request, base_url)
    client = openai.OpenAI(base_url=base_url, api_key=sendable_key(p), max_retries=0,
                           timeout=_timeout(p.timeout), http_client=control.http_client(p.timeout))
    asm = _Assembler(_estimate_tokens(json.dumps(kw["messages"]) + json.dumps(kw.get("tools", ""))))
    # The SDK builds the request, signs it and raises typed status errors; the
    # chunks are decoded as plain JSON, because the SDK's per-chunk model
    # objects cost ~25x more CPU than the relay itself.
    sent = as_sent(kw, ("messages", "tools"), required=("messages",))
    return relay(client, lambda: client.chat.completions.with_streaming_response.create(**sent),
                 asm=asm, errors=errors, control=control, sse_events=_sse_chunks,
                 whole_as_events=lambda data: iter([_completion_as_chunk(data)]),
                 failure_of=lambda chunk: chunk.get("error") or None,
                 stop_at_complete=False)  # the usage chunk follows finish_reason


def _sse_chunks(lines: Iterator[str]) -> Iterator[dict]:
    """The JSON objects of a server-sent event stream, up to `data: [DONE]`."""
    data: list[str] = []
    for line in lines:
        if line:
            if line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            continue  # comments (":"), event names and ids carry nothing for Chat Completions
        if not data:
            continue
        payload = "\n".join(data)
        data = []
        if payload.strip() == "[DONE]":
            return
        chunk = json.loads(payload)
        if isinstance(chunk, dict):
            yield chunk
    if data and "\n".join(data).strip() != "[DONE]":
        chunk = json.loads("\n".join(data))
        if isinstance(chunk, dict):
            yield chunk


def _timeout(read: float):
    import httpx2
    return httpx2.Timeout(read, connect=CONNECT_TIMEOUT)


def _estimate_tokens(text_or_len: str | int) -> int:
    n = text_or_len if isinstance(text_or_len, int) else len(text_or_len)
    return math.ceil(n / 4)


def _completion_as_chunk(data: dict) -> dict:
    """A non-streamed chat.completion reshaped as one chunk with the whole delta."""
    choices = []
    for c in data.get("choices") or []:
        msg = dict(c.get("message") or {})
        for call_index, call in enumerate(msg.get("tool_calls") or []):
            call.setdefault("index", call_index)
        choices.append({"index": c.get("index", 0), "delta": msg, "finish_reason": c.get("finish_reason")})
    return {**data, "choices": choices, "object": "chat.completion.chunk"}


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


class _Assembler:
    """Turns decoded chunks into events; keeps what the end of the step needs."""

    def __init__(self, input_estimate: int):
        self.input_estimate = input_estimate
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self.out_chars = 0
        self.calls: dict[int, dict] = {}
        self._last_index: int | None = None

    @property
    def complete(self) -> bool:
        # The usage chunk comes after the finish chunk, so either proves the
        # server reached the end; servers that send [DONE] without a
        # finish_reason but with usage are still accepted.
        return self.finish_reason is not None or self.usage is not None

    def feed(self, chunk: dict) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if chunk.get("usage"):
            self.usage = _dict(chunk["usage"])  # some servers repeat it; the last one counts
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or (choice.get("index") or 0) != 0:
                continue  # n > 1 is never requested
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(delta, out)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return out

    def _delta(self, delta: dict, out: list[StreamEvent]) -> None:
        # llama.cpp, vLLM and DeepSeek say reasoning_content; Ollama and
        # OpenRouter say reasoning. Some send both with the same text.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self.out_chars += len(reasoning)
            out.append(ReasoningDelta(reasoning))
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                self.out_chars += len(text)
                out.append(TextDelta(text))
        for tc in delta.get("tool_calls") or ():
            if isinstance(tc, dict):
                self._tool_call(tc, out)

    def _tool_call(self, tc: dict, out: list[StreamEvent]) -> None:
        call_id = tc.get("id")
        index = tc.get("index")
        if not isinstance(index, int):
            # A few servers omit the index: match by id, else continue the last call.
            index = next((i for i, c in self.calls.items() if call_id and c["id"] == call_id),
                         None if call_id else self._last_index)
            if index is None:
                index = len(self.calls)
        self._last_index = index
        fn = _dict(tc.get("function"))
        name = fn.get("name") or ""
        args = fn.get("arguments") or ""
        call = self.calls.get(index)
        if call is None:
            call = self.calls[index] = {"id": call_id or f"call_{uuid.uuid4().hex[:24]}",
                                        "name": name, "started": False, "pending": []}
        elif name and not call["name"]:
            call["name"] = name
        if args:
            self.out_chars += len(args)
            call["pending"].append(args)
        if call["name"]:
            self._flush_call(index, call, out)

    @staticmethod
    def _flush_call(index: int, call: dict, out: list[StreamEvent]) -> None:
        # ToolCallStart needs the name; arguments seen before it are held back.
        if not call["started"]:
            call["started"] = True
            out.append(ToolCallStart(index, call["id"], call["name"]))
        out.extend(ToolCallDelta(index, a) for a in call["pending"])
        call["pending"] = []

    def finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for index, call in self.calls.items():
            self._flush_call(index, call, out)  # a call whose name never came
        u = self.usage
        if u is not None:
            out.append(Usage(input_tokens=u.get("prompt_tokens") or 0,
                             output_tokens=u.get("completion_tokens") or 0,
                             reasoning_tokens=_dict(u.get("completion_tokens_details")).get("reasoning_tokens") or 0,
                             cached_tokens=_dict(u.get("prompt_tokens_details")).get("cached_tokens") or 0))
        else:
            out.append(Usage(input_tokens=self.input_estimate,
                             output_tokens=_estimate_tokens(self.out_chars), estimated=True))
        reason = self.finish_reason
        if reason == "function_call":
            reason = "tool_calls"
        if self.calls and reason in (None, "stop"):
            reason = "tool_calls"  # Ollama and some vLLM versions say "stop"
        out.append(StepEnd(reason))
        return out


# --- errors -------------------------------------------------------------------

class _ErrorMapper:
    """SDK and transport exceptions → typed ProviderErrors with a sentence a
    person can act on. The API key never appears in one: provider messages
    are scrubbed, and 401/403 bodies (which may echo a masked key) are not quoted."""

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
            wait = _retry_after(headers)
            when = f"Wait {_seconds(wait)} and try again." if wait else "Wait a moment and try again."
            return RateLimited(f"{name} is rate-limiting requests (HTTP 429). {when}",
                               status=status, retryable=True, retry_after=wait)
        if self.sent_tools and 400 <= status < 600 and any(k in low for k in _NO_TOOLS_PATTERNS):
            return ToolsUnsupported(f"{name} says {self.model} does not take tools (HTTP {status}){said}",
                                    status=status)
        if status == 413 or (status in (400, 422) and any(k in low or k in code for k in _CONTEXT_PATTERNS)):
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
                                 status=status, retryable=True, retry_after=_retry_after(headers))
        return ProviderError(f"{name} rejected the request{where} (HTTP {status}){said}", status=status)


def _retry_after(headers: Any) -> float | None:
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

