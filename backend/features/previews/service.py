"""The previews feature's service: the preview listener for the app's lifetime, and the app's frame-src.

The documents come from whichever feature provides "documents" (`features.Documents`:
`content(doc_id, version=None) -> (chat_id, language, version, text) | None`), looked up at
each use. The app is handed over by the feature's `routes` hook (the service is made before
the app's routes), so that the listener's pages name the app as the only page that may frame
them, and the app's pages name the listener as the only origin they may frame (`FRAME_SRC` in
the app's config, read by backend/security.py).
"""
from __future__ import annotations

import logging
from typing import Any

from backend.features.previews.listener import PreviewListener
from backend.store.db import short_connection
from backend.turns.features import AppContext, Documents, FeatureService

log = logging.getLogger(__name__)
FRAME_SRC = "FRAME_SRC"  # the app config's key for the one origin its pages may frame (backend/security.py)


class PreviewService(FeatureService):
    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.app: Any = None  # the Flask app, once its routes are made
        self.listener: PreviewListener | None = None

    def attach(self, app) -> None:
        self.app = app

    def documents(self) -> Documents | None:
        """What provides "documents" now (backend/turns/features.Documents), or None."""
        return self.ctx.provided("documents")

    def start(self) -> None:
        listener = PreviewListener(self._content, self._app_port)
        listener.start()
        self.listener = listener
        if self.app is not None:
            self.app.config[FRAME_SRC] = listener.origin
        log.info("document previews served at %s", listener.origin)

    def stop(self, timeout: float) -> None:
        listener, self.listener = self.listener, None
        if self.app is not None:
            self.app.config.pop(FRAME_SRC, None)
        if listener is not None:
            listener.stop()

    def url(self, doc_id: str, version: int) -> str | None:
        """The preview address of a document's version; None while the listener does not run."""
        listener = self.listener
        return listener.url(doc_id, version) if listener is not None else None

    def _app_port(self) -> int | None:
        return self.app.config.get("PORT") or None if self.app is not None else None

    def _content(self, doc_id: str, version: int) -> tuple[str, str] | None:
        documents = self.documents()
        if documents is None:
            return None
        with short_connection():  # the listener's threads are not the app's request threads
            found = documents.content(doc_id, version)
        if found is None:
            return None
        _chat_id, language, _version, text = found
        return str(language).lower(), text
