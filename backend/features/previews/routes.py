"""`GET /api/documents/{id}/preview?version=N` (CONTRACT §9): the address of a version's preview."""
from __future__ import annotations

import re

from flask import Blueprint, current_app, request

from backend.errors import ApiError, invalid, not_found
from backend.features.previews.pages import PREVIEWABLE
from backend.features.previews.service import PreviewService
from backend.turns import features

bp = Blueprint("previews", __name__)
_VERSION = re.compile(r"[0-9]{1,10}")


def _version() -> int | None:
    given = request.args.get("version")
    if given is None:
        return None
    if not _VERSION.fullmatch(given):
        raise invalid({"version": "Must be a version's number, like 3 (leave it out for the latest)."})
    return int(given)


@bp.get("/api/documents/<doc_id>/preview")
def preview(doc_id: str):
    version = _version()
    service: PreviewService | None = features.service(current_app, "previews")
    documents = service.documents() if service is not None else None
    found = documents.content(doc_id, version) if documents is not None else None
    if found is None:
        if version is not None and documents is not None and documents.content(doc_id) is not None:
            raise ApiError(404, "not_found", f"This document has no version {version}. "
                                             "Its versions are listed with the document.")
        raise not_found("document")
    _chat_id, language, version, _text = found
    if str(language).lower() not in PREVIEWABLE:
        raise ApiError(422, "no_preview", f"A {language} document has no preview; only HTML, SVG, Mermaid "
                                          "and Markdown documents are shown as they would look.")
    url = service.url(doc_id, version) if service is not None else None
    if url is None:
        raise ApiError(503, "previews_unavailable", "Previews are not available: their listener did not "
                                                    "start (Numi's log says why). Restart Numi to try again.")
    return {"url": url}


def register(app) -> None:
    app.register_blueprint(bp)
    service = features.service(app, "previews")
    if service is not None:
        service.attach(app)
