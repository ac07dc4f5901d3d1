"""Every request the server receives, for tests that check none came from somewhere: a WSGI
wrapper in front of the whole app, and `GET /api/test/requests` → {"items": [{"method", "path",
"origin", "site"}]} (the path with its query; Origin and Sec-Fetch-Site as sent, or null).

Loaded into the server through NUMI_TOOL_PLUGINS. Its own listing requests are left out.
"""
from __future__ import annotations

import threading

from backend.turns import features

LISTING = "/api/test/requests"
_lock = threading.Lock()
_seen: list[dict] = []


def _routes(app) -> None:
    inner = app.wsgi_app

    def counted(environ, start_response):
        if environ.get("PATH_INFO") != LISTING:
            query = environ.get("QUERY_STRING")
            with _lock:
                _seen.append({"method": environ.get("REQUEST_METHOD"),
                              "path": environ.get("PATH_INFO", "") + (f"?{query}" if query else ""),
                              "origin": environ.get("HTTP_ORIGIN"), "site": environ.get("HTTP_SEC_FETCH_SITE")})
        return inner(environ, start_response)

    app.wsgi_app = counted

    @app.get(LISTING)
    def test_requests():
        with _lock:
            return {"items": list(_seen)}


def register(registry):
    """No tools: the feature that logs requests."""
    features.register(features.Feature(name="request_log", routes=_routes))
