import os

import pytest

from tests.numi_client import ServerProcess

# Tests never touch the person's real keyring; the keyring tests opt in to a real one.
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


@pytest.fixture
def server(tmp_path):
    """A real Numi server process on a fresh data dir."""
    proc = ServerProcess(tmp_path / "data").start()
    yield proc
    proc.stop()


@pytest.fixture
def api(server):
    return server.api()
