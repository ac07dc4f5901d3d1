"""Plays a script in Anthropic's Messages format (POST /v1/messages).

The same steps as the Chat Completions player, as Anthropic streams them:

    event: message_start          (id, model, usage.input_tokens)
    event: ping
    event: content_block_start    thinking | redacted_thinking | text | tool_use
    event: content_block_delta    thinking_delta, signature_delta, text_delta, input_json_delta
    event: content_block_stop
    event: message_delta          stop_reason, usage.output_tokens
    event: message_stop

Every `data:` line has its `event:` line first: the SDK's own decoder fails
without it. A step that needs another kind of block closes the open one and
starts the next. `reasoning` steps are thinking_delta; `signature` closes the
thinking block; `redacted` is a whole redacted_thinking block. Usage
(prompt_tokens includes cached_tokens, as in Chat Completions) is split the
Anthropic way: input_tokens = prompt - cached, cache_read_input_tokens = cached.
Without a usage step no usage is sent at all (a minimal compatible server).
"""
from __future__ import annotations

import json
import time
from typing import Any

from .player import _BLAST_WRITE, Player

_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                429: "rate_limit_error", 500: "api_error", 504: "timeout_error",
                529: "overloaded_error"}
_ERROR_MESSAGES = {400: "Bad request.", 401: "invalid x-api-key", 403: "Forbidden.",
                   404: "Not found.", 413: "Request exceeds the maximum allowed number of bytes.",
                   429: "Number of request tokens has exceeded your per-minute rate limit.",
                   500: "Internal server error", 529: "Overloaded"}


def error_body(status: int, body: Any = None) -> Any:
    """Anthropic's error envelope: {"type": "error", "error": {"type", "message"}}."""
    if body is None:
        return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"),
                                           "message": _ERROR_MESSAGES.get(status, f"Error {status}.")}}
    if isinstance(body, dict) and "error" in body and body.get("type") != "error":
        return {"type": "error", **body}
    return body  # strings (plain text, HTML) and complete envelopes as given


def _event(kind: str, obj: dict) -> bytes:
    return b"event: %s\ndata: %s\n\n" % (kind.encode(), json.dumps(obj).encode())


class AnthropicPlayer(Player):
    """Plays one script as an Anthropic Messages stream or a single message."""

    def __init__(self, h: Any, rec: Any, sc: dict, body: dict):
        super().__init__(h, rec, sc, body)
        self.message_id = f"msg_fake_{len(self.fake.requests)}"
        self.usage = next((s for s in self.steps if s["type"] == "usage"), None)
        self.stop_reason: str | None = None
        self.block = -1  # content index of the last block started
        self.open: tuple | None = None  # (kind, tool index) of the open block
        self.tool_blocks: dict[int, int] = {}  # script tool index → content index

    # --- wire pieces -------------------------------------------------------

    def _usage_start(self) -> dict:
        u = self.usage
        cached = u.get("cached_tokens", 0)
        return {"input_tokens": u.get("prompt_tokens", 0) - cached, "output_tokens": 1,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached}

    def _usage_end(self) -> dict:
        u = self.usage
        out: dict = {"output_tokens": u.get("completion_tokens", 0)}
        if u.get("reasoning_tokens"):
            out["output_tokens_details"] = {"thinking_tokens": u["reasoning_tokens"]}
        return out

    def _start(self) -> None:
        if self.started:
            return
        self.started = True
        h = self.h
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.send_header("request-id", f"req_fake_{len(self.fake.requests)}")
        h.end_headers()
        message: dict = {"id": self.message_id, "type": "message", "role": "assistant",
                         "content": [], "model": self.model, "stop_reason": None,
                         "stop_sequence": None}
        if self.usage:
            message["usage"] = self._usage_start()
        self._write(_event("message_start", {"type": "message_start", "message": message})
                    + _event("ping", {"type": "ping"}))

    def _open_block(self, kind: str, block: dict, key: Any = None) -> bytes:
        data = self._close_block()
        self.block += 1
        self.open = (kind, key)
        return data + _event("content_block_start", {"type": "content_block_start",
                                                     "index": self.block, "content_block": block})

    def _close_block(self) -> bytes:
        if self.open is None:
            return b""
        self.open = None
        return _event("content_block_stop", {"type": "content_block_stop", "index": self.block})

    def _delta(self, delta: dict, index: int | None = None) -> bytes:
        return _event("content_block_delta", {"type": "content_block_delta",
                                              "index": self.block if index is None else index,
                                              "delta": delta})

    def _ensure(self, kind: str, block: dict) -> bytes:
        """Nothing if a block of this kind is open, else close the open one and start it."""
        if self.open is not None and self.open[0] == kind:
            return b""
        return self._open_block(kind, block)

    def _content(self, step: dict) -> bytes:
        kind = step["type"]
        if kind == "text":
            return (self._ensure("text", {"type": "text", "text": ""})
                    + self._delta({"type": "text_delta", "text": step["text"]}))
        if kind == "reasoning":
            return (self._ensure("thinking", {"type": "thinking", "thinking": "", "signature": ""})
                    + self._delta({"type": "thinking_delta", "thinking": step["text"]}))
        if kind == "tool_call":
            index = step.get("index", 0)
            data = self._open_block("tool_use", {"type": "tool_use", "id": step["id"],
                                                 "name": step["name"], "input": {}}, index)
            self.tool_blocks[index] = self.block
            if step.get("arguments"):
                data += self._delta({"type": "input_json_delta", "partial_json": step["arguments"]})
            return data
        # tool_args: a call that is no longer the open block gets its delta on its
        # own (closed) index, which real servers never do; scripts that interleave
        # calls ask for exactly that.
        index = self.tool_blocks.get(step.get("index", 0), self.block)
        return self._delta({"type": "input_json_delta", "partial_json": step["arguments"]}, index)

    # --- playing -----------------------------------------------------------

    def _play_stream(self) -> None:
        for step in self.steps:
            kind = step["type"]
            if kind in ("text", "reasoning", "tool_call", "tool_args"):
                self._start()
                if self.delay:
                    time.sleep(self.delay)
                self._write(self._content(step))
                self._stamp(self.index, self.index + 1)
                self.index += 1
            elif kind == "signature":
                self._start()
                self._write(self._ensure("thinking", {"type": "thinking", "thinking": "", "signature": ""})
                            + self._delta({"type": "signature_delta", "signature": step["signature"]})
                            + self._close_block())
            elif kind == "redacted":
                self._start()
                self._write(self._open_block("redacted_thinking",
                                             {"type": "redacted_thinking", "data": step["data"]})
                            + self._close_block())
            elif kind == "finish":
                reason = step.get("reason")
                self.stop_reason = _STOP_REASONS.get(reason, reason)
            elif kind == "usage":
                pass  # read ahead in __init__: input tokens go in message_start
            elif kind == "delay":
                self.delay = float(step.get("seconds") or 0)
            elif kind == "hang":
                if not self.fake._hang():
                    self.h.close_connection = True
                    return
            elif kind == "blast":
                self._start()
                self._blast(step)
            elif kind == "garbage":
                self._start()
                self._write(f"event: content_block_delta\ndata: {step.get('data', 'this is not json')}\n\n"
                            .encode())
            elif kind == "raw":
                self._start()
                self._write(step["data"].encode())
            elif kind == "error":
                if not self.started:
                    return self._http_error(step)
                body = error_body(step.get("status", 500), step.get("body"))
                self._write(_event("error", body) if isinstance(body, dict)
                            else f"event: error\ndata: {body}\n\n".encode())
                self._end_body()
                return
            elif kind == "html":
                if not self.started:
                    return self._html(step)
                self._write(step.get("body", "").encode())
            elif kind == "cut":
                self._start()
                if step.get("graceful"):
                    self._end_body()  # a well-formed body that lacks message_stop
                self.h.close_connection = True
                return
            # "encrypted" (Responses only) has no Anthropic form: skipped.
        self._start()
        end: dict = {"type": "message_delta",
                     "delta": {"stop_reason": self.stop_reason, "stop_sequence": None}}
        if self.usage:
            end["usage"] = self._usage_end()
        self._write(self._close_block() + _event("message_delta", end)
                    + _event("message_stop", {"type": "message_stop"}))
        self._end_body()

    def _blast(self, step: dict) -> None:
        head = self._ensure("text", {"type": "text", "text": ""})
        # Everything but the text is constant: render it once.
        prefix = (b"event: content_block_delta\ndata: " + json.dumps(
            {"type": "content_block_delta", "index": self.block})[:-1].encode()
            + b', "delta": {"type": "text_delta", "text": ')
        tpl = step.get("template", "{i} ")
        batch: list[bytes] = [head] if head else []
        size, first = len(head), self.index
        for _ in range(int(step["count"])):
            b = prefix + json.dumps(tpl.format(i=self.index)).encode() + b"}}\n\n"
            batch.append(b)
            size += len(b)
            self.index += 1
            if size >= _BLAST_WRITE:
                self._write(b"".join(batch))
                self._stamp(first, self.index)
                batch, size, first = [], 0, self.index
        if batch:
            self._write(b"".join(batch))
            self._stamp(first, self.index)

    def _http_error(self, step: dict) -> None:
        status = int(step.get("status", 500))
        super()._http_error({**step, "body": error_body(status, step.get("body"))})

    def _play_json(self) -> None:
        blocks: list[dict] = []
        tools: dict[int, dict] = {}
        args: dict[int, list[str]] = {}

        def current(kind: str, new: dict) -> dict:
            if not blocks or blocks[-1]["type"] != kind or blocks[-1].get("_closed"):
                blocks.append(new)
            return blocks[-1]

        for step in self.steps:
            kind = step["type"]
            if kind in ("text", "blast"):
                block = current("text", {"type": "text", "text": ""})
                if kind == "text":
                    block["text"] += step["text"]
                for _ in range(int(step.get("count", 0))):
                    block["text"] += step.get("template", "{i} ").format(i=self.index)
                    self.index += 1
            elif kind == "reasoning":
                current("thinking", {"type": "thinking", "thinking": "", "signature": ""})["thinking"] \
                    += step["text"]
            elif kind == "signature":
                block = current("thinking", {"type": "thinking", "thinking": "", "signature": ""})
                block["signature"] += step["signature"]
                block["_closed"] = True
            elif kind == "redacted":
                blocks.append({"type": "redacted_thinking", "data": step["data"]})
            elif kind == "tool_call":
                index = step.get("index", 0)
                tools[index] = {"type": "tool_use", "id": step["id"], "name": step["name"], "input": {}}
                args[index] = [step.get("arguments", "")]
                blocks.append(tools[index])
            elif kind == "tool_args":
                args[step.get("index", 0)].append(step["arguments"])
            elif kind == "finish":
                reason = step.get("reason")
                self.stop_reason = _STOP_REASONS.get(reason, reason)
            elif kind == "hang":
                if not self.fake._hang():
                    self.h.close_connection = True
                    return
            elif kind == "error":
                return self._http_error(step)
            elif kind in ("html", "garbage", "raw"):
                return self._html({"body": step.get("body") or step.get("data", ""),
                                   "status": step.get("status", 200)})
            elif kind == "cut":
                self.h.close_connection = True
                return
        for index, tool in tools.items():
            text = "".join(args[index])
            tool["input"] = json.loads(text) if text else {}
        for block in blocks:
            block.pop("_closed", None)
        message: dict = {"id": self.message_id, "type": "message", "role": "assistant",
                         "model": self.model, "content": blocks, "stop_reason": self.stop_reason,
                         "stop_sequence": None}
        if self.usage:
            message["usage"] = {**self._usage_start(), **self._usage_end()}
        self.h.send_json(200, message)
