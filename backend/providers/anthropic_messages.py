"""Anthropic Messages (and servers that copy it) through the official
`anthropic` SDK.

`stream(request, control)` yields the internal StreamEvents; see
backend/providers/__init__.py for the order and the close() behaviour.
No retries here (max_retries=0), as in chat_completions.

Signed thinking: Anthropic requires the thinking blocks of an assistant turn
to be passed back verbatim (with their signature) when that turn continues
after tool use. Each finished thinking block becomes a ReasoningDetail

    {"wire_api": "anthropic_messages", "type": "thinking", "thinking": text, "signature": sig}
    {"wire_api": "anthropic_messages", "type": "redacted_thinking", "data": opaque}

which the store keeps on the Message; they are replayed only to the model
that wrote them (Message.model_id == ModelRequest.model_id), because a
signature is only valid there. Plain `Message.reasoning` is never sent back.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

import anthropic

from backend.core.errors import BadResponse, ProviderError
from backend.core.types import (
    Message,
    ModelRequest,
    ProviderConfig,
    ReasoningDelta,
    ReasoningDetail,
    StepEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)

from . import StreamControl
from .error_map import ErrorMapper, retry_after
from .relay import as_body, as_sent, as_url, relay
from .wire import as_dict, client_timeout, estimate_tokens, named_events, sendable_key

WIRE_API = "anthropic_messages"
ANTHROPIC_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 8192  # Anthropic has no default: max_tokens is required
MIN_THINKING_BUDGET = 1024  # the API refuses smaller budgets
THINKING_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384}
ANSWER_ROOM = 4096  # tokens left for the answer when max_tokens is raised above a budget

_STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
                 "max_tokens": "length", "model_context_window_exceeded": "length",
                 "refusal": "stop", "pause_turn": "stop"}

# Anthropic's error `type` → the HTTP status it comes with (an `event: error`
# inside a stream has no status of its own).
_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                 "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                 "rate_limit_error": 429, "api_error": 500, "timeout_error": 504,
                 "overloaded_error": 529}


# --- request ----------------------------------------------------------------

def build_params(request: ModelRequest) -> dict:
    """The keyword arguments of messages.create for this request."""
    system, messages = to_wire_messages(request)
    kw: dict[str, Any] = {"model": request.model, "messages": messages, "stream": True}
    if system:
        kw["system"] = system
    if request.tools:
        kw["tools"] = [{"name": t.name, "description": t.description,
                        "input_schema": t.parameters or {"type": "object", "properties": {}}}
                       for t in request.tools]
    p = request.params or {}
    cap = request.max_output_tokens
    max_tokens = p.get("max_tokens") or cap or DEFAULT_MAX_TOKENS
    budget = _thinking_budget(p.get("reasoning_effort"), cap)
    if budget and _loop_without_thinking(messages):
        budget = 0
    extra: dict[str, Any] = {}
    if budget:
        kw["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if max_tokens <= budget:  # the budget is part of max_tokens and must be below it
            max_tokens = budget + ANSWER_ROOM if cap is None else min(budget + ANSWER_ROOM, cap)
        # Temperature and top_p are refused together with thinking.
    else:
        if p.get("temperature") is not None:
            extra["temperature"] = min(1.0, max(0.0, float(p["temperature"])))  # Anthropic's range
        if p.get("top_p") is not None:
            extra["top_p"] = p["top_p"]
    kw["max_tokens"] = int(max_tokens)
    if extra:
        kw["extra_body"] = extra  # this SDK's create() has no sampling parameters
    return kw


def _thinking_budget(effort: Any, cap: int | None) -> int:
    budget = THINKING_BUDGETS.get(effort) if isinstance(effort, str) else None
    if not budget:
        return 0  # None, "off" or an effort this API has no budget for
    if cap is not None and budget >= cap:
        budget = max(MIN_THINKING_BUDGET, cap // 2)
        if budget >= cap:
            return 0  # the model cannot think within its own output cap
    return budget


def _loop_without_thinking(messages: list[dict]) -> bool:
    """True when the step continues a tool-use loop whose assistant message has
    no thinking block (another model wrote it, or thinking was off then).

    A tool-use loop is one assistant turn with one thinking configuration:
    enabling thinking now would be refused (HTTP 400, "expected thinking or
    redacted_thinking"), so this step runs without it."""
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return False
    if any(b["type"] != "tool_result" for b in messages[-1]["content"]):
        return False  # a new user turn: free to think
    first = messages[-2]["content"][0]["type"] if messages[-2]["role"] == "assistant" else ""
    return first not in ("thinking", "redacted_thinking")


def to_wire_messages(request: ModelRequest) -> tuple[str, list[dict]]:
    """The system text and the alternating user/assistant messages."""
    system = [request.system] if request.system else []
    out: list[dict] = []
    for m in request.messages:
        if m.role == "system":
            if m.content:
                system.append(m.content)  # Anthropic has no system role inside messages
            continue
        role = "assistant" if m.role == "assistant" else "user"  # tool results are user turns
        blocks = _assistant_blocks(m, request.model_id) if role == "assistant" else _user_blocks(m)
        if not blocks:
            continue  # an empty message (e.g. a stopped reply); empty text blocks are refused
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # the API requires strict alternation
        else:
            out.append({"role": role, "content": blocks})
    for msg in out:
        if msg["role"] == "user":
            # tool_result blocks must come first in their user message.
            msg["content"].sort(key=lambda b: b["type"] != "tool_result")
    return "\n\n".join(system), out


def _user_blocks(m: Message) -> list[dict]:
    if m.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or ""}
        if m.content:
            block["content"] = m.content
        if m.is_error:
            block["is_error"] = True
        return [block]
    # Images before the text, as Anthropic recommends.
    blocks: list[dict] = [{"type": "image", "source": {"type": "base64", "media_type": i.mime,
                                                       "data": i.data}} for i in m.images]
    if m.content.strip():
        blocks.append({"type": "text", "text": m.content})
    return blocks


def _assistant_blocks(m: Message, model_id: str | None) -> list[dict]:
    blocks: list[dict] = []
    if m.model_id == model_id:
        blocks.extend(b for b in map(_replayed_thinking, m.reasoning_details) if b)
    if m.content.strip():
        blocks.append({"type": "text", "text": m.content})
    for call in m.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name,
                       "input": _tool_input(call.arguments)})
    return blocks


def _replayed_thinking(detail: dict) -> dict | None:
    """The wire block of a stored detail, or None when it is not ours or cannot be replayed."""
    if not isinstance(detail, dict) or detail.get("wire_api") != WIRE_API:
        return None
    if detail.get("type") == "thinking" and detail.get("signature"):
        return {"type": "thinking", "thinking": detail.get("thinking") or "",
                "signature": detail["signature"]}
    if detail.get("type") == "redacted_thinking" and detail.get("data"):
        return {"type": "redacted_thinking", "data": detail["data"]}
    return None  # unsigned thinking is refused by the API


def _tool_input(arguments: str) -> dict:
    # The API wants an object. Arguments that were not a JSON object become {}:
    # the tool's result (an error the loop reported) already tells the model.
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _base_url(p: ProviderConfig) -> str:
    url = (p.base_url or ANTHROPIC_BASE_URL).rstrip("/")
    # The SDK appends /v1/messages itself; a base URL copied with /v1 would 404.
    return url[:-3] if url.endswith("/v1") else url


def wire_request(request: ModelRequest) -> tuple[str, dict]:
    """The endpoint and JSON body stream() posts for this request."""
    return as_url(_base_url(request.provider), "/v1/messages"), as_body(build_params(request))


def count_tokens(request: ModelRequest, timeout: float) -> int:
    """The request's input tokens as Anthropic's counting endpoint counts them."""
    p = request.provider
    kw = build_params(request)
    counted = {k: kw[k] for k in ("model", "messages", "system", "tools", "thinking") if k in kw}
    client = anthropic.Anthropic(base_url=_base_url(p), api_key=sendable_key(p), max_retries=0,
                                 timeout=min(timeout, p.timeout))
    try:
        return int(client.messages.count_tokens(**as_sent(counted, ("messages", "system", "tools"),
                                                          required=("messages",))).input_tokens)
    finally:
        client.close()


# --- response -----------------------------------------------------------------

def stream(request: ModelRequest, control: StreamControl) -> Iterator[StreamEvent]:
    p = request.provider
    base_url = _base_url(p)
    kw = build_params(request)
    errors = _AnthropicErrors(request, base_url)
    # An explicit placeholder keeps the SDK from picking up ANTHROPIC_API_KEY or
    # a profile on disk: the person's settings are the only source of keys.
    client = anthropic.Anthropic(base_url=base_url, api_key=sendable_key(p),
                                 max_retries=0, timeout=client_timeout(p.timeout),
                                 http_client=control.http_client(p.timeout))
    asm = _Assembler(estimate_tokens(json.dumps([kw.get("system", ""), kw["messages"],
                                                  kw.get("tools", "")])))
    # The SDK builds, signs and status-checks the request; the events are
    # decoded here as plain JSON (the SDK's per-event models are slow).
    sent = as_sent(kw, ("messages", "system", "tools"), required=("messages",))
    return relay(client, lambda: client.messages.with_streaming_response.create(**sent),
                 asm=asm, errors=errors, control=control, sse_events=named_events,
                 whole_as_events=_message_as_events,
                 failure_of=lambda event: event.get("error") if event.get("type") == "error" else None,
                 stop_at_complete=True)


def _message_as_events(message: Any) -> Iterator[dict]:
    """A non-streamed message (a server that ignored stream=True) as the events it would stream."""
    if not isinstance(message, dict):
        raise json.JSONDecodeError("not a message object", json.dumps(message)[:80], 0)
    if message.get("type") == "error":
        yield message
        return
    yield {"type": "message_start", "message": {**message, "content": []}}
    for i, block in enumerate(message.get("content") or ()):
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        start, delta = dict(block), None
        if kind == "text":
            start["text"], delta = "", {"type": "text_delta", "text": block.get("text") or ""}
        elif kind == "thinking":
            start["thinking"], start["signature"] = "", block.get("signature") or ""
            delta = {"type": "thinking_delta", "thinking": block.get("thinking") or ""}
        elif kind == "tool_use":
            start["input"] = {}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input") or {})}
        yield {"type": "content_block_start", "index": i, "content_block": start}
        if delta:
            yield {"type": "content_block_delta", "index": i, "delta": delta}
        yield {"type": "content_block_stop", "index": i}
    yield {"type": "message_delta", "delta": {"stop_reason": message.get("stop_reason")}}
    yield {"type": "message_stop"}


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


class _Assembler:
    """Turns decoded events into internal events; keeps what the end of the step needs."""

    def __init__(self, input_estimate: int):
        self.input_estimate = input_estimate
        self.blocks: dict[int, dict] = {}  # content block index → its state
        self.tool_calls = 0  # ToolCallStart indexes count tool calls, not content blocks
        self.usage: dict = {}
        self.stop_reason: str | None = None
        self.complete = False
        self.out_chars = 0

    def feed(self, event: dict) -> list[StreamEvent]:
        kind = event.get("type")
        out: list[StreamEvent] = []
        if kind == "message_start":
            self._usage(as_dict(event.get("message")).get("usage"))
        elif kind == "content_block_start":
            self._start(event.get("index"), as_dict(event.get("content_block")), out)
        elif kind == "content_block_delta":
            self._delta(event.get("index"), as_dict(event.get("delta")), out)
        elif kind == "content_block_stop":
            self._stop(event.get("index"), out)
        elif kind == "message_delta":
            self.stop_reason = as_dict(event.get("delta")).get("stop_reason") or self.stop_reason
            self._usage(event.get("usage"))  # cumulative; the last one counts
        elif kind == "message_stop":
            for index in list(self.blocks):
                self._stop(index, out)  # a server that never closed a block
            self.complete = True
        return out  # ping and unknown (newer) events carry nothing for us

    def _usage(self, usage: Any) -> None:
        self.usage.update({k: v for k, v in as_dict(usage).items() if v is not None})

    def _start(self, index: Any, block: dict, out: list[StreamEvent]) -> None:
        kind = block.get("type")
        state: dict[str, Any] = {"type": kind}
        self.blocks[index] = state
        if kind == "thinking":
            state["thinking"], state["signature"] = [], block.get("signature") or ""
            self._delta(index, {"type": "thinking_delta", "thinking": block.get("thinking")}, out)
        elif kind == "redacted_thinking":
            state["data"] = block.get("data") or ""
        elif kind == "text":
            self._delta(index, {"type": "text_delta", "text": block.get("text")}, out)
        elif kind == "tool_use":
            state["call"] = self.tool_calls
            self.tool_calls += 1
            out.append(ToolCallStart(state["call"], block.get("id") or "", block.get("name") or ""))
            if block.get("input"):  # some servers put the whole input in the start
                self._delta(index, {"type": "input_json_delta",
                                    "partial_json": json.dumps(block["input"])}, out)

    def _delta(self, index: Any, delta: dict, out: list[StreamEvent]) -> None:
        state = self.blocks.get(index) or {}
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str) and delta["text"]:
            self.out_chars += len(delta["text"])
            out.append(TextDelta(delta["text"]))
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str) and delta["thinking"]:
            self.out_chars += len(delta["thinking"])
            state.setdefault("thinking", []).append(delta["thinking"])
            out.append(ReasoningDelta(delta["thinking"]))
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            state["signature"] = state.get("signature", "") + delta["signature"]
        elif kind == "input_json_delta" and "call" in state:
            text = delta.get("partial_json")
            if isinstance(text, str) and text:
                self.out_chars += len(text)
                out.append(ToolCallDelta(state["call"], text))

    def _stop(self, index: Any, out: list[StreamEvent]) -> None:
        state = self.blocks.pop(index, None) or {}
        if state.get("type") == "thinking":
            out.append(ReasoningDetail({"wire_api": WIRE_API, "type": "thinking",
                                        "thinking": "".join(state.get("thinking") or ()),
                                        "signature": state.get("signature") or ""}))
        elif state.get("type") == "redacted_thinking":
            out.append(ReasoningDetail({"wire_api": WIRE_API, "type": "redacted_thinking",
                                        "data": state.get("data") or ""}))

    def finish(self) -> list[StreamEvent]:
        u = self.usage
        if "input_tokens" in u or "output_tokens" in u:
            cached = _int(u.get("cache_read_input_tokens"))
            # Input counts every prompt token, cached or not, as Chat Completions'
            # prompt_tokens does; cached_tokens is the part read from the cache.
            usage = Usage(input_tokens=_int(u.get("input_tokens")) + cached
                          + _int(u.get("cache_creation_input_tokens")),
                          output_tokens=_int(u.get("output_tokens")),
                          reasoning_tokens=_int(as_dict(u.get("output_tokens_details")).get("thinking_tokens")),
                          cached_tokens=cached)
        else:
            usage = Usage(input_tokens=self.input_estimate,
                          output_tokens=estimate_tokens(self.out_chars), estimated=True)
        reason = _STOP_REASONS.get(self.stop_reason or "", "stop" if self.stop_reason else None)
        if self.tool_calls and reason in (None, "stop"):
            reason = "tool_calls"
        return [usage, StepEnd(reason)]


# --- errors -------------------------------------------------------------------

class _AnthropicErrors(ErrorMapper):
    """Chat Completions' sentences, with Anthropic's exceptions, error events,
    `overloaded_error` (HTTP 529) and base-URL advice."""

    sdk = anthropic
    wire = "Anthropic Messages"
    expected = "an Anthropic-compatible API"

    def in_stream(self, error: Any) -> ProviderError:
        """An `event: error` after the stream started (e.g. overloaded_error)."""
        body = {"type": "error", "error": error if isinstance(error, dict) else {"message": str(error)}}
        status = _ERROR_STATUS.get(as_dict(body["error"]).get("type"), 500)
        return self.status(status, body, {}, mid_stream=True)

    def status(self, status: int, body: Any, headers: Any, mid_stream: bool = False) -> ProviderError:
        kind = as_dict(as_dict(body).get("error")).get("type")
        where = " mid-reply" if mid_stream else ""
        if status == 529 or kind == "overloaded_error":
            return ProviderError(f"{self.name} is overloaded{where} (HTTP {status}). "
                                 f"Try again in a moment.", status=status, retryable=True,
                                 retry_after=retry_after(headers))
        if status == 404 and "model" not in self.detail(body).lower():
            return ProviderError(f"{self.name} answered HTTP 404 Not Found for {self.base_url}/v1/messages. "
                                 f"Check the base URL in Settings → Providers (the root of the API, "
                                 f"without /v1).", status=status)
        return super().status(status, body, headers, mid_stream)

    def html(self) -> ProviderError:
        return BadResponse(f"{self.name} answered with a web page instead of an Anthropic Messages "
                           f"stream. Check the base URL {self.base_url} (the root of the API, "
                           f"without /v1).")
