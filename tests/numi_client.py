"""Test clients for a running Numi server: HTTP with the token, and WebSocket."""
from __future__ import annotations

import atexit
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from backend.turns.events import APP_EVENTS, CHAT_EVENTS, problems

ROOT = Path(__file__).resolve().parent.parent


class Api:
    """A small HTTP client for Numi's API; `token=None` sends none."""

    def __init__(self, port: int, token: str | None):
        self.port, self.token = port, token

    def request(self, method: str, path: str, body=None, *, headers=None, raw: bytes | None = None,
                content_type: str = "application/json", timeout: float = 30):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
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


class Forked:
    """A server forked by tests/spawner.py, with the parts of `subprocess.Popen` the tests use."""

    def __init__(self, conn: socket.socket, pid: int, stdout):
        self.conn, self.pid, self.stdout = conn, pid, stdout
        self.returncode: int | None = None
        self._lock = threading.Lock()
        self._reader = conn.makefile("rb")

    def poll(self) -> int | None:
        if self.returncode is None:
            ready, _, _ = select.select([self.conn], [], [], 0)
            if ready:
                self._read_status()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            ready, _, _ = select.select([self.conn], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired(f"server {self.pid}", timeout)
            self._read_status()
        return self.returncode

    def _read_status(self) -> None:
        with self._lock:
            if self.returncode is None:
                line = self._reader.readline()
                self.returncode = json.loads(line)["status"] if line else -signal.SIGKILL
                self._reader.close()
                self.conn.close()

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _Spawner:
    """The one fork server (tests/spawner.py) of this test process, started on first use."""

    proc: subprocess.Popen | None = None
    path: str | None = None

    @classmethod
    def spawn(cls, args: list[str], env: dict) -> Forked:
        if cls.proc is None or cls.proc.poll() is not None:
            cls.path = os.path.join(tempfile.mkdtemp(prefix="numi-spawner-"), "s")
            cls.proc = subprocess.Popen([sys.executable, "-m", "tests.spawner", cls.path], cwd=ROOT,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ))
            if cls.proc.stdout.readline() != b"ready\n":
                raise RuntimeError("the test fork server did not start")
            atexit.register(cls.stop)
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(cls.path)
        read_fd, write_fd = os.pipe()
        request = {"args": args, "env": env, "cwd": str(ROOT), "main": str(ROOT / "backend" / "__main__.py")}
        socket.send_fds(conn, [json.dumps(request).encode()], [write_fd])
        os.close(write_fd)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = conn.recv(1)
            if not chunk:
                raise RuntimeError("the test fork server closed the connection")
            reply += chunk
        return Forked(conn, json.loads(reply)["pid"], os.fdopen(read_fd, "r"))

    @classmethod
    def stop(cls) -> None:
        """End the fork server, and with it any server a test left running."""
        if cls.proc is not None:
            cls.proc.stdin.close()
            cls.proc.wait(30)
            cls.proc.stdout.close()

    @staticmethod
    def can_fork(env: dict, preexec_fn) -> bool:
        """Whether a forked server would be the same as a fresh one: no preexec_fn, and the
        interpreter's own settings (PYTHON* variables, read once at start-up) unchanged."""
        if preexec_fn is not None or os.environ.get("NUMI_TEST_FORK", "1") == "0":
            return False
        startup = {k for k in {*env, *os.environ} if k.startswith("PYTHON") and k != "PYTHON_KEYRING_BACKEND"}
        return all(env.get(k) == os.environ.get(k) for k in startup)


class ServerProcess:
    """The real server as a subprocess on a temp data dir (kill -9 and restart included).

    It is forked from the test fork server (tests/spawner.py) when that gives the same
    process as `python -m backend`; `fresh=True` always starts a new interpreter."""

    def __init__(self, data_dir: Path, env: dict | None = None, preexec_fn=None, fresh: bool = False):
        self.data_dir = Path(data_dir)
        self.env = {**os.environ, **(env or {})}
        self.preexec_fn = preexec_fn  # run in the child before Numi starts (e.g. to set rlimits)
        self.fresh = fresh
        self.proc: subprocess.Popen | Forked | None = None
        self.info: dict = {}

    def start(self, timeout: float = 20.0) -> "ServerProcess":
        info_path = self.data_dir / "server.json"
        info_path.unlink(missing_ok=True)
        args = ["--data-dir", str(self.data_dir)]
        if not self.fresh and _Spawner.can_fork(self.env, self.preexec_fn):
            self.proc = _Spawner.spawn(args, self.env)
        else:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "backend", *args],
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
