import os

import pytest

from backend.features import register_all
from tests.numi_client import ServerProcess
from tests.secret_service import secret_service  # noqa: F401 (a fixture)

# The features plug into the engine as the server's Runtime plugs them in, so the parts of the
# engine tested alone (hubs, tool sets, event checks) know their events and tools.
register_all()

# Tests never touch the person's real keyring; the keyring tests opt in to a real one.
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")


@pytest.fixture
def store(tmp_path):
    """A fresh database for in-process store tests, connected on this thread."""
    from backend.store.db import db, open_database

    open_database(str(tmp_path / "numi.db"))
    db.connect(reuse_if_open=True)
    yield
    db.close()


@pytest.fixture
def database_at(tmp_path):
    """`database_at(n)`: a database file migrated only to version n, for a migration's test; (path, db)."""
    import peewee

    from backend.store.db import db
    from backend.store.migrations import migrate

    opened = []

    def at(version: int):
        path = tmp_path / "numi.db"
        old = peewee.SqliteDatabase(str(path))
        old.connect()
        opened.append(old)
        assert migrate(old, target=version) == version
        return path, old

    yield at
    for old in opened:
        if not old.is_closed():
            old.close()
    if not db.is_closed():
        db.close()


@pytest.fixture
def engine(tmp_path):
    """The turn engine in process (tests/engine.py) with the test plugin tools."""
    from tests.engine import Engine, plugin_tools

    e = Engine(tmp_path, tools=plugin_tools())
    yield e
    e.close()


@pytest.fixture
def server(tmp_path):
    """A real Numi server process on a fresh data dir."""
    proc = ServerProcess(tmp_path / "data").start()
    yield proc
    proc.stop()


@pytest.fixture
def api(server):
    return server.api()


@pytest.fixture
def start_server(tmp_path):
    """Start real servers with extra env (e.g. a short busy timeout); all are stopped afterwards."""
    started = []

    def start(env: dict | None = None, data_dir=None, fresh: bool = False) -> ServerProcess:
        """`fresh`: a new interpreter, for a test of what only one shows (its /proc/<pid>/environ)."""
        proc = ServerProcess(data_dir or tmp_path / f"data{len(started)}", env=env, fresh=fresh).start()
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture
def fake():
    from tests.fakeprovider.server import FakeProvider

    provider = FakeProvider()
    yield provider
    provider.close()


class Setup:
    """A server with one OpenAI-compatible provider pointing at the fake, one model, and helpers."""

    def __init__(self, server, fake):
        self.server, self.fake, self.api = server, fake, server.api()
        r = self.api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake Local",
                                             "base_url": fake.base_url, "api_key": "sk-test-not-real",
                                             "timeout": 10})
        assert r.status == 201, r
        self.provider = r.body
        r = self.api.post("/api/models", {"provider_id": self.provider["id"], "api_model": "fake-model",
                                          "label": "Fake"})
        assert r.status == 201, r
        self.model = r.body
        # Requests carry only what each test put in them: the date's line (on by default, CONTRACT
        # §12) is tests/test_protocol_personal.py's to check.
        r = self.api.patch("/api/settings", {"personal": {"date": False}})
        assert r.status == 200, r

    def chat(self, **fields) -> str:
        r = self.api.post("/api/chats", {"model_id": self.model["id"], **fields})
        assert r.status == 201, r
        return r.body["id"]

    def socket(self, chat_id, **kw):
        from tests.numi_client import Socket
        return Socket(self.server, chat_id, **kw)

    def messages(self, chat_id) -> list[dict]:
        r = self.api.get(f"/api/chats/{chat_id}/messages?limit=200")
        assert r.status == 200, r
        return r.body["items"]


@pytest.fixture
def setup_with(start_server, fake):
    """A Setup on a server started with extra env (limits, timeouts), with the test tools loaded."""
    def make(env: dict | None = None) -> Setup:
        return Setup(start_server({"NUMI_TOOL_PLUGINS": "tests.tool_plugin", **(env or {})}), fake)
    return make


@pytest.fixture
def setup(setup_with):
    return setup_with()
