"""OpenAI Responses API (POST /v1/responses) through the official `openai` SDK.

`stream(request, control)` yields the internal StreamEvents; see
backend/providers/__init__.py for the order and the close() behaviour.

Requests are stateless (`store: false`): the whole conversation is sent each
time, and the model's reasoning is carried between turns as its encrypted
reasoning items, stored by the turn as ReasoningDetail

    {"wire_api": "responses", "type": "reasoning", "id": "rs_…",
     "encrypted_content": "…", "summary": [{"type": "summary_text", "text": "…"}]}

and replayed only to the catalog model that wrote them (OpenAI cannot decrypt
another model's items, and other APIs cannot read them at all).
"""
from __future__ import annotations

import json
import uuid
from typing import Any, Iterator

import openai

from backend.core.errors import BadResponse, ContextTooLong, ProviderError, RateLimited
from backend.core.types import (Message, ModelRequest, ReasoningDelta, ReasoningDetail, StepEnd,
                                StreamEvent, TextDelta, ToolCallDelta, ToolCallStart, Usage)

from . import StreamControl
from .chat_completions import (_CONTEXT_PATTERNS, _base_url, _dict, _ErrorMapper,
                               _estimate_tokens, _sse_chunks, _timeout, sendable_key)
from .relay import as_sent, relay

WIRE_API = "responses"
ENCRYPTED_REASONING = "reasoning.encrypted_content"


# --- request ----------------------------------------------------------------

def to_wire_input(request: ModelRequest) -> list[dict]:
    """The `input` items of a conversation (the system prompt goes in `instructions`)."""
    out: list[dict] = []
    for m in request.messages:
        if m.role == "assistant":
            out.extend(_assistant_items(m, request))
        elif m.role == "tool":
            out.append({"type": "function_call_output", "call_id": m.tool_call_id or "",
                        "output": m.content})
        elif m.role == "user":
            content: list[dict] = []
            if m.content or not m.images:
                content.append({"type": "input_text", "text": m.content})
            content.extend({"type": "input_image", "image_url": f"data:{i.mime};base64,{i.data}",
                            "detail": "auto"} for i in m.images)
            out.append({"role": "user", "content": content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def _assistant_items(m: Message, request: ModelRequest) -> list[dict]:
    items: list[dict] = []
    if m.content:
        items.append({"role": "assistant", "content": m.content})
    items.extend({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments or "{}"}
                 for c in m.tool_calls)
    # A reasoning item must be followed by the output it led to, or the API
    # rejects the input; plain reasoning text is never sent back.
    if items:
        items[:0] = replayable_reasoning(m, request)
    return items


def replayable_reasoning(m: Message, request: ModelRequest) -> list[dict]:
    """The stored reasoning items of `m` that this request's model may read back."""
    if request.model_id is None or m.model_id != request.model_id:
        return []
    out = []
    for d in m.reasoning_details:
        if d.get("wire_api") == WIRE_API and d.get("type") == "reasoning" and d.get("encrypted_content"):
            item = {"type": "reasoning", "id": d.get("id"), "summary": list(d.get("summary") or []),
                    "encrypted_content": d["encrypted_content"]}
            out.append({k: v for k, v in item.items() if v is not None})
    return out


def build_params(request: ModelRequest) -> dict:
    """The keyword arguments of responses.create for this request."""
    kw: dict[str, Any] = {"model": request.model, "input": to_wire_input(request), "stream": True,
                          # Nothing is kept on the provider's side; history lives here.
                          "store": False}
    if request.system:
        kw["instructions"] = request.system
    if request.tools:
        # strict defaults to true on this API, which rejects most ordinary schemas.
        kw["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                        "parameters": t.parameters, "strict": False} for t in request.tools]
    p = request.params or {}
    effort = p.get("reasoning_effort")
    if effort is not None and effort != "off":
        kw["reasoning"] = {"effort": effort, "summary": "auto"}
        # Only asked for with reasoning: non-reasoning models reject it
        # ("Encrypted content is not supported with this model").
        kw["include"] = [ENCRYPTED_REASONING]
    else:
        # OpenAI's reasoning models reject sampling parameters.
        for name in ("temperature", "top_p"):
            if p.get(name) is not None:
                kw[name] = p[name]
    if p.get("max_tokens") is not None:
        kw["max_output_tokens"] = p["max_tokens"]
    return kw


# --- response -----------------------------------------------------------------

def stream(request: ModelRequest, control: StreamControl) -> Iterator[StreamEvent]:
    p = request.provider
    base_url = _base_url(p)
    kw = build_params(request)
    errors = _ResponsesErrors(request, base_url)
    client = openai.OpenAI(base_url=base_url, api_key=sendable_key(p), max_retries=0,
                           timeout=_timeout(p.timeout), http_client=control.http_client(p.timeout))
    asm = _Assembler(_estimate_tokens(len(json.dumps(kw["input"])) + len(kw.get("instructions", ""))
                                      + len(json.dumps(kw.get("tools", "")))))
    # As in chat_completions: the SDK builds, signs and checks the request; the
    # events are decoded here as plain JSON, far cheaper than its model objects.
    sent = as_sent(kw, ("input", "tools"))
    return relay(client, lambda: client.responses.with_streaming_response.create(**sent),
                 asm=asm, errors=errors, control=control, sse_events=_sse_chunks,
                 whole_as_events=_response_as_events, failure_of=_failure,
                 stop_at_complete=True)  # response.completed is the last event


def _failure(event: dict) -> dict | None:
    """The error object of an event that ends the response with a failure."""
    kind = event.get("type")
    if kind == "response.failed":
        err = _dict(_dict(event.get("response")).get("error"))
        return err or {"message": "the response failed without details"}
    if kind == "error":
        return event
    if kind is None and event.get("error"):
        return event["error"] if isinstance(event["error"], dict) else {"message": str(event["error"])}
    return None


def _response_as_events(data: Any) -> Iterator[dict]:
    """A whole (non-streamed) response reshaped as the events that end its items."""
    data = _dict(data)
    if data.get("error") and data.get("status") in (None, "failed"):
        yield {"type": "response.failed", "response": {**data, "error": _dict(data["error"]) or
                                                        {"message": str(data["error"])}}}
        return
    for index, item in enumerate(data.get("output") or ()):
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    status = data.get("status")
    yield {"type": "response.incomplete" if status == "incomplete" else "response.completed",
           "response": data}


class _Assembler:
    """Turns decoded events into StreamEvents; keeps what the end of the step needs.

    Items are tracked by id (or output index, for servers that send no ids),
    so interleaved items work. Servers that only send the `.done` events of
    an item (or only the final response) still yield the item's content.
    """

    def __init__(self, input_estimate: int):
        self.input_estimate = input_estimate
        self.response: dict | None = None
        self.out_chars = 0
        self.items: dict[str, dict] = {}  # key -> state
        self.by_index: dict[int, str] = {}  # output_index -> key
        self.n_calls = 0

    @property
    def complete(self) -> bool:
        return self.response is not None

    def feed(self, ev: dict) -> list[StreamEvent]:
        kind = ev.get("type")
        out: list[StreamEvent] = []
        if kind == "response.output_item.added":
            self._added(_dict(ev.get("item")), ev.get("output_index"), out)
        elif kind == "response.output_item.done":
            self._done(_dict(ev.get("item")), ev.get("output_index"), out)
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            self._text(self._state(ev), ev.get("delta"), out, TextDelta)
        elif kind == "response.reasoning_summary_text.delta":
            st = self._state(ev)
            part = ev.get("summary_index")
            # Each summary part is a paragraph of its own.
            sep = "\n\n" if st["emitted"] and part != st.get("part") else ""
            st["part"] = part
            self._text(st, ev.get("delta"), out, ReasoningDelta, sep)
        elif kind == "response.reasoning_text.delta":
            self._text(self._state(ev), ev.get("delta"), out, ReasoningDelta)
        elif kind == "response.function_call_arguments.delta":
            self._arguments(self._state(ev, "function_call"), ev.get("delta"), out)
        elif kind == "response.function_call_arguments.done":
            st = self._state(ev, "function_call")
            if not st["emitted"]:
                self._arguments(st, ev.get("arguments"), out)
        elif kind in ("response.completed", "response.incomplete"):
            self.response = _dict(ev.get("response"))
            if not self.items:  # a server that sent only the final response
                for index, item in enumerate(self.response.get("output") or ()):
                    self._done(_dict(item), index, out)
        return out

    # --- items --------------------------------------------------------------

    def _state(self, ev: dict, kind: str = "") -> dict:
        key = ev.get("item_id")
        if key not in self.items:
            index = ev.get("output_index")
            key = self.by_index.get(index) if isinstance(index, int) else None
            if key is None:
                return self._register({"type": kind, "id": ev.get("item_id")}, index)
        return self.items[key]

    def _register(self, item: dict, index: Any) -> dict:
        key = item.get("id") or f"#{index}"
        st = self.items.get(key)
        if st is None:
            st = self.items[key] = {"kind": item.get("type"), "emitted": False, "call": None}
            if isinstance(index, int):
                self.by_index.setdefault(index, key)
        return st

    def _added(self, item: dict, index: Any, out: list[StreamEvent]) -> None:
        st = self._register(item, index)
        if item.get("type") == "function_call":
            self._start_call(st, item, out)
            if item.get("arguments"):
                self._arguments(st, item["arguments"], out)

    def _done(self, item: dict, index: Any, out: list[StreamEvent]) -> None:
        st = self._register(item, index)
        kind = item.get("type")
        if kind == "message" and not st["emitted"]:
            text = "".join(c.get("text") or c.get("refusal") or "" for c in item.get("content") or ()
                           if isinstance(c, dict))
            self._text(st, text, out, TextDelta)
        elif kind == "reasoning":
            if not st["emitted"]:
                parts = [s.get("text") for s in item.get("summary") or () if isinstance(s, dict)]
                if not any(parts):
                    parts = [c.get("text") for c in item.get("content") or () if isinstance(c, dict)]
                self._text(st, "\n\n".join(t for t in parts if t), out, ReasoningDelta)
            if item.get("encrypted_content"):
                out.append(ReasoningDetail({"wire_api": WIRE_API, "type": "reasoning", "id": item.get("id"),
                                            "encrypted_content": item["encrypted_content"],
                                            "summary": [s for s in item.get("summary") or ()
                                                        if isinstance(s, dict)]}))
        elif kind == "function_call":
            self._start_call(st, item, out)
            if not st["emitted"]:
                self._arguments(st, item.get("arguments"), out)

    def _text(self, st: dict, text: Any, out: list[StreamEvent], event: type, sep: str = "") -> None:
        if isinstance(text, str) and text:
            st["emitted"] = True
            self.out_chars += len(text)
            out.append(event(sep + text))

    def _start_call(self, st: dict, item: dict, out: list[StreamEvent]) -> None:
        if st["call"] is not None:
            return
        st["call"] = self.n_calls
        self.n_calls += 1
        call_id = item.get("call_id") or item.get("id") or f"call_{uuid.uuid4().hex[:24]}"
        out.append(ToolCallStart(st["call"], call_id, item.get("name") or ""))

    def _arguments(self, st: dict, args: Any, out: list[StreamEvent]) -> None:
        if not isinstance(args, str) or not args:
            return
        if st["call"] is None:  # arguments for a call that was never announced
            self._start_call(st, {}, out)
        st["emitted"] = True
        self.out_chars += len(args)
        out.append(ToolCallDelta(st["call"], args))

    # --- the end ------------------------------------------------------------

    def finish(self) -> list[StreamEvent]:
        r = self.response or {}
        u = r.get("usage")
        if isinstance(u, dict):
            usage = Usage(input_tokens=u.get("input_tokens") or 0, output_tokens=u.get("output_tokens") or 0,
                          reasoning_tokens=_dict(u.get("output_tokens_details")).get("reasoning_tokens") or 0,
                          cached_tokens=_dict(u.get("input_tokens_details")).get("cached_tokens") or 0)
        else:  # compatible servers sometimes leave it out
            usage = Usage(input_tokens=self.input_estimate, output_tokens=_estimate_tokens(self.out_chars),
                          estimated=True)
        if r.get("status") == "incomplete":
            # Cut short: tool calls may be truncated, so never "tool_calls".
            why = _dict(r.get("incomplete_details")).get("reason")
            reason = "content_filter" if why == "content_filter" else "length"
        else:
            reason = "tool_calls" if self.n_calls else "stop"
        return [usage, StepEnd(reason)]


# --- errors -------------------------------------------------------------------

class _ResponsesErrors(_ErrorMapper):
    """The Chat Completions mapper, with the Responses API's own words and
    its in-stream failures (`response.failed`, `error` events)."""

    wire = "Responses API"
    expected = "an API that offers /responses"

    def html(self) -> ProviderError:
        return BadResponse(f"{self.name} answered with a web page instead of a Responses API stream. "
                           f"Check the base URL {self.base_url} (it usually ends in /v1).")

    def status(self, status: int, body: Any, headers: Any, mid_stream: bool = False) -> ProviderError:
        err = super().status(status, body, headers, mid_stream)
        if status == 404 and "/chat/completions" in err.message:
            # The usual cause: an OpenAI-compatible server without the Responses API.
            return ProviderError(f"{self.name} answered HTTP 404 Not Found for {self.base_url}/responses. "
                                 f"Check the base URL in Settings → Providers, or use the Chat "
                                 f"Completions API for this model if the server does not offer Responses.",
                                 status=status)
        return err

    def in_stream(self, error: Any) -> ProviderError:
        body = _dict(error) or {"message": str(error)}
        code = body.get("code")
        if isinstance(code, int) and 400 <= code <= 599:
            return self.status(code, body, {}, mid_stream=True)  # compatible servers
        code = str(code or "")
        detail = self.scrub(self.detail(body))
        low = detail.lower()
        said = f": {detail.rstrip('.')}." if detail else "."
        name = self.name
        if code == "insufficient_quota" or "quota" in low:
            return RateLimited(f"{name} says the account is out of quota{said} "
                               f"Check the plan and billing with the provider.")
        if code == "rate_limit_exceeded" or "rate limit" in low:
            return RateLimited(f"{name} hit a rate limit mid-reply{said} Wait a moment and try again.",
                               retryable=True)
        if any(k in low or k in code for k in _CONTEXT_PATTERNS):
            return ContextTooLong(f"The conversation is too long for {self.model} on {name}. "
                                  f"Start a new chat or shorten the conversation.")
        if code in ("server_error", "vector_store_timeout"):
            return ProviderError(f"{name} had a server error mid-reply{said} Try again.", retryable=True)
        return ProviderError(f"{name} reported an error mid-reply{f' ({code})' if code else ''}{said}")
