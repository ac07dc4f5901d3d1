"""The two HTTP routes only the desktop app adds to its in-process server.

Sign-in without the token in any URL: the window opens
`/_desktop/sign-in/<nonce>`, where the nonce is a fresh random value that works
once, for 60 s, and only in this process. That answer sets the same
`numi_session` cookie `GET /?token=` sets (HttpOnly, SameSite=Strict) and
redirects to `/`. The launch token itself never appears in a URL, a history
entry or a log line; a nonce that did leak is already spent.

`POST /api/desktop/show` (token required, like every /api route) is how a second
`numi` on the same data dir hands over: it reads the token from the 0600
server.json and asks this process to show its window (optionally at a chat).
A headless server has no such route (404), which tells the second launch that
there is no window to show.

`POST /api/desktop/pick-folder` opens the native folder dialog over the window and
answers `{"path": "/chosen/folder"}` or `{"path": null}` (cancelled); the page uses it
to choose a chat's workspace, and falls back to typing the path where it is 404.
"""
from __future__ import annotations

import re
import secrets
import threading
import time
from typing import Callable

from flask import Flask, jsonify, redirect, request

from backend.errors import error_body
from backend.security import COOKIE

NONCE_TTL_S = 60.0
CHAT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class SignIn:
    def __init__(self, token: str):
        self._token = token
        self._lock = threading.Lock()
        self._nonces: dict[str, float] = {}

    def new_path(self) -> str:
        nonce = secrets.token_urlsafe(24)
        with self._lock:
            self._nonces[nonce] = time.monotonic() + NONCE_TTL_S
        return f"/_desktop/sign-in/{nonce}"

    def spend(self, nonce: str) -> bool:
        with self._lock:
            deadline = self._nonces.pop(nonce, None)
        return deadline is not None and time.monotonic() < deadline

    def response(self, nonce: str):
        if not self.spend(nonce):
            return ("<!doctype html><title>Numi</title><p>This sign-in link was already used. "
                    "Close this window and open Numi again.</p>", 401, {"Content-Type": "text/html"})
        target = request.args.get("to", "")
        location = "/" + (f"#/c/{target}" if CHAT_ID.match(target) else "")
        response = redirect(location, code=303)
        response.set_cookie(COOKIE, self._token, httponly=True, samesite="Strict", path="/")
        return response


def install(app: Flask, sign_in: SignIn, show: Callable[[str | None], None],
            pick_folder: Callable[[], str | None] = lambda: None) -> None:
    """Add the routes; call before the server starts serving."""

    def desktop_sign_in(nonce):
        return sign_in.response(nonce)

    def desktop_show():
        body = request.get_json(silent=True) or {}
        chat_id = body.get("chat_id") if isinstance(body, dict) else None
        if chat_id is not None and not (isinstance(chat_id, str) and CHAT_ID.match(chat_id)):
            return jsonify(error_body("invalid", "chat_id is not a chat id.", {"chat_id": "not a chat id"})), 422
        show(chat_id)
        return jsonify({"shown": True})

    def desktop_pick_folder():
        # The native folder dialog: a page cannot learn a folder's path by itself.
        return jsonify({"path": pick_folder()})

    app.add_url_rule("/_desktop/sign-in/<nonce>", "desktop_sign_in", desktop_sign_in, methods=["GET"])
    app.add_url_rule("/api/desktop/pick-folder", "desktop_pick_folder", desktop_pick_folder, methods=["POST"])
    app.add_url_rule("/api/desktop/show", "desktop_show", desktop_show, methods=["POST"])
