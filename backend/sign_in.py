"""One-time sign-in addresses: `/_sign-in/<nonce>` sets the session cookie once, then is spent.

The launch token never needs to appear in a URL, a terminal or a log: whoever
would open Numi (the desktop window, `numi --headless`, a second `numi
--headless` on the same data dir) gets a fresh random nonce instead. A nonce
exists only in this process's memory, works once, and expires: 60 s for the
window that opens it at once, 10 minutes for an address printed for a person
to copy. A nonce that leaked afterwards is already spent.

`POST /api/sign-in-links` (Bearer token only) makes one for another process —
the second `numi --headless`, which read the token from the 0600 server.json.
"""
from __future__ import annotations

import html
import re
import secrets
import threading
import time

from flask import Flask, current_app, jsonify, redirect, request

from backend.errors import error_body

PATH = "/_sign-in/"
COOKIE = "numi_session"  # the session cookie a sign-in sets; security.py checks it on every request
WINDOW_TTL_S = 60.0  # the desktop window opens its address at once
PRINTED_TTL_S = 600.0  # a person copies a printed address into a browser
MAX_LIVE = 256  # unspent nonces kept; the oldest go first (each is a few dozen bytes)
CHAT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SPENT = ("This sign-in address was already used or has expired: open Numi from its window, "
         "or run numi --headless again for a fresh address.")


class SignInLinks:
    """Single-use, short-lived nonces, each worth one session cookie."""

    def __init__(self):
        self._lock = threading.Lock()
        self._nonces: dict[str, float] = {}

    def new_path(self, ttl_s: float = PRINTED_TTL_S) -> str:
        """A fresh `/_sign-in/<nonce>` that works once within `ttl_s` seconds."""
        nonce = secrets.token_urlsafe(24)
        now = time.monotonic()
        with self._lock:
            for old, deadline in list(self._nonces.items()):
                if deadline <= now:
                    del self._nonces[old]
            while len(self._nonces) >= MAX_LIVE:
                del self._nonces[next(iter(self._nonces))]
            self._nonces[nonce] = now + ttl_s
        return PATH + nonce

    def spend(self, nonce: str) -> bool:
        """True once for a live nonce; it is gone afterwards, whether it was live or not."""
        with self._lock:
            deadline = self._nonces.pop(nonce, None)
        return deadline is not None and time.monotonic() < deadline


def links(app: Flask | None = None) -> SignInLinks:
    return (app or current_app).extensions["sign_in"]


def signed_out_page(sentence: str, status: int = 401):
    """A small laid-out page (no script) that says in one sentence how to sign in."""
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>Numi — sign in</title>
<style>
body {{ margin: 0; min-height: 100vh; display: grid; place-items: center; font: 15px/1.5 system-ui, sans-serif;
  background: Canvas; color: CanvasText; }}
main {{ max-width: 30rem; padding: 2rem; border: 1px solid color-mix(in srgb, CanvasText 15%, transparent);
  border-radius: 12px; margin: 1rem; }}
h1 {{ font-size: 1.25rem; margin: 0 0 .5rem; }}
p {{ margin: 0; }}
</style></head>
<body><main class="signed-out"><h1>Numi</h1><p>{html.escape(sentence)}</p></main></body></html>"""
    return page, status, {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"}


def session_response(target: str = ""):
    """303 to `/` (or to chat `target`) with the session cookie set."""
    location = "/" + (f"#/c/{target}" if CHAT_ID.match(target) else "")
    response = redirect(location, code=303)
    response.set_cookie(COOKIE, current_app.config["SESSION"], httponly=True, samesite="Strict", path="/")
    response.headers["Cache-Control"] = "no-store"
    return response


def init_app(app: Flask) -> None:
    app.extensions["sign_in"] = SignInLinks()

    @app.get(PATH + "<nonce>")
    def sign_in_with_nonce(nonce):
        if not links().spend(nonce):
            return signed_out_page(SPENT)
        return session_response(request.args.get("to", ""))

    @app.post("/api/sign-in-links")
    def new_sign_in_link():
        # Only for the token holder (a process that read server.json), not for a page the
        # cookie signed in: a page has no need to mint addresses that sign in.
        if not request.headers.get("Authorization", "").startswith("Bearer "):
            return jsonify(error_body("forbidden", "Ask for a sign-in address with the token from "
                                                   "server.json (Authorization: Bearer).")), 403
        path = links().new_path(PRINTED_TTL_S)
        origin = request.host_url.rstrip("/")
        return jsonify({"url": origin + path, "expires_in_s": int(PRINTED_TTL_S)}), 201
