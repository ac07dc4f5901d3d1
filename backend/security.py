"""The contract's §2 rules, applied before any route runs.

flask-sock completes the WebSocket handshake before the route function is
called, so every check lives in before_request: a refused upgrade is a plain
HTTP 403/401, never a 101 followed by a close.
"""
from __future__ import annotations

import hmac
import logging

from flask import current_app, jsonify, request

from backend import sign_in
from backend.errors import error_body
from backend.sign_in import COOKIE

CSP = ("default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data: blob:; "
       "style-src 'self' 'unsafe-inline'; font-src 'self' data:; object-src 'none'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
# The app's config key for the one origin its pages may frame (the preview listener's, CONTRACT §2
# and §9): a feature sets it once that listener is bound (docs/FEATURES.md). Unset: frames fall back to
# default-src 'self'.
FRAME_SRC = "FRAME_SRC"
log = logging.getLogger(__name__)
BODY_TYPES = ("application/json", "multipart/form-data")
# Fetch metadata a browser adds to a request it makes itself (not typed or opened from outside).
# Cookies ignore ports, so a page on any other 127.0.0.1 port is "same-site" and would carry
# numi_session: only the page's own requests and navigations from outside may use the cookie.
SITES_ALLOWED_WITH_COOKIE = ("same-origin", "none")


def _refuse(status: int, code: str, message: str):
    return jsonify(error_body(code, message)), status


def _allowed_hosts() -> tuple[str, ...]:
    port = current_app.config["PORT"]
    return (f"127.0.0.1:{port}", f"localhost:{port}")


def _authenticated_by() -> str | None:
    """"bearer" when the request carries the token, "cookie" when it carries the session secret, else None.

    Each secret counts only in its own place: the cookie's value is useless as a Bearer token
    and the token is no cookie, so what a browser hands other 127.0.0.1 ports never opens
    the token-only routes."""
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        way, given, secret = "bearer", header[7:], current_app.config["TOKEN"]
    else:
        way, given, secret = "cookie", request.cookies.get(COOKIE, ""), current_app.config["SESSION"]
    return way if given and hmac.compare_digest(given.encode(), secret.encode()) else None


def signed_in() -> bool:
    """Does this request carry the token or this run's session cookie?"""
    return _authenticated_by() is not None


def _from_another_site() -> bool:
    """The browser says another page made this request (absent: not a browser, or an older one)."""
    site = request.headers.get("Sec-Fetch-Site")
    return site is not None and site.strip().lower() not in SITES_ALLOWED_WITH_COOKIE


def _is_upgrade() -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


def _has_body() -> bool:
    return bool(request.content_length) or "chunked" in request.headers.get("Transfer-Encoding", "").lower()


def check_request():
    if request.host not in _allowed_hosts():
        return _refuse(403, "forbidden_host", "This address is only served as 127.0.0.1 or localhost.")
    path = request.path
    guarded = path.startswith("/api/") and path != "/api/health" or path.startswith("/ws/")
    if _is_upgrade() or (path.startswith("/api/") and request.method != "GET"):
        origin = request.headers.get("Origin")
        if origin is not None and origin not in tuple("http://" + h for h in _allowed_hosts()):
            return _refuse(403, "forbidden_origin", "Requests from other web pages are not allowed.")
    if path == "/" and "token" in request.args:
        return _sign_in(request.args["token"])
    if guarded:
        way = _authenticated_by()
        if way is None:
            return _refuse(401, "unauthorized", "Sign in again: open Numi from its window or the address it printed.")
        if way == "cookie" and _from_another_site():
            # Said in the log: a page the person has open is trying to use their sign-in.
            log.warning("Refused %s %s: another web page (Sec-Fetch-Site: %s) sent Numi's sign-in cookie",
                        request.method, path, request.headers.get("Sec-Fetch-Site"))
            return _refuse(403, "forbidden_site", "Another web page asked for Numi's data with your sign-in; "
                                                  "that is not allowed. Use Numi in its own window or tab.")
    if path.startswith("/api/") and request.method not in ("GET", "HEAD", "OPTIONS") and _has_body():
        mime = request.mimetype
        if mime not in BODY_TYPES:
            return _refuse(415, "unsupported_media_type", "Send the request body as application/json.")
    if _is_upgrade():
        # No permessage-deflate: the 1 MiB frame limit is on the bytes as received.
        request.environ.pop("HTTP_SEC_WEBSOCKET_EXTENSIONS", None)
    return None


def _sign_in(given: str):
    """`GET /?token=<token>` (CONTRACT §2): the cookie, or a 401 page that sets none."""
    if not hmac.compare_digest(given.encode(), current_app.config["TOKEN"].encode()):
        return sign_in.signed_out_page("This sign-in address is not valid: open Numi from its window, "
                                       "or use the address numi --headless printed.")
    return sign_in.session_response()


def _csp() -> str:
    frames = current_app.config.get(FRAME_SRC)
    return f"{CSP}; frame-src {frames}" if frames else CSP


def harden_response(response):
    response.headers.setdefault("Content-Security-Policy", _csp())
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    if request.path.startswith("/api/"):
        response.headers.setdefault("Cache-Control", "no-store")
    return response


def init_app(app) -> None:
    app.before_request(check_request)
    app.after_request(harden_response)
    sign_in.init_app(app)
