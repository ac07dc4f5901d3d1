"""The application factory: one Flask app per server, configured for one data dir."""
from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from flask import Flask

from backend import __version__, errors, security, web_assets
from backend.lazy_rules import LazyBuildRule
from backend.store.db import db

WEB_DIR = Path(__file__).resolve().parent.parent / "web"


@dataclass
class Config:
    data_dir: Path
    port: int = 0
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    # What the numi_session cookie carries: never the token, since a cookie for 127.0.0.1 also
    # reaches every other port there (docs/PROTOCOL.md, "The session cookie").
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    epoch: str = field(default_factory=lambda: secrets.token_hex(6))
    # Seconds between WebSocket pings; a client that misses one pong is closed.
    ping_interval: float = field(default_factory=lambda: float(os.environ.get("NUMI_WS_PING_INTERVAL", "25")))
    db_busy_timeout_ms: int = field(default_factory=lambda: int(os.environ.get("NUMI_DB_BUSY_TIMEOUT_MS", "5000")))


def create_app(config: Config) -> Flask:
    from backend.runtime import Runtime

    app = Flask(__name__, static_folder=None)
    app.url_rule_class = LazyBuildRule
    app.config.update(
        PORT=config.port, TOKEN=config.token, SESSION=config.session,
        MAX_CONTENT_LENGTH=64 * 1024 * 1024,
        SOCK_SERVER_OPTIONS={"ping_interval": config.ping_interval, "max_message_size": 1 << 20},
        JSON_SORT_KEYS=False,
    )
    app.extensions["numi"] = Runtime(config)
    errors.init_app(app)
    security.init_app(app)

    @app.before_request
    def _connect():
        db.connect(reuse_if_open=True)

    @app.teardown_request
    def _close(_exc):
        if not db.is_closed():
            db.close()

    from backend import ws, ws_app, ws_frames  # noqa: F401  the sockets register on ws_frames.sock first
    from backend.api import register_all
    register_all(app)
    from backend.turns import features
    for feature in features.registered():  # each feature's own routes (registered by the Runtime above)
        if feature.routes is not None:
            feature.routes(app)
    ws_frames.init_app(app)

    @app.get("/api/health")
    def health():
        return {"ok": True, "version": __version__}

    # NUMI_WEB_BUNDLE=0: web/app's modules as they are, even beside an up-to-date bundle.
    web_assets.init_app(app, WEB_DIR, bundle=os.environ.get("NUMI_WEB_BUNDLE", "1") != "0",
                        stored_theme=_stored_theme)
    return app


def _stored_theme() -> str | None:
    """The person's picked theme for a signed-in page request; None for anyone else (GET / holds no data)
    and when none is picked (the page's own cookie may still say one)."""
    from backend.api import ui_settings
    return ui_settings.theme() if security.signed_in() else None
