"""Serving the app on loopback: bind, announce in server.json, shut down in order."""
from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from werkzeug.serving import make_server

from backend import __version__
from backend.app import Config, create_app
from backend.fdlimit import raise_open_file_limit

log = logging.getLogger(__name__)
SHUTDOWN_BUDGET_S = 8.0  # the contract allows 10 s from SIGTERM to exit


class NumiServer:
    """The backend on its own thread; the caller decides what the main thread does."""

    def __init__(self, config: Config):
        from backend.store.db import open_database

        raise_open_file_limit()  # before the first descriptor a client or the database costs
        config.data_dir.mkdir(parents=True, exist_ok=True)
        open_database(str(config.data_dir / "numi.db"), config.db_busy_timeout_ms)
        self.config = config
        self.app = create_app(config)
        # Loopback only, by design: there is no option to bind anywhere else.
        self.httpd = make_server("127.0.0.1", config.port, self.app, threaded=True)
        self.httpd.daemon_threads = True
        config.port = self.httpd.server_port
        self.app.config["PORT"] = config.port
        self.url = f"http://127.0.0.1:{config.port}/"
        self.info_path = config.data_dir / "server.json"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="http", daemon=True)

    @property
    def runtime(self):
        return self.app.extensions["numi"]

    def start(self) -> None:
        self.runtime.start()
        self._thread.start()
        write_private_json(self.info_path, {
            "pid": os.getpid(), "port": self.config.port, "url": self.url,
            "token": self.config.token, "version": __version__,
        })
        log.info("Numi %s serving %s (data dir %s)", __version__, self.url, self.config.data_dir)

    def stop(self) -> None:
        """Stop new turns, stop running ones like Stop does, then close the server."""
        try:
            self.info_path.unlink(missing_ok=True)
            self.runtime.shutdown(timeout=SHUTDOWN_BUDGET_S - 2)
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
            log.info("Numi stopped")


def write_private_json(path: Path, data: dict) -> None:
    """Write `data` readable by this user only, atomically (write, then rename)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, 0o600)  # before any byte: a temp file a crash left keeps its old mode through O_CREAT
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
