"""Plays the shared scripts in the OpenAI Responses wire format (POST /v1/responses).

The stream is what api.openai.com sends: `event: <type>` + `data: {...}` with
a `type` and a `sequence_number`, output items opened with
`response.output_item.added`, filled by deltas and closed with
`response.output_item.done`, and a final `response.completed` (or
`response.incomplete`) carrying the whole response with its usage. How the
script steps map:

    text       -> a message item's output_text deltas
    reasoning  -> a reasoning item's summary deltas (field "reasoning_text":
                  raw reasoning_text deltas, as vLLM serves gpt-oss)
    encrypted  -> encrypted_content of the open (or a new) reasoning item
    tool_call  -> a function_call item (call_id = the step's id), then its
                  arguments as function_call_arguments deltas; tool_args adds more
    finish     -> "length" makes the end response.incomplete (max_output_tokens)
    usage      -> the usage of response.completed (estimated when absent:
                  Responses always sends one)
    error      -> an HTTP error before the stream; response.failed after it
                  (a body with its own "type" is sent as that event verbatim)

signature and redacted (Anthropic) are skipped. A request without stream=true
gets the final response object as JSON.

A script's "quirks" make the stream look like a gateway's rather than OpenAI's:

    rename_ids: true       the events that end a part or an item (the `.done`
                           events, and the final response's output) name the
                           item by another id than its `added` and delta events
    deltas: false          no delta events: each part's text and each call's
                           arguments come only in the events that end them
    done: [names]          which ending events are sent, of "text" (output_text,
                           reasoning_*_text and function_call_arguments .done),
                           "part" (content_part / reasoning_summary_part .done)
                           and "item" (output_item.done); default all three
    split_messages: true   each text step is a message item of its own
"""
from __future__ import annotations

import json
import time
from typing import Any

from . import script as S
from .player import _BLAST_WRITE, Player

_CONTENT = ("text", "reasoning", "tool_call", "tool_args", "encrypted")


class ResponsesPlayer(Player):
    """Plays one script as a Responses event stream or one JSON response object."""

    def __init__(self, h: Any, rec: Any, sc: dict, body: dict):
        super().__init__(h, rec, sc, body)
        n = len(self.fake.requests)
        self.body = body
        self.response_id = f"resp_fake{n}"
        self.created = int(time.time())
        self.seq = 0
        self.items: list[dict] = []  # output items in output_index order, as they will be "done"
        self.open: dict[int, dict] = {}  # output_index -> state of an item not yet done
        self.calls: dict[int, int] = {}  # script call index -> output_index
        self.finish_reason: str | None = None
        self.usage_step: dict | None = None
        self.out_chars = 0
        quirks = sc.get("quirks") or {}
        self.rename_ids = bool(quirks.get("rename_ids"))
        self.deltas = quirks.get("deltas", True) is not False
        self.ending = set(quirks.get("done", ("text", "part", "item")))
        self.split_messages = bool(quirks.get("split_messages"))

    # --- wire ------------------------------------------------------------------

    def _start(self) -> None:
        if self.started:
            return
        self.started = True
        h = self.h
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream; charset=utf-8")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        self._event("response.created", response=self._response("in_progress", []))
        self._event("response.in_progress", response=self._response("in_progress", []))

    def _encode(self, kind: str, fields: dict) -> bytes:
        data = {"type": kind, **fields, "sequence_number": self.seq}
        self.seq += 1
        return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

    def _event(self, kind: str, **fields: Any) -> None:
        if self.stream:  # the JSON answer only needs the items the events build
            self._write(self._encode(kind, fields))

    def _delta(self, kind: str, **fields: Any) -> None:
        if self.deltas:
            self._event(kind, **fields)

    def _ending(self, group: str, kind: str, **fields: Any) -> None:
        """An event that ends a part or an item, if the quirks let its group through."""
        if group in self.ending:
            self._event(kind, **fields)

    def _response(self, status: str, output: list[dict], usage: dict | None = None,
                  error: dict | None = None, incomplete: str | None = None) -> dict:
        b = self.body
        effort = (b.get("reasoning") or {}).get("effort")
        return {"id": self.response_id, "object": "response", "created_at": self.created,
                "status": status, "error": error,
                "incomplete_details": {"reason": incomplete} if incomplete else None,
                "instructions": b.get("instructions"), "max_output_tokens": b.get("max_output_tokens"),
                "model": self.model, "output": output, "parallel_tool_calls": True,
                "previous_response_id": None,
                "reasoning": {"effort": effort, "summary": (b.get("reasoning") or {}).get("summary")},
                "store": b.get("store", True), "temperature": b.get("temperature", 1.0),
                "text": {"format": {"type": "text"}}, "tool_choice": "auto",
                "tools": b.get("tools") or [], "top_p": b.get("top_p", 1.0), "truncation": "disabled",
                "usage": usage, "metadata": {}}

    # --- output items ----------------------------------------------------------

    def _open(self, item: dict, **state: Any) -> dict:
        index = len(self.items)
        self.items.append(item)
        st = {"index": index, "item": item, **state}
        self.open[index] = st
        self._event("response.output_item.added", output_index=index, item=dict(item))
        return st

    def _open_of(self, kind: str) -> dict | None:
        return next((st for st in self.open.values() if st["item"]["type"] == kind), None)

    def _close_all(self, keep: str | None = None) -> None:
        for index in sorted(self.open):
            if self.open[index]["item"]["type"] != keep:
                self._close(self.open.pop(index))

    def _close(self, st: dict) -> None:
        item, index = st["item"], st["index"]
        if self.rename_ids:
            item["id"] = item["id"].replace("_fake", "_gw")
        iid, kind = item["id"], item["type"]
        if kind == "message":
            text = "".join(st["parts"])
            part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
            self._ending("text", "response.output_text.done", item_id=iid, output_index=index,
                         content_index=0, text=text, logprobs=[])
            self._ending("part", "response.content_part.done", item_id=iid, output_index=index,
                         content_index=0, part=part)
            item.update(status="completed", content=[part])
        elif kind == "reasoning":
            if st["summary"]:
                text = "".join(st["summary"])
                part = {"type": "summary_text", "text": text}
                self._ending("text", "response.reasoning_summary_text.done", item_id=iid, output_index=index,
                             summary_index=0, text=text)
                self._ending("part", "response.reasoning_summary_part.done", item_id=iid, output_index=index,
                             summary_index=0, part=part)
                item["summary"] = [part]
            if st["content"]:
                text = "".join(st["content"])
                self._ending("text", "response.reasoning_text.done", item_id=iid, output_index=index,
                             content_index=0, text=text)
                item["content"] = [{"type": "reasoning_text", "text": text}]
        elif kind == "function_call":
            self._ending("text", "response.function_call_arguments.done", item_id=iid, output_index=index,
                         name=item["name"], arguments=item["arguments"])
            item["status"] = "completed"
        self._ending("item", "response.output_item.done", output_index=index, item=item)

    def _message(self, new: bool = False) -> dict:
        st = None if new else self._open_of("message")
        if st is None:
            self._close_all()
            st = self._open({"id": f"msg_fake{len(self.items)}", "type": "message",
                             "status": "in_progress", "role": "assistant", "content": []}, parts=[])
            self._event("response.content_part.added", item_id=st["item"]["id"], output_index=st["index"],
                        content_index=0,
                        part={"type": "output_text", "text": "", "annotations": [], "logprobs": []})
        return st

    def _reasoning(self) -> dict:
        st = self._open_of("reasoning")
        if st is None:
            self._close_all()
            st = self._open({"id": f"rs_fake{len(self.items)}", "type": "reasoning", "summary": []},
                            summary=[], content=[])
        return st

    def _content(self, step: dict) -> None:
        """One content step: the events it takes, and the item it changes."""
        kind = step["type"]
        if kind == "text":
            st = self._message(new=self.split_messages)
            st["parts"].append(step["text"])
            self._delta("response.output_text.delta", item_id=st["item"]["id"], output_index=st["index"],
                        content_index=0, delta=step["text"], logprobs=[])
        elif kind == "reasoning":
            st = self._reasoning()
            iid, index = st["item"]["id"], st["index"]
            if step.get("field") == "reasoning_text":
                st["content"].append(step["text"])
                self._delta("response.reasoning_text.delta", item_id=iid, output_index=index,
                            content_index=0, delta=step["text"])
            else:
                if not st["summary"]:
                    self._event("response.reasoning_summary_part.added", item_id=iid, output_index=index,
                                summary_index=0, part={"type": "summary_text", "text": ""})
                st["summary"].append(step["text"])
                self._delta("response.reasoning_summary_text.delta", item_id=iid, output_index=index,
                            summary_index=0, delta=step["text"])
        elif kind == "encrypted":
            self._reasoning()["item"]["encrypted_content"] = step.get("data", "")
            return
        elif kind == "tool_call":
            self._close_all(keep="function_call")  # calls stay open, so args may interleave
            st = self._open({"id": f"fc_fake{len(self.items)}", "type": "function_call",
                             "status": "in_progress", "arguments": "", "call_id": step["id"],
                             "name": step["name"]})
            self.calls[step.get("index", 0)] = st["index"]
            self._arguments(st["index"], step.get("arguments", ""))
        elif kind == "tool_args":
            index = self.calls.get(step.get("index", 0))
            if index is not None:
                self._arguments(index, step["arguments"])
        self.out_chars += len(step.get("text") or step.get("arguments") or "")

    def _arguments(self, index: int, args: str) -> None:
        if not args:
            return
        item = self.items[index]
        item["arguments"] += args
        self._delta("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                    delta=args)

    # --- the end ----------------------------------------------------------------

    def _usage(self) -> dict:
        u = self.usage_step
        if u is None:
            u = {"prompt_tokens": max(1, len(json.dumps(self.body.get("input") or "")) // 4),
                 "completion_tokens": max(1, self.out_chars // 4)}
        inp, out = u.get("prompt_tokens", 0), u.get("completion_tokens", 0)
        return {"input_tokens": inp, "input_tokens_details": {"cached_tokens": u.get("cached_tokens", 0)},
                "output_tokens": out,
                "output_tokens_details": {"reasoning_tokens": u.get("reasoning_tokens", 0)},
                "total_tokens": inp + out}

    def _final(self) -> dict:
        self._close_all()
        incomplete = {"length": "max_output_tokens",
                      "content_filter": "content_filter"}.get(self.finish_reason or "")
        return self._response("incomplete" if incomplete else "completed", self.items, self._usage(),
                              incomplete=incomplete)

    def _failed(self, step: dict) -> None:
        body = step.get("body")
        if isinstance(body, dict) and isinstance(body.get("type"), str):
            fields = {k: v for k, v in body.items() if k not in ("type", "sequence_number")}
            self._event(body["type"], **fields)  # a wire event given verbatim, e.g. "error"
            return
        status = int(step.get("status", 500))
        err = (body if isinstance(body, dict) else S.default_error_body(status)).get("error") or {}
        code = err.get("code") if isinstance(err.get("code"), str) else \
            "rate_limit_exceeded" if status == 429 else "server_error"
        message = err.get("message") or f"Error {status}."
        self._close_all()
        self._event("response.failed", response=self._response(
            "failed", self.items, error={"code": code, "message": message}))

    # --- playing ----------------------------------------------------------------

    def _play_stream(self) -> None:
        for step in self.steps:
            kind = step["type"]
            if kind in _CONTENT:
                self._start()
                if self.delay and kind != "encrypted":
                    time.sleep(self.delay)
                self._content(step)
                if kind != "encrypted":
                    self._stamp(self.index, self.index + 1)
                    self.index += 1
            elif kind == "finish":
                self.finish_reason = step.get("reason")
            elif kind == "usage":
                self.usage_step = step
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
                self._write(f"event: response.output_text.delta\n"
                            f"data: {step.get('data', 'this is not json')}\n\n".encode())
            elif kind == "raw":
                self._start()
                self._write(step["data"].encode())
            elif kind == "error":
                if not self.started:
                    return self._http_error(step)
                self._failed(step)
                self._end_body()
                return
            elif kind == "html":
                if not self.started:
                    return self._html(step)
                self._write(step.get("body", "").encode())
            elif kind == "cut":
                self._start()
                if step.get("graceful"):
                    self._end_body()  # a well-formed body that lacks response.completed
                self.h.close_connection = True
                return
            # signature, redacted: Anthropic only
        self._start()
        final = self._final()
        self._event("response.incomplete" if final["status"] == "incomplete" else "response.completed",
                    response=final)
        self._end_body()

    def _blast(self, step: dict) -> None:
        st = self._message()
        # Everything but the sequence number and the text is the same in every
        # event, so it is rendered once; the benchmark writes 20 000 of these.
        kind = "response.output_text.delta"
        head = json.dumps({"type": kind, "item_id": st["item"]["id"], "output_index": st["index"],
                           "content_index": 0, "logprobs": []})[:-1]
        prefix = f"event: {kind}\ndata: {head}, \"sequence_number\": ".encode()
        tpl, parts = step.get("template", "{i} "), st["parts"]
        batch: list[bytes] = []
        size, first = 0, self.index
        for _ in range(int(step["count"])):
            t = tpl.format(i=self.index)
            parts.append(t)
            self.out_chars += len(t)
            b = b"".join((prefix, str(self.seq).encode(), b', "delta": ', json.dumps(t).encode(), b"}\n\n"))
            self.seq += 1
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

    def _play_json(self) -> None:
        for step in self.steps:
            kind = step["type"]
            if kind in _CONTENT:
                self._content(step)
            elif kind == "blast":
                st = self._message()
                for _ in range(int(step["count"])):
                    st["parts"].append(step.get("template", "{i} ").format(i=self.index))
                    self.index += 1
            elif kind == "finish":
                self.finish_reason = step.get("reason")
            elif kind == "usage":
                self.usage_step = step
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
        self.h.send_json(200, self._final())
