"""OpenAI Chat Completions (and every server that copies it) through the
official `openai` SDK.

`stream(request, control)` yields the internal StreamEvents; see
backend/providers/__init__.py for the order and the close() behaviour.
No retries here (max_retries=0): the turn runner retries before the first
token, where it can also fall back to another model.
"""
from __future__ import annotations

import json
import uuid
from typing import Any, Iterator

import openai

from backend.core.types import (
    Message,
    ModelRequest,
    ReasoningDelta,
    StepEnd,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)

from . import StreamControl
from .error_map import ErrorMapper
from .relay import as_body, as_sent, as_url, relay
from .wire import as_dict, client_timeout, data_events, estimate_tokens, openai_base_url, sendable_key

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


def wire_request(request: ModelRequest) -> tuple[str, dict]:
    """The endpoint and JSON body stream() posts for this request."""
    return as_url(openai_base_url(request.provider), "/chat/completions"), as_body(build_params(request))


# --- response -----------------------------------------------------------------

def stream(request: ModelRequest, control: StreamControl) -> Iterator[StreamEvent]:
    p = request.provider
    base_url = openai_base_url(p)
    kw = build_params(request)
    errors = ErrorMapper(request, base_url)
    client = openai.OpenAI(base_url=base_url, api_key=sendable_key(p), max_retries=0,
                           timeout=client_timeout(p.timeout), http_client=control.http_client(p.timeout))
    asm = _Assembler(estimate_tokens(json.dumps(kw["messages"]) + json.dumps(kw.get("tools", ""))))
    # The SDK builds the request, signs it and raises typed status errors; the
    # chunks are decoded as plain JSON, because the SDK's per-chunk model
    # objects cost many times the relay's own CPU (docs/BENCHMARKS.md).
    sent = as_sent(kw, ("messages", "tools"), required=("messages",))
    return relay(client, lambda: client.chat.completions.with_streaming_response.create(**sent),
                 asm=asm, errors=errors, control=control, sse_events=data_events,
                 whole_as_events=lambda data: iter([_completion_as_chunk(data)]),
                 failure_of=lambda chunk: chunk.get("error") or None,
                 stop_at_complete=False)  # the usage chunk follows finish_reason


def _completion_as_chunk(data: dict) -> dict:
    """A non-streamed chat.completion reshaped as one chunk with the whole delta."""
    choices = []
    for c in data.get("choices") or []:
        msg = dict(c.get("message") or {})
        for call_index, call in enumerate(msg.get("tool_calls") or []):
            call.setdefault("index", call_index)
        choices.append({"index": c.get("index", 0), "delta": msg, "finish_reason": c.get("finish_reason")})
    return {**data, "choices": choices, "object": "chat.completion.chunk"}


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
            self.usage = as_dict(chunk["usage"])  # some servers repeat it; the last one counts
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
        fn = as_dict(tc.get("function"))
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
            reasoning = as_dict(u.get("completion_tokens_details")).get("reasoning_tokens")
            out.append(Usage(input_tokens=u.get("prompt_tokens") or 0,
                             output_tokens=u.get("completion_tokens") or 0,
                             reasoning_tokens=reasoning or 0,
                             cached_tokens=as_dict(u.get("prompt_tokens_details")).get("cached_tokens") or 0))
        else:
            out.append(Usage(input_tokens=self.input_estimate,
                             output_tokens=estimate_tokens(self.out_chars), estimated=True))
        reason = self.finish_reason
        if reason == "function_call":
            reason = "tool_calls"
        if self.calls and reason in (None, "stop"):
            reason = "tool_calls"  # Ollama and some vLLM versions say "stop"
        out.append(StepEnd(reason))
        return out
