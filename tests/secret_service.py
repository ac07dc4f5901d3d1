"""A real Secret Service for tests: a private D-Bus session bus with an unlocked gnome-keyring on
it, as a person's desktop has. Servers reach it through `server_env()`; the test reads what they
stored with `password()`, in process."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

BACKEND = "keyring.backends.SecretService.Keyring"


class SecretService:
    """gnome-keyring on a D-Bus session bus of its own; `address` is the bus, `stop()` ends both."""

    def __init__(self, root: Path):
        missing = [t for t in ("dbus-daemon", "gnome-keyring-daemon") if not shutil.which(t)]
        if missing:
            pytest.skip(f"{' and '.join(missing)} not installed (apt-get install gnome-keyring dbus)")
        root.mkdir(parents=True, exist_ok=True)
        # Now and then on a loaded machine (twice in a day of suite runs) the daemon answers
        # on the bus but never makes the login keyring: that start is ended and another made.
        for attempt in range(3):
            self._start(root / f"try{attempt}")
            if self._wait_for_login_keyring():
                return
            self.stop()
        raise AssertionError("gnome-keyring made no unlocked login keyring in three starts")

    def _start(self, root: Path) -> None:
        root.mkdir()
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

    def _wait_for_login_keyring(self, timeout: float = 10.0) -> bool:
        """Whether the unlocked login keyring came within `timeout`: the daemon makes it a moment after
        it answers on the bus, and a client that asks before then is sent to a prompt nobody sees."""
        import secretstorage
        from secretstorage.exceptions import SecretServiceNotAvailableException, SecretStorageException

        deadline = time.monotonic() + timeout
        with self._on_bus():
            while True:
                try:
                    with closing(secretstorage.dbus_init()) as bus:
                        if not secretstorage.Collection(bus).is_locked():
                            return True
                except (SecretStorageException, SecretServiceNotAvailableException):
                    pass
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.02)  # polling the daemon's state: there is no event to wait on

    @contextmanager
    def _on_bus(self):
        """This process's D-Bus clients talk to this bus for the block."""
        before = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = self.address
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
            else:
                os.environ["DBUS_SESSION_BUS_ADDRESS"] = before

    def server_env(self) -> dict[str, str]:
        """What a Numi server needs in its environment to keep its secrets here."""
        return {"DBUS_SESSION_BUS_ADDRESS": self.address, "PYTHON_KEYRING_BACKEND": BACKEND}

    def password(self, service: str, user: str) -> str | None:
        """What the keyring holds for (service, user), read as any other program on the bus would."""
        from keyring.backends.SecretService import Keyring

        with self._on_bus():  # the backend connects to the bus this names
            return Keyring().get_password(service, user)

    def stop(self) -> None:
        self.bus.terminate()
        self.bus.wait(10)
        self.bus.stdout.close()


@pytest.fixture
def secret_service(tmp_path):
    service = SecretService(tmp_path / "secret-service")
    yield service
    service.stop()
