"""One server per data dir, held by an OS file lock for the life of the process."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path


class InstanceLock:
    def __init__(self, data_dir: Path):
        self.path = data_dir / "numi.lock"
        self._fd: int | None = None

    def acquire(self) -> bool:
        """True if this process is now the data dir's only server."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _lock(fd)
        except OSError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the lock
            self._fd = None


def _lock(fd: int) -> None:
    if os.name == "nt":
        import msvcrt
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def running_server(data_dir: Path, wait_s: float = 5.0) -> dict | None:
    """The first instance's server.json, waiting briefly while it is still starting."""
    path = data_dir / "server.json"
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.05)  # the other process is between bind and announce


def post_to_running(info: dict, path: str, body: dict | None = None, timeout: float = 5.0) -> tuple[int, dict]:
    """POST `body` to the running Numi described by `info` (its server.json), with its token.

    Raises OSError or ValueError when it cannot be reached or answers no JSON.
    """
    import http.client

    port = int(info["port"])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=json.dumps(body or {}), headers={
            "Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {info['token']}",
            "Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    data = json.loads(raw) if raw else {}
    return resp.status, data if isinstance(data, dict) else {}


def sign_in_link(info: dict) -> str | None:
    """A fresh one-time sign-in address from the running Numi, or None when it gives none."""
    try:
        status, data = post_to_running(info, "/api/sign-in-links")
    except (OSError, ValueError):
        return None
    url = data.get("url")
    return url if status == 201 and isinstance(url, str) else None
