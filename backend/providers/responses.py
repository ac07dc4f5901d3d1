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

from backend.core import sentences
from backend.core.errors import BadResponse, ContextTooLong, ProviderError, RateLimited
from backend.core.types import (
    Message,
    ModelRequest,
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
from .error_map import CONTEXT_PATTERNS, ErrorMapper
from .relay import as_body, as_sent, as_url, relay
from .wire import as_dict, client_timeout, data_events, estimate_tokens, openai_base_url, sendable_key

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


def wire_request(request: ModelRequest) -> tuple[str, dict]:
    """The endpoint and JSON body stream() posts for this request."""
    return as_url(openai_base_url(request.provider), "/responses"), as_body(build_params(request))


# --- response -----------------------------------------------------------------

def stream(request: ModelRequest, control: StreamControl) -> Iterator[StreamEvent]:
    p = request.provider
    base_url = openai_base_url(p)
    kw = build_params(request)
    errors = _ResponsesErrors(request, base_url)
    client = openai.OpenAI(base_url=base_url, api_key=sendable_key(p), max_retries=0,
                           timeout=client_timeout(p.timeout), http_client=control.http_client(p.timeout))
    asm = _Assembler(estimate_tokens(len(json.dumps(kw["input"])) + len(kw.get("instructions", ""))
                                      + len(json.dumps(kw.get("tools", "")))))
    # As in chat_completions: the SDK builds, signs and checks the request; the
    # events are decoded here as plain JSON, far cheaper than its model objects.
    # (Its responses.stream() helper would also refuse gateways whose ending
    # events rename items: "Completed output item identity changed".)
    sent = as_sent(kw, ("input", "tools"))
    return relay(client, lambda: client.responses.with_streaming_response.create(**sent),
                 asm=asm, errors=errors, control=control, sse_events=data_events,
                 whole_as_events=_response_as_events, failure_of=_failure,
                 stop_at_complete=True)  # response.completed is the last event


def _failure(event: dict) -> dict | None:
    """The error object of an event that ends the response with a failure."""
    kind = event.get("type")
    if kind == "response.failed":
        err = as_dict(as_dict(event.get("response")).get("error"))
        return err or {"message": "the response failed without details"}
    if kind == "error":
        return event
    if kind is None and event.get("error"):
        return event["error"] if isinstance(event["error"], dict) else {"message": str(event["error"])}
    return None


def _response_as_events(data: Any) -> Iterator[dict]:
    """A whole (non-streamed) response reshaped as the events that end its items."""
    data = as_dict(data)
    if data.get("error") and data.get("status") in (None, "failed"):
        yield {"type": "response.failed", "response": {**data, "error": as_dict(data["error"]) or
                                                        {"message": str(data["error"])}}}
        return
    for index, item in enumerate(data.get("output") or ()):
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
    status = data.get("status")
    yield {"type": "response.incomplete" if status == "incomplete" else "response.completed",
           "response": data}


class _Item:
    """One output item: what was emitted of each of its parts so far."""

    __slots__ = ("announced", "parts", "call", "detail")

    def __init__(self) -> None:
        self.announced = False  # its output_item.added came
        self.parts: dict[tuple[str, int], list[str]] = {}  # (channel, part index) -> pieces emitted
        self.call: int | None = None  # the ToolCallStart index of a function call
        self.detail = False  # its ReasoningDetail was emitted


# The events that carry a part's text piece by piece, and those that carry it
# whole: (channel, the field holding the part's index, the text field).
_DELTAS = {"response.output_text.delta": ("text", "content_index", "delta"),
           "response.refusal.delta": ("text", "content_index", "delta"),
           "response.reasoning_summary_text.delta": ("summary", "summary_index", "delta"),
           "response.reasoning_text.delta": ("reasoning", "content_index", "delta"),
           "response.function_call_arguments.delta": ("arguments", "", "delta")}
_WHOLE = {"response.output_text.done": ("text", "content_index", "text"),
          "response.refusal.done": ("text", "content_index", "refusal"),
          "response.content_part.done": ("text", "content_index", "part"),
          "response.reasoning_summary_text.done": ("summary", "summary_index", "text"),
          "response.reasoning_summary_part.done": ("summary", "summary_index", "part"),
          "response.reasoning_text.done": ("reasoning", "content_index", "text"),
          "response.function_call_arguments.done": ("arguments", "", "arguments")}
_REASONING = ("summary", "reasoning")
_KIND = {"text": "message", "summary": "reasoning", "reasoning": "reasoning", "arguments": "function_call"}


class _Assembler:
    """Turns decoded events into StreamEvents; keeps what the end of the step needs.

    An event finds its item by item id, else by output index (else, with
    neither, the latest item of its kind), so interleaved items work. Ids are
    not trusted to say what was already shown: gateways name an item by
    other ids in its `.done` events than in its deltas. An event that carries
    a part's whole text (`.done`, or the item in output_item.done) is
    compared with what that part already emitted, and only the rest is
    emitted: the missing end when the emitted text begins it, all of it when
    nothing came, nothing when they disagree (what was shown stands).
    """

    def __init__(self, input_estimate: int):
        self.input_estimate = input_estimate
        self.response: dict | None = None
        self.out_chars = 0
        self.items: list[_Item] = []
        self.by_id: dict[str, _Item] = {}
        self.at: dict[int, _Item] = {}  # output_index -> the item there now
        self.last: dict[str, _Item] = {}  # kind -> the latest item of that kind
        self.n_calls = 0

    @property
    def complete(self) -> bool:
        return self.response is not None

    def feed(self, ev: dict) -> list[StreamEvent]:
        kind = ev.get("type")
        out: list[StreamEvent] = []
        if kind in _DELTAS or kind in _WHOLE:
            channel, part_field, field = _DELTAS.get(kind) or _WHOLE[kind]
            it = self._find(ev.get("item_id"), ev.get("output_index"), _KIND[channel])
            part = ev.get(part_field) if part_field else 0
            text = ev.get(field)
            if isinstance(text, dict):  # a whole part object
                text = text.get("text") or text.get("refusal")
            if kind in _DELTAS:
                self._emit(it, channel, part, text, out)
            else:
                self._settle(it, channel, part, text, out)
        elif kind == "response.output_item.added":
            self._added(as_dict(ev.get("item")), ev.get("output_index"), out)
        elif kind == "response.output_item.done":
            self._done(as_dict(ev.get("item")), ev.get("output_index"), out)
        elif kind in ("response.completed", "response.incomplete"):
            self.response = as_dict(ev.get("response"))
            # It repeats the items the events built; read only from a server
            # that sent nothing else, so nothing is shown twice.
            if not self.items:
                for index, item in enumerate(self.response.get("output") or ()):
                    self._done(as_dict(item), index, out)
        return out

    # --- items --------------------------------------------------------------

    def _find(self, item_id: Any, index: Any, kind: str) -> _Item:
        it = self.by_id.get(item_id) if isinstance(item_id, str) else None
        if it is None:
            it = self.at.get(index) if isinstance(index, int) else self.last.get(kind)
        if it is None:
            it = self._new(index, kind)
        if isinstance(item_id, str):
            self.by_id.setdefault(item_id, it)
        return it

    def _new(self, index: Any, kind: Any) -> _Item:
        it = _Item()
        self.items.append(it)
        if isinstance(index, int):
            self.at[index] = it
        if isinstance(kind, str):
            self.last[kind] = it
        return it

    def _added(self, item: dict, index: Any, out: list[StreamEvent]) -> None:
        kind, item_id = item.get("type"), item.get("id")
        it = self.at.get(index) if isinstance(index, int) else self.by_id.get(item_id)
        # An item is added once: an added event for another id is a new item at
        # that position, unless deltas came first and opened it unannounced.
        if it is None or (it.announced and self.by_id.get(item_id) is not it):
            it = self._new(index, kind)
        if isinstance(item_id, str):
            self.by_id[item_id] = it  # the id names the item announced last with it
        it.announced = True
        if kind == "function_call":
            self._start_call(it, item, out)
            self._settle(it, "arguments", 0, item.get("arguments"), out)

    def _done(self, item: dict, index: Any, out: list[StreamEvent]) -> None:
        kind = item.get("type")
        it = self._find(item.get("id"), index, kind if isinstance(kind, str) else "")
        if kind == "message":
            for i, c in enumerate(item.get("content") or ()):
                if isinstance(c, dict):
                    self._settle(it, "text", i, c.get("text") or c.get("refusal"), out)
        elif kind == "reasoning":
            summary = [s.get("text") if isinstance(s, dict) else None for s in item.get("summary") or ()]
            content = [c.get("text") if isinstance(c, dict) else None for c in item.get("content") or ()]
            # The summary, or else the raw reasoning; whichever was streamed.
            streamed = {channel for channel, _ in it.parts}
            channel = "reasoning" if "reasoning" in streamed or ("summary" not in streamed
                                                                 and not any(summary)) else "summary"
            for i, text in enumerate(content if channel == "reasoning" else summary):
                self._settle(it, channel, i, text, out)
            if item.get("encrypted_content") and not it.detail:
                it.detail = True
                out.append(ReasoningDetail({"wire_api": WIRE_API, "type": "reasoning", "id": item.get("id"),
                                            "encrypted_content": item["encrypted_content"],
                                            "summary": [s for s in item.get("summary") or ()
                                                        if isinstance(s, dict)]}))
        elif kind == "function_call":
            self._start_call(it, item, out)
            self._settle(it, "arguments", 0, item.get("arguments"), out)

    def _settle(self, it: _Item, channel: str, part: Any, whole: Any, out: list[StreamEvent]) -> None:
        """A part's whole text: emit what of it was not emitted yet."""
        if not isinstance(whole, str):
            return
        sent = "".join(it.parts.get((channel, part if isinstance(part, int) else 0), ()))
        if whole.startswith(sent):
            self._emit(it, channel, part, whole[len(sent):], out)

    def _emit(self, it: _Item, channel: str, part: Any, text: Any, out: list[StreamEvent]) -> None:
        if not isinstance(text, str) or not text:
            return
        key = (channel, part if isinstance(part, int) else 0)
        pieces, sep = it.parts.get(key), ""
        if pieces is None:
            # Each reasoning part is a paragraph of its own.
            if channel in _REASONING and any(k[0] in _REASONING for k in it.parts):
                sep = "\n\n"
            pieces = it.parts[key] = []
        pieces.append(text)  # joined only when a whole part comes to compare
        self.out_chars += len(text)
        if channel == "text":
            out.append(TextDelta(text))
        elif channel == "arguments":
            if it.call is None:  # arguments for a call that was never announced
                self._start_call(it, {}, out)
            out.append(ToolCallDelta(it.call, text))
        else:
            out.append(ReasoningDelta(sep + text))

    def _start_call(self, it: _Item, item: dict, out: list[StreamEvent]) -> None:
        if it.call is not None:
            return
        it.call = self.n_calls
        self.n_calls += 1
        call_id = item.get("call_id") or item.get("id") or f"call_{uuid.uuid4().hex[:24]}"
        out.append(ToolCallStart(it.call, call_id, item.get("name") or ""))

    # --- the end ------------------------------------------------------------

    def finish(self) -> list[StreamEvent]:
        r = self.response or {}
        u = r.get("usage")
        if isinstance(u, dict):
            usage = Usage(input_tokens=u.get("input_tokens") or 0, output_tokens=u.get("output_tokens") or 0,
                          reasoning_tokens=as_dict(u.get("output_tokens_details")).get("reasoning_tokens") or 0,
                          cached_tokens=as_dict(u.get("input_tokens_details")).get("cached_tokens") or 0)
        else:  # compatible servers sometimes leave it out
            usage = Usage(input_tokens=self.input_estimate, output_tokens=estimate_tokens(self.out_chars),
                          estimated=True)
        if r.get("status") == "incomplete":
            # Cut short: tool calls may be truncated, so never "tool_calls".
            why = as_dict(r.get("incomplete_details")).get("reason")
            reason = "content_filter" if why == "content_filter" else "length"
        else:
            reason = "tool_calls" if self.n_calls else "stop"
        return [usage, StepEnd(reason)]


# --- errors -------------------------------------------------------------------

class _ResponsesErrors(ErrorMapper):
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
        body = as_dict(error) or {"message": str(error)}
        code = body.get("code")
        if isinstance(code, int) and 400 <= code <= 599:
            return self.status(code, body, {}, mid_stream=True)  # compatible servers
        code = str(code or "")
        detail = self.scrub(self.detail(body))
        low = detail.lower()
        said = sentences.said(detail)
        name = self.name
        if code == "insufficient_quota" or "quota" in low:
            return RateLimited(f"{name} says the account is out of quota{said} "
                               f"Check the plan and billing with the provider.")
        if code == "rate_limit_exceeded" or "rate limit" in low:
            return RateLimited(f"{name} hit a rate limit mid-reply{said} Wait a moment and try again.",
                               retryable=True)
        if any(k in low or k in code for k in CONTEXT_PATTERNS):
            return ContextTooLong(f"The conversation is too long for {self.model} on {name}. "
                                  f"Start a new chat or shorten the conversation.")
        if code in ("server_error", "vector_store_timeout"):
            return ProviderError(f"{name} had a server error mid-reply{said} Try again.", retryable=True)
        return ProviderError(f"{name} reported an error mid-reply{f' ({code})' if code else ''}{said}")
