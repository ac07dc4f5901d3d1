"""Test clients for a running Numi server: HTTP with the token, and WebSocket."""
from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from backend.turns.events import APP_EVENTS, CHAT_EVENTS, problems

ROOT = Path(__file__).resolve().parent.parent


class Api:
    """A small HTTP client for Numi's API; `token=None` sends none."""

    def __init__(self, port: int, token: str | None):
        self.port, self.token = port, token

    def request(self, method: str, path: str, body=None, *, headers=None, raw: bytes | None = None,
                content_type: str = "application/json"):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        hdrs = {"Host": f"127.0.0.1:{self.port}"}
        if self.token:
            hdrs["Authorization"] = f"Bearer {self.token}"
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            hdrs["Content-Type"] = content_type
        hdrs.update(headers or {})
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        payload = resp.read()
        conn.close()
        ctype = resp.getheader("Content-Type", "")
        parsed = json.loads(payload) if payload and "json" in ctype else payload
        return Response(resp.status, parsed, dict(resp.getheaders()))

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def patch(self, path, body=None, **kw):
        return self.request("PATCH", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def upload(self, name: str, data: bytes, *, field: str = "file",
               content_type: str = "application/octet-stream", **kw):
        """POST /api/files as a browser's form upload does (one part, `field`)."""
        body, ctype = multipart(field, name, data, content_type)
        return self.request("POST", "/api/files", raw=body, content_type=ctype, **kw)


def multipart(field: str, name: str | None, data: bytes, content_type: str = "application/octet-stream"):
    """A multipart/form-data body with one part (a file part when `name` is given); (body, Content-Type)."""
    boundary = "numi-test-" + os.urandom(8).hex()
    disposition = f'form-data; name="{field}"' + (f'; filename="{name}"' if name is not None else "")
    head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: {content_type}\r\n\r\n"
    return head.encode() + data + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


class Response:
    def __init__(self, status, body, headers):
        self.status, self.body, self.headers = status, body, headers

    def __repr__(self):
        return f"<Response {self.status} {self.body!r}>"


class ServerProcess:
    """The real server as a subprocess on a temp data dir (kill -9 and restart included)."""

    def __init__(self, data_dir: Path, env: dict | None = None, preexec_fn=None):
        self.data_dir = Path(data_dir)
        self.env = {**os.environ, **(env or {})}
        self.preexec_fn = preexec_fn  # run in the child before Numi starts (e.g. to set rlimits)
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}

    def start(self, timeout: float = 20.0) -> "ServerProcess":
        info_path = self.data_dir / "server.json"
        info_path.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "backend", "--data-dir", str(self.data_dir)],
            cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            preexec_fn=self.preexec_fn)
        # The server prints its URL once server.json is written: that line is the readiness event.
        line = self.proc.stdout.readline()
        if "running at" not in line:
            raise RuntimeError(f"server did not start: {line!r}")
        self.info = json.loads(info_path.read_text())
        return self

    @property
    def port(self) -> int:
        return self.info["port"]

    @property
    def token(self) -> str:
        return self.info["token"]

    def session_cookie(self) -> str:
        """`numi_session=<value>` as `GET /?token=` sets it (CONTRACT §2): the session secret, not the token."""
        signed_in = Api(self.port, None).get(f"/?token={self.token}")
        assert signed_in.status == 303, signed_in
        return signed_in.headers["Set-Cookie"].split(";", 1)[0]

    def api(self, token: str | None = "default") -> Api:
        return Api(self.port, self.token if token == "default" else token)

    def ws_url(self, chat_id: str) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/{chat_id}"

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 10.0) -> float:
        """SIGTERM and wait; returns the seconds it took to exit."""
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout)
        return time.monotonic() - start

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()


class Socket:
    """A WebSocket client for /ws/<chat_id> that keeps every event it received.

    Each event is held to its definition (backend/turns/events.py) as it arrives, so
    every test that talks to a real server checks the shape of what it was sent.
    """

    table = CHAT_EVENTS

    def __init__(self, server: "ServerProcess", chat_id: str, headers: dict | None = None, query: str = ""):
        from websockets.sync.client import connect

        self.events: list[dict] = []
        url = server.ws_url(chat_id) + (f"?{query}" if query else "")
        self.ws = connect(url, compression=None, max_size=None, open_timeout=10,
                          additional_headers={"Authorization": f"Bearer {server.token}", **(headers or {})})
        self.ws.__enter__()

    def send(self, **frame) -> None:
        self.ws.send(json.dumps(frame))

    def recv(self, timeout: float = 15.0) -> dict:
        event = json.loads(self.ws.recv(timeout=timeout))
        self.events.append(event)
        wrong = problems(event, self.table)
        assert not wrong, f"the server sent an event its definition does not allow: {'; '.join(wrong)}"
        return event

    def until(self, kind: str, timeout: float = 15.0, **match) -> dict:
        """Read until an event of `kind` (with the given field values) arrives; return it."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {kind} {match} within {timeout}s; got {[e['type'] for e in self.events][-20:]}")
            event = self.recv(left)
            if event["type"] == kind and all(event.get(k) == v for k, v in match.items()):
                return event

    def of(self, kind: str, turn_id=None) -> list[dict]:
        return [e for e in self.events if e["type"] == kind and (turn_id is None or e.get("turn_id") == turn_id)]

    def text(self, turn_id=None) -> str:
        """The answer text these events carry: a snapshot's content, then the deltas after it."""
        out = ""
        for e in self.events:
            if turn_id is not None and e.get("turn_id") != turn_id:
                continue
            if e["type"] == "snapshot":
                out = e["content"]
            elif e["type"] == "content":
                out += e["delta"]
        return out

    def close(self) -> None:
        self.ws.close()


class AppSocket(Socket):
    """A client of /ws/_app (app-wide chat events). It returns once `ready` arrived:
    from then on every chat change reaches it."""

    table = APP_EVENTS

    def __init__(self, server: "ServerProcess", headers: dict | None = None):
        super().__init__(server, "_app", headers)
        self.until("ready")

    def chat(self, chat_id: str, timeout: float = 15.0, **fields) -> dict:
        """Read until a `chat_changed` of `chat_id` with the given field values; return its chat."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no chat_changed {chat_id} {fields} within {timeout}s; "
                                   f"got {self.events[-20:]}")
            event = self.recv(left)
            chat = event.get("chat") or {}
            if (event["type"] == "chat_changed" and chat.get("id") == chat_id
                    and all(chat.get(k) == v for k, v in fields.items())):
                return chat
