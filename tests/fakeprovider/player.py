"""Plays one script onto one HTTP exchange: SSE chunks or a single JSON answer."""
from __future__ import annotations

import json
import time
from typing import Any

from . import script as S

_BLAST_WRITE = 64 * 1024  # bytes per socket write in blast mode


class Player:
    """Plays one script as a streaming (SSE) or a plain JSON answer."""

    def __init__(self, h: Any, rec: Any, sc: dict, body: dict):
        self.h, self.rec, self.fake = h, rec, h.fake
        self.stream = bool(body.get("stream") if sc.get("stream") is None else sc["stream"])
        self.include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.steps = S.with_auto_finish(sc["steps"])
        n = len(self.fake.requests)
        self.completion_id = f"chatcmpl-fake-{n}"
        self.model = body.get("model") or "fake-model"
        self.enc = S.ChunkEncoder(self.completion_id, self.model, int(time.time()))
        self.started = False  # status line and headers sent
        self.delay = 0.0
        self.index = 0  # delta counter, the key of write_times and blast's {i}

    # --- low-level writes --------------------------------------------------

    def _start(self) -> None:
        if self.started:
            return
        self.started = True
        h = self.h
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        self._write(self.enc.delta({"role": "assistant", "content": ""}))

    def _write(self, data: bytes) -> None:
        self.h.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))

    def _end_body(self) -> None:
        self.h.wfile.write(b"0\r\n\r\n")

    def _stamp(self, first: int, last: int) -> None:
        if self.fake.record_times:
            t, w = time.perf_counter(), time.time()
            self.rec.write_times.extend((i, t, w) for i in range(first, last))

    # --- playing -----------------------------------------------------------

    def play(self) -> None:
        if self.stream:
            self._play_stream()
        else:
            self._play_json()

    def _play_stream(self) -> None:
        for step in self.steps:
            kind = step["type"]
            if kind in ("text", "reasoning", "tool_call", "tool_args"):
                self._start()
                if self.delay:
                    time.sleep(self.delay)
                self._write(self.enc.delta(S.step_delta(step)))
                self._stamp(self.index, self.index + 1)
                self.index += 1
            elif kind == "finish":
                self._start()
                self._write(self.enc.delta({}, step.get("reason")))
            elif kind == "usage":
                if self.include_usage:  # as the real API: only when asked for
                    self._start()
                    self._write(self.enc.usage(step))
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
                self._write(f"data: {step.get('data', 'this is not json')}\n\n".encode())
            elif kind == "raw":
                self._start()
                self._write(step["data"].encode())
            elif kind == "error":
                if not self.started:
                    return self._http_error(step)
                # Mid-stream errors arrive as an SSE event (OpenRouter, vLLM do this).
                err = step.get("body") or S.default_error_body(step.get("status", 500))
                self._write(b"data: " + json.dumps(err).encode() + b"\n\n")
                self._end_body()
                return
            elif kind == "html":
                if not self.started:
                    return self._html(step)
                self._write(step.get("body", "").encode())
            elif kind == "cut":
                if not self.started:
                    self._start()
                if step.get("graceful"):
                    self._end_body()  # a well-formed body that simply lacks [DONE]
                # Without the closing chunk the client sees a truncated body.
                self.h.close_connection = True
                return
        self._start()
        self._write(b"data: [DONE]\n\n")
        self._end_body()

    def _blast(self, step: dict) -> None:
        content, tpl = self.enc.content, step.get("template", "{i} ")
        batch: list[bytes] = []
        size, first = 0, self.index
        for _ in range(int(step["count"])):
            b = content(tpl.format(i=self.index))
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
        body = step.get("body", S.default_error_body(status))
        headers = dict(step.get("headers") or {})
        if step.get("retry_after") is not None:
            headers["Retry-After"] = step["retry_after"]
        if isinstance(body, str):
            data = body.encode()
            self.h.send_response(status)
            self.h.send_header("Content-Type", headers.pop("Content-Type", "text/plain"))
            self.h.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.h.send_header(k, str(v))
            self.h.end_headers()
            self.h.wfile.write(data)
        else:
            self.h.send_json(status, body, headers)

    def _html(self, step: dict) -> None:
        data = step.get("body", "").encode()
        self.h.send_response(int(step.get("status", 200)))
        self.h.send_header("Content-Type", "text/html; charset=utf-8")
        self.h.send_header("Content-Length", str(len(data)))
        self.h.end_headers()
        self.h.wfile.write(data)

    def _play_json(self) -> None:
        content, reasoning, calls = [], {}, {}
        finish, usage = None, None
        for step in self.steps:
            kind = step["type"]
            if kind == "text":
                content.append(step["text"])
            elif kind == "reasoning":
                reasoning.setdefault(step.get("field") or "reasoning_content", []).append(step["text"])
            elif kind == "tool_call":
                calls[step.get("index", 0)] = {"id": step["id"], "type": "function", "function": {
                    "name": step["name"], "arguments": step.get("arguments", "")}}
            elif kind == "tool_args":
                calls[step.get("index", 0)]["function"]["arguments"] += step["arguments"]
            elif kind == "blast":
                for _ in range(int(step["count"])):
                    content.append(step.get("template", "{i} ").format(i=self.index))
                    self.index += 1
            elif kind == "finish":
                finish = step.get("reason")
            elif kind == "usage":
                usage = json.loads(self.enc.usage(step)[6:])["usage"]
            elif kind == "delay":
                self.delay = float(step.get("seconds") or 0)
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
        message: dict = {"role": "assistant", "content": "".join(content) if content else None}
        message.update({k: "".join(v) for k, v in reasoning.items()})
        if calls:
            message["tool_calls"] = [calls[k] for k in sorted(calls)]
        self.h.send_json(200, {"id": self.completion_id, "object": "chat.completion",
                               "created": int(time.time()), "model": self.model,
                               "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                               "usage": usage})
