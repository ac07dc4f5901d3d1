"""Driving a fake provider that runs in another process.

Server side: `/_control/*` routes (JSON in, JSON out). Client side:
`FakeProviderProcess`, which starts `python -m tests.fakeprovider` and offers
the same methods as the in-process FakeProvider.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from . import script as S
from .server import RecordedRequest


def handle_control(h: Any, path: str, body: Any) -> None:
    """Serve one /_control/ request on handler h of a FakeProvider."""
    fake, body = h.fake, body if isinstance(body, dict) or isinstance(body, list) else {}
    route = path[len("/_control/"):]
    try:
        if route == "enqueue":
            # A script, or {"scripts": [script, ...]}.
            scripts = body["scripts"] if isinstance(body, dict) and "scripts" in body else [body]
            fake.enqueue(*scripts)
            return h.send_json(200, {"queued": fake.queued})
        if route == "default":  # the script answering requests none is queued for
            fake.default_script = S.normalize(body)
            return h.send_json(200, {"ok": True})
        if route == "requests":
            since = int(h.query().get("since", 0))
            return h.send_json(200, {"requests": [r.to_json() for r in fake.requests[since:]]})
        if route == "wait_requests":
            reqs = fake.wait_requests(int(body.get("n", 1)), float(body.get("timeout", 5)))
            return h.send_json(200, {"count": len(reqs)})
        if route == "release":
            fake.release(int(body.get("n", 1)))
            return h.send_json(200, {"ok": True})
        if route == "wait_hanging":
            fake.wait_hanging(int(body.get("n", 1)), float(body.get("timeout", 5)))
            return h.send_json(200, {"hanging": fake.hanging})
        if route == "state":
            return h.send_json(200, {"queued": fake.queued, "hanging": fake.hanging,
                                     "requests": len(fake.requests)})
        if route == "reset":
            fake.reset()
            return h.send_json(200, {"ok": True})
        if route == "models":
            fake.models = list(body.get("models", []))
            return h.send_json(200, {"models": fake.models})
        if route == "shutdown":
            h.send_json(200, {"ok": True})
            fake.shutdown_requested.set()
            return None
        return h.send_json(404, {"error": f"unknown control route {route!r}"})
    except TimeoutError as e:
        return h.send_json(408, {"error": str(e)})
    except (ValueError, KeyError, TypeError) as e:
        return h.send_json(400, {"error": str(e)})


class ControlError(Exception):
    pass


class FakeProviderProcess:
    """`python -m tests.fakeprovider --control` in a child process, same API as FakeProvider."""

    def __init__(self, *, record_times: bool = False, models: list[str] | None = None,
                 start_timeout: float = 10.0):
        root = Path(__file__).resolve().parents[2]
        cmd = [sys.executable, "-m", "tests.fakeprovider", "--port", "0", "--control"]
        if record_times:
            cmd.append("--record-times")
        if models:
            cmd += ["--models", ",".join(models)]
        env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()  # the child prints once it listens
        if not line:
            self.proc.kill()
            raise ControlError(f"fake provider did not start (exit {self.proc.wait(start_timeout)})")
        info = json.loads(line)
        self.port, self.url, self.base_url = info["port"], info["url"], info["base_url"]

    def _call(self, method: str, route: str, body: Any = None, timeout: float = 30) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}/_control/{route}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise ControlError(f"{route}: HTTP {e.code} {e.read().decode(errors='replace')}") from None

    def enqueue(self, *scripts: Any) -> None:
        self._call("POST", "enqueue", {"scripts": list(scripts)})

    def set_default(self, script: Any) -> None:
        """The script answering every request none is queued for (e.g. script.obey())."""
        self._call("POST", "default", script)

    @property
    def requests(self) -> list[RecordedRequest]:
        return [RecordedRequest(**r) for r in self._call("GET", "requests")["requests"]]

    def wait_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        try:
            self._call("POST", "wait_requests", {"n": n, "timeout": timeout}, timeout=timeout + 5)
        except ControlError as e:
            raise TimeoutError(str(e)) from None
        return self.requests

    def release(self, n: int = 1) -> None:
        self._call("POST", "release", {"n": n})

    def wait_hanging(self, n: int = 1, timeout: float = 5.0) -> None:
        try:
            self._call("POST", "wait_hanging", {"n": n, "timeout": timeout}, timeout=timeout + 5)
        except ControlError as e:
            raise TimeoutError(str(e)) from None

    @property
    def hanging(self) -> int:
        return self._call("GET", "state")["hanging"]

    def reset(self) -> None:
        self._call("POST", "reset", {})

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()

    def __enter__(self) -> FakeProviderProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
