"""What the sandbox tests share: a real Secret Service (a private D-Bus session bus with an unlocked
gnome-keyring on it, as a person's desktop has), a script that hunts for it the way a prompt-injected
command would, and finding a command's processes from outside its sandbox."""
from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

# What an approved command written by a prompt-injected model might run: find a session bus
# (its own environment, other processes' environments, the usual socket folders) and ask the
# keyring on it for Numi's provider key. It prints ATTEMPTED first, so a test can tell that it
# ran at all, and the key where it found one.
STEAL_KEY = r'''
import glob, os, sys
print("ATTEMPTED")
user = sys.argv[1]
found = []
if os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
    found.append(os.environ["DBUS_SESSION_BUS_ADDRESS"])
for environ in glob.glob("/proc/[0-9]*/environ"):
    try:
        with open(environ, "rb") as f:
            for var in f.read().split(b"\0"):
                if var.startswith(b"DBUS_SESSION_BUS_ADDRESS="):
                    found.append(var.split(b"=", 1)[1].decode())
    except OSError:
        pass
found += ["unix:path=" + p for p in glob.glob("/tmp/dbus-*") + glob.glob("/run/user/*/bus")]
from keyring.backends.SecretService import Keyring
for address in dict.fromkeys(found):
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = address
    try:
        print("FOUND", Keyring().get_password("numi", user))
    except Exception as exc:
        print("failed on", address, type(exc).__name__)
print("TRIED", len(found))
'''


class SecretService:
    """gnome-keyring on a D-Bus session bus of its own; `address` is the bus, `stop()` ends both."""

    def __init__(self, root: Path):
        missing = [t for t in ("dbus-daemon", "gnome-keyring-daemon") if not shutil.which(t)]
        if missing:
            pytest.skip(f"{' and '.join(missing)} not installed (apt-get install gnome-keyring dbus)")
        root.mkdir(parents=True, exist_ok=True)
        self.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self.bus.stdout.readline().strip()  # printed once it listens
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        # A throwaway keyring folder and control socket: never the person's own login keyring.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root),
               "DBUS_SESSION_BUS_ADDRESS": self.address, "XDG_DATA_HOME": str(root / "xdg"),
               "XDG_RUNTIME_DIR": str(runtime)}
        # Without --foreground it returns once the daemon is up on the bus; it ends with the bus.
        started = subprocess.run(["gnome-keyring-daemon", "--unlock", "--components=secrets"], input=b"numi-test",
                                 env=env, capture_output=True, timeout=30)
        assert started.returncode == 0, started.stderr[-2000:]

    def stop(self) -> None:
        self.bus.terminate()
        self.bus.wait(10)
        self.bus.stdout.close()


def steal_key_script(folder: Path) -> Path:
    """STEAL_KEY written to `folder` (the workspace, where a command can run it)."""
    path = folder / "steal_key.py"
    path.write_text(STEAL_KEY)
    return path


def python_visible_in_sandbox() -> None:
    """Skip when this Python lives where the sandbox hides things: the steal script could not run there."""
    from backend.tools.sandbox import hidden_roots

    for where in {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.executable)}:
        for root in hidden_roots():
            if where.is_relative_to(root):
                pytest.skip(f"the tests' Python ({where}) lives in {root}, which the sandbox hides, so a "
                            f"command inside could not run it")


def processes_with(marker: str) -> list[int]:
    """Every process whose command line holds `marker` (a pid inside a sandbox means nothing outside)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def wait_until(predicate, what: str, timeout: float = 10.0) -> None:
    """Poll `predicate` until true; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Listener:
    """A TCP port on loopback. The kernel completes a connection into the listen queue by itself,
    so what reached it is counted afterwards, without a thread: `connections()`."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        # A command that prints "connected" once its connection is established.
        self.connect_command = (f"{shlex.quote(sys.executable)} -c \"import socket; socket.create_connection("
                                f"('127.0.0.1', {self.port}), 5); print('connected')\" 2>&1")

    def connections(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1

    def close(self) -> None:
        self.sock.close()
