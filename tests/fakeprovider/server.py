"""A scripted OpenAI Chat Completions server on loopback, for tests.

Real HTTP on a real socket, because the SDK's transport (httpx2) is invisible
to httpx mocks, and because hangs, cut streams and Stop only mean something
on a real connection.
"""
from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import script as S
from .player import Player

AWAIT_SCRIPT_S = 10.0  # how long a model call waits for its script when `await_scripts` is on


def json_body(handler: BaseHTTPRequestHandler) -> Any:
    """The request's body read whole, as JSON; None when empty or not JSON (the route decides)."""
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(length) if length else b""
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the query string
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or None when there was no (JSON) body
    # (delta index, time.perf_counter(), time.time()) after the write that
    # carried that delta; filled only when the provider records times.
    write_times: list[tuple[int, float, float]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"method": self.method, "path": self.path, "headers": self.headers,
                "body": self.body, "write_times": self.write_times}


class FakeProvider:
    """In-process fake: `with FakeProvider() as fp: fp.enqueue([...]); fp.base_url`."""

    def __init__(self, *, port: int = 0, control: bool = True, record_times: bool = False,
                 models: tuple[str, ...] | list[str] = ("fake-model",),
                 default_script: Any = None):
        self.control = control
        self.record_times = record_times
        self.models = list(models)
        # (method, path) → a JSON body (answered 200) or a callable(body) → (status, JSON body):
        # a server's own API beside the OpenAI one (Ollama's /api/show, llama.cpp's /props …).
        # It answers before the built-in routes, so it can replace the /v1/models list too.
        self.routes: dict[tuple[str, str], Any] = {}
        self.default_script = S.normalize(default_script if default_script is not None else S.reply())
        # True: a model call with no script queued waits (up to AWAIT_SCRIPT_S) for one to be enqueued.
        self.await_scripts = False
        self._cond = threading.Condition()
        self._scripts: list[dict] = []
        self._requests: list[RecordedRequest] = []
        self._permits = 0  # release() calls not yet consumed by a hang
        self._hanging = 0
        self._stopped = False
        self._conns: set[socket.socket] = set()
        self.shutdown_requested = threading.Event()  # set by POST /_control/shutdown
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.url + "/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fakeprovider:{self.port}", daemon=True)
        self._thread.start()

    # --- scripting ---------------------------------------------------------

    def enqueue(self, *scripts: Any) -> None:
        """Queue scripts; each answers one request to its path, first in first out."""
        normalized = [S.normalize(s) for s in scripts]
        with self._cond:
            self._scripts.extend(normalized)
            self._cond.notify_all()

    def _next_script(self, path: str, model: str | None = None) -> dict | None:
        def found() -> int | None:
            for i, sc in enumerate(self._scripts):
                if sc.get("model") is not None and sc["model"] != model:
                    continue  # another model's answer
                if sc["path"] == path or (sc["path"] is None and path in S.MODEL_CALL_PATHS):
                    return i
            return None

        with self._cond:
            if self.await_scripts and path in S.MODEL_CALL_PATHS:
                # A test that writes the next answer from what the turn did so far (an id it made)
                # enqueues it after the turn started: the request waits for it instead of racing it.
                self._cond.wait_for(lambda: found() is not None or self._stopped, AWAIT_SCRIPT_S)
            i = found()
            return self._scripts.pop(i) if i is not None else None

    @property
    def queued(self) -> int:
        with self._cond:
            return len(self._scripts)

    def reset(self) -> None:
        with self._cond:
            self._scripts.clear()
            self._requests.clear()

    # --- observing ---------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._requests)

    def wait_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        """Block until at least n requests arrived; TimeoutError otherwise."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._requests) >= n, timeout):
                raise TimeoutError(f"expected {n} requests, got {len(self._requests)} in {timeout} s")
            return list(self._requests)

    def _record(self, rec: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(rec)
            self._cond.notify_all()

    # --- hangs -------------------------------------------------------------

    @property
    def hanging(self) -> int:
        with self._cond:
            return self._hanging

    def wait_hanging(self, n: int = 1, timeout: float = 5.0) -> None:
        """Block until n responses are parked in a hang step."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._hanging >= n, timeout):
                raise TimeoutError(f"expected {n} hanging responses, have {self._hanging}")

    def release(self, n: int = 1) -> None:
        """Let n hang steps go on (also ones reached later, so no race)."""
        with self._cond:
            self._permits += n
            self._cond.notify_all()

    def _hang(self) -> bool:
        """Park until released (True) or the provider closes (False)."""
        with self._cond:
            self._hanging += 1
            self._cond.notify_all()
            try:
                self._cond.wait_for(lambda: self._permits > 0 or self._stopped)
                if self._stopped:
                    return False
                self._permits -= 1
                return True
            finally:
                self._hanging -= 1

    # --- lifecycle ---------------------------------------------------------

    def close(self) -> None:
        with self._cond:
            if self._stopped:
                return
            self._stopped = True
            self._cond.notify_all()
            conns = list(self._conns)
        self._server.shutdown()
        self._server.server_close()
        # Idle keep-alive connections would otherwise keep answering on a
        # "closed" provider; shutdown wakes their blocked reads.
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client that hung up (timeouts, close()) is what the tests do on purpose
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked, like real servers

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def fake(self) -> FakeProvider:
        return self.server.fake  # type: ignore[attr-defined]

    def setup(self) -> None:
        super().setup()
        with self.fake._cond:
            self.fake._conns.add(self.connection)

    def finish(self) -> None:
        with self.fake._cond:
            self.fake._conns.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        path = urlsplit(self.path).path
        body = json_body(self)
        try:
            if path.startswith("/_control/") and self.fake.control:
                from .control import handle_control
                handle_control(self, path, body)
                return
            rec = RecordedRequest(self.command, path, {k.lower(): v for k, v in self.headers.items()}, body)
            self.fake._record(rec)
            route = self.fake.routes.get((self.command, path))
            if route is not None:
                status, answer = route(body) if callable(route) else (200, route)
                self.send_json(status, answer)
            elif path in S.MODEL_CALL_PATHS and self.command == "POST":
                model = body.get("model") if isinstance(body, dict) else None
                sc = self.fake._next_script(path, model) or self.fake.default_script
                if S.obeys(sc):
                    from .obey import answer
                    sc = answer(path, body if isinstance(body, dict) else {})
                _player_for(path)(self, rec, sc, body if isinstance(body, dict) else {}).play()
            elif path == S.MODELS_PATH and self.command == "GET":
                sc = self.fake._next_script(path)
                if sc:
                    Player(self, rec, sc, {}).play()
                elif "anthropic-version" in rec.headers:
                    # Anthropic's own shape (the anthropic SDK sends this header on every request).
                    data = [{"type": "model", "id": m, "created_at": "2025-01-01T00:00:00Z",
                             "display_name": m.replace("-", " ").title()} for m in self.fake.models]
                    self.send_json(200, {"data": data, "has_more": False,
                                         "first_id": data[0]["id"] if data else None,
                                         "last_id": data[-1]["id"] if data else None})
                else:
                    self.send_json(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                        for m in self.fake.models]})
            else:
                self.send_json(404, {"error": {"message": f"No route {self.command} {path}",
                                               "type": "invalid_request_error", "code": None}})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away; nothing to tell it

    def send_json(self, status: int, obj: Any, headers: dict | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)

    def query(self) -> dict[str, str]:
        return {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}


def _player_for(path: str):
    """The player speaking the wire format of `path`; every player takes the same scripts."""
    if path == S.RESPONSES_PATH:
        from .responses_wire import ResponsesPlayer
        return ResponsesPlayer
    if path == S.MESSAGES_PATH:
        from .anthropic_wire import AnthropicPlayer
        return AnthropicPlayer
    return Player
