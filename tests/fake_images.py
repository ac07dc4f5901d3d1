"""Fake image servers on loopback, for tests: the OpenAI images API and Automatic1111's `sdapi`.

Real HTTP on a real socket, answering in the real wire formats, so Numi reaches it through the
`openai` SDK (and its own HTTP client for sdapi) as it reaches a real one:

- `POST /v1/images/generations` `{"model", "prompt", "size"?, "response_format"?, "stream"?,
  "partial_images"?}` → `{"created", "data": [{"b64_json"} | {"url"}]}`; with `"stream": true` (and an
  answer that streams) server-sent events `image_generation.partial_image` {"b64_json",
  "partial_image_index", …} then `image_generation.completed` {"b64_json", "usage", …}; errors as
  `{"error": {"message", "type", "code"}}`.
- `POST /sdapi/v1/txt2img` `{"prompt", "width", "height", …}` → `{"images": [base64], "parameters",
  "info"}` (`info` a JSON text naming `sd_model_name`).
- `GET /files/<name>`: an image a `url` answer points to.

What each answers is set per API with `answer(api, Answer)` (it stays until changed): an image
(`png=`), raw bytes as the image (`image_bytes=`: not an image, a GIF…), an error status, a hang
until the fake closes, or a huge body streamed in chunks (never built in memory).

    with FakeImages() as fi:
        fi.base_url                      # http://127.0.0.1:<port>/v1 — an OpenAI-compatible provider's
        fi.url                           # http://127.0.0.1:<port>    — an sdapi server's address
        fi.answer("openai", Answer(png=...))
        fi.requests                      # what was asked, in order
"""
from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENAI_PATH = "/v1/images/generations"
SDAPI_PATH = "/sdapi/v1/txt2img"


@dataclass
class Answer:
    """How one API answers. Exactly one of the kinds is used, in this order of precedence."""
    png: bytes | None = None  # a good answer carrying these bytes (any bytes: `image_bytes` says it plainly)
    status: int | None = None  # an error answer with this status
    hang: bool = False  # say nothing until the fake closes
    huge_bytes: int | None = None  # an answer whose image is this many bytes, streamed as base64 in chunks
    url: str | None = None  # OpenAI: answer {"url"} — "self" for this fake's own /files/, or any address
    stream: bool = True  # OpenAI: answer a request that asks to stream with events (else plain JSON)
    partials: list[bytes] = field(default_factory=list)  # OpenAI stream: the partial images sent first
    model_name: str = "fake-sd15"  # sdapi: the checkpoint `info` names

    @property
    def image_bytes(self) -> bytes:
        assert self.png is not None
        return self.png


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeImages:
    def __init__(self):
        self._lock = threading.Lock()
        self._answers: dict[str, Answer] = {}
        self._files: dict[str, bytes] = {}
        self._requests: list[Seen] = []
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.url + "/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-images:{self.port}", daemon=True)
        self._thread.start()

    def answer(self, api: str, answer: Answer) -> None:
        """How `api` ("openai" or "sdapi") answers from now on."""
        assert api in ("openai", "sdapi")
        with self._lock:
            self._answers[api] = answer

    @property
    def requests(self) -> list[Seen]:
        with self._lock:
            return list(self._requests)

    def of(self, path: str) -> list[Seen]:
        return [r for r in self.requests if r.path == path]

    def wait_requests(self, path: str, n: int, timeout: float = 10.0) -> list[Seen]:
        deadline = time.monotonic() + timeout
        while len(self.of(path)) < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.of(path))} requests to {path}, not {n}")
            self._closing.wait(0.01)
        return self.of(path)

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeImages:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeImages

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _record(self, body: Any) -> None:
        fake: FakeImages = self.server.fake  # type: ignore[attr-defined]
        with fake._lock:
            fake._requests.append(Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                       body))

    def do_GET(self) -> None:
        fake: FakeImages = self.server.fake  # type: ignore[attr-defined]
        self._record(None)
        data = fake._files.get(self.path.rsplit("/", 1)[-1]) if self.path.startswith("/files/") else None
        if data is None:
            return self._json(404, {"error": {"message": "No such file", "type": "invalid_request_error"}})
        self._send(200, "image/png", data)

    def do_POST(self) -> None:
        fake: FakeImages = self.server.fake  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length)) if length else None
        except ValueError:
            body = None
        self._record(body)
        api = {OPENAI_PATH: "openai", SDAPI_PATH: "sdapi"}.get(self.path)
        if api is None:
            return self._json(404, {"detail": "Not Found"})
        with fake._lock:
            answer = fake._answers.get(api)
        if answer is None:
            return self._json(500, {"error": {"message": "the test set no answer", "type": "server_error"}})
        if answer.hang:
            fake._closing.wait(60)
            return
        if answer.status is not None:
            message = "The server had an error while processing your request."
            return self._json(answer.status, {"error": {"message": message, "type": "server_error", "code": None}}
                              if api == "openai" else {"error": "RuntimeError", "detail": "",
                                                           "body": "", "errors": message})
        if answer.huge_bytes is not None:
            return self._huge(api, answer.huge_bytes)
        if api == "sdapi":
            info = json.dumps({"prompt": body.get("prompt"), "sd_model_name": answer.model_name, "seed": 1})
            return self._json(200, {"images": [_b64(answer.image_bytes)], "parameters": body, "info": info})
        if answer.url is not None:
            name = f"image-{len(fake._files)}.png"
            fake._files[name] = answer.image_bytes
            url = f"{fake.url}/files/{name}" if answer.url == "self" else answer.url
            return self._json(200, {"created": 1, "data": [{"url": url}]})
        if isinstance(body, dict) and body.get("stream") is True and answer.stream:
            return self._stream(answer)
        self._json(200, {"created": 1, "data": [{"b64_json": _b64(answer.image_bytes)}],
                         "usage": {"input_tokens": 10, "output_tokens": 100, "total_tokens": 110}})

    def _stream(self, answer: Answer) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        common = {"background": "opaque", "created_at": 1, "output_format": "png", "quality": "low",
                  "size": "1024x1024"}
        for i, partial in enumerate(answer.partials):
            event = {"type": "image_generation.partial_image", "b64_json": _b64(partial), "partial_image_index": i,
                     **common}
            self._chunk(f"event: image_generation.partial_image\ndata: {json.dumps(event)}\n\n".encode())
        done = {"type": "image_generation.completed", "b64_json": _b64(answer.image_bytes), **common,
                "usage": {"input_tokens": 10, "input_tokens_details": {"image_tokens": 0, "text_tokens": 10},
                          "output_tokens": 100, "total_tokens": 110}}
        self._chunk(f"event: image_generation.completed\ndata: {json.dumps(done)}\n\n".encode())
        self._chunk(b"")

    def _huge(self, api: str, size: int) -> None:
        """An answer whose base64 image decodes to `size` bytes, written in 1 MiB pieces as it is made."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        head = b'{"images": ["' if api == "sdapi" else b'{"created": 1, "data": [{"b64_json": "'
        piece = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(3 * 349_525 - 8))  # 1 398 100 characters
        try:
            self._chunk(head)
            sent = 0
            while sent < size:
                self._chunk(piece)
                sent += 3 * 349_525
            self._chunk(b'"]}' if api == "sdapi" else b'"}]}')
            self._chunk(b"")
        except OSError:
            pass  # Numi stopped reading: as it should

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, body: Any) -> None:
        self._send(status, "application/json", json.dumps(body).encode())

    def _send(self, status: int, ctype: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
