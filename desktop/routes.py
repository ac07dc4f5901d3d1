"""The HTTP routes only the desktop app adds to its in-process server.

Sign-in is backend/sign_in.py's: the window opens a one-time `/_sign-in/<nonce>`
(60 s), so the launch token never appears in a URL, a history entry or a log line.

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

from typing import Callable

from flask import Flask, jsonify, request

from backend.errors import error_body
from backend.sign_in import CHAT_ID


def install(app: Flask, show: Callable[[str | None], None],
            pick_folder: Callable[[], str | None] = lambda: None) -> None:
    """Add the routes; call before the server starts serving."""

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

    app.add_url_rule("/api/desktop/pick-folder", "desktop_pick_folder", desktop_pick_folder, methods=["POST"])
    app.add_url_rule("/api/desktop/show", "desktop_show", desktop_show, methods=["POST"])
