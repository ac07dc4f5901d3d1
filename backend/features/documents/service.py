"""What documents offer other features: "documents" (backend/turns/features.Documents), a document's text by id.

The previews feature reads a document's text at a version through it; features never import
each other, so it finds this object with `AppContext.provided("documents")`.
"""
from __future__ import annotations

from typing import Any

from backend.features.documents import store
from backend.store.db import short_connection
from backend.turns.features import FeatureService


class Documents:
    """`content(doc_id, version=None) -> (chat_id, language, version, text) | None`."""

    def content(self, doc_id: str, version: int | None = None) -> tuple[str, str, int, str] | None:
        if not isinstance(doc_id, str) or (version is not None and (isinstance(version, bool) or version < 1)):
            return None
        with short_connection():  # any thread: one that had no connection keeps none
            doc = store.get(doc_id)
            if doc is None:
                return None
            number = doc.version if version is None else version
            text = store.text(doc, number)
        return None if text is None else (doc.chat_id, doc.language, number, text)


class DocumentsService(FeatureService):
    def __init__(self, ctx):
        self.documents = Documents()

    def provides(self) -> dict[str, Any]:
        return {"documents": self.documents}
