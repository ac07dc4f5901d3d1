"""Documents over HTTP (CONTRACT §9): a chat's list, one document (at a version), the person's edit, a diff.

`GET /api/chats/{id}/documents` lists them without their text; `GET /api/documents/{id}` gives the
text of the latest version (`?version=N`: of that one) and every version's number, author and time;
`PATCH /api/documents/{id}` `{"content","base_version"}` makes a version authored "person" (409 with
`latest_version` when `base_version` is not the latest; the same text again changes nothing) and
publishes `doc_update` on the chat's socket; `GET /api/documents/{id}/diff?from=A&to=B` is a
unified diff (diff.py). The app's request guard covers them all (token, Host, Origin, body type).
"""
from __future__ import annotations

from flask import Blueprint, current_app, jsonify, request

from backend.errors import ApiError, error_body, invalid, not_found
from backend.features.documents import diff, languages, store, tools
from backend.fields import Fields
from backend.request_body import json_body
from backend.store import chats
from backend.store.serialize import iso
from backend.turns import features

bp = Blueprint("documents", __name__)
READ_ONLY = ("id", "chat_id", "title", "language", "version", "latest_version", "versions", "size", "extension",
             "created_at", "updated_at")
VERSION_MAX = 2**63 - 1


def listed(doc: store.Doc, size: int) -> dict:
    """A document as a chat's list shows it: no text, no versions."""
    return {"id": doc.id, "chat_id": doc.chat_id, "title": doc.title, "language": doc.language,
            "extension": languages.EXTENSIONS.get(doc.language, ".txt"), "version": doc.version, "size": size,
            "created_at": iso(doc.created_at), "updated_at": iso(doc.updated_at)}


def whole(doc: store.Doc, version: int | None = None) -> dict:
    """A document with the text of `version` (None: the latest) and every version's number, author and time."""
    shown = doc.version if version is None else version
    text = store.text(doc, shown)
    if text is None:
        raise ApiError(404, "not_found", f"This document has no version {shown:,}: its versions are 1 to "
                                         f"{doc.version:,}.")
    versions = store.versions(doc)
    return {**listed(doc, len(text)), "content": text, "version": shown, "latest_version": doc.version,
            "versions": [{"version": v.version, "author": v.author, "created_at": iso(v.created_at),
                          "size": v.size, "message_id": v.message_id} for v in versions]}


def _document(doc_id: str) -> store.Doc:
    doc = store.get(doc_id)
    if doc is None:
        raise not_found("document")
    return doc


def _version_arg(name: str, lowest: int = 1) -> int | None:
    raw = request.args.get(name)
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit() or not lowest <= int(raw) <= VERSION_MAX:
        raise invalid({name: f"Must be a version number: a whole number from {lowest} up."})
    return int(raw)


@bp.get("/api/chats/<chat_id>/documents")
def chat_documents(chat_id):
    if chats.get(chat_id) is None:
        raise not_found("chat")
    return {"items": [listed(doc, size) for doc, size in store.sizes(chat_id)]}


@bp.get("/api/documents/<doc_id>")
def get_document(doc_id):
    version = _version_arg("version")
    return whole(_document(doc_id), version)


class _Stale(Exception):
    def __init__(self, latest: int):
        self.latest = latest


@bp.patch("/api/documents/<doc_id>")
def patch_document(doc_id):
    doc = _document(doc_id)
    f = Fields(json_body(), ("content", "base_version"), READ_ONLY)
    content = f.text("content", max_len=tools.CONTENT_MAX_BYTES, required=True)
    base = f.raw("base_version", True, False)
    if isinstance(content, str) and len(content.encode("utf-8")) > tools.CONTENT_MAX_BYTES:
        f.fail("content", f"A document holds at most 1 MB ({tools.CONTENT_MAX_BYTES:,} bytes of UTF-8); this text "
                          f"is {tools.size_label(len(content.encode('utf-8')))}.")
    if base is not None and not f.errors.get("base_version") and (
            isinstance(base, bool) or not isinstance(base, int) or not 1 <= base <= VERSION_MAX):
        f.fail("base_version", "Must be the version number your text started from (a whole number from 1 up).")
    f.check()
    assert isinstance(content, str) and isinstance(base, int)

    def change(old: str, latest: store.Doc) -> str:
        if content != old and base != latest.version:
            raise _Stale(latest.version)
        return content

    try:
        revised = store.revise(doc.id, change, "person")
    except store.Unchanged:  # the same text again (a PATCH sent twice): nothing to make
        return whole(_document(doc_id))
    except _Stale as stale:
        return _conflict(base, stale.latest)
    if revised is None:  # its chat was purged meanwhile
        raise not_found("document")
    # Every window of the chat follows (the panel of another window reloads it).
    features.chat_event(current_app, revised.chat_id, "doc_update", doc_id=revised.id, version=revised.version,
                        author="person")
    return whole(revised)


def _conflict(base: int, latest: int):
    body = error_body("conflict", f"This document changed after version {base:,}: version {latest:,} is the latest "
                                  f"now. Reload it to see that text, or save yours again with base_version "
                                  f"{latest:,} to keep both (the other stays among its versions).")
    body["error"]["latest_version"] = latest
    return jsonify(body), 409


@bp.get("/api/documents/<doc_id>/diff")
def document_diff(doc_id):
    doc = _document(doc_id)
    to = _version_arg("to")
    to = doc.version if to is None else to
    start = _version_arg("from", lowest=0)
    start = max(0, to - 1) if start is None else start
    for number in (start, to):
        if number > doc.version:
            raise ApiError(404, "not_found", f"This document has no version {number:,}: its versions are 1 to "
                                             f"{doc.version:,}.")
    new = store.text(doc, to) or ""
    old = store.text(doc, start) if start else None
    text, added, removed = diff.unified(old, new, doc.title, start, to)
    if not text:
        text = f"Version {start:,} and version {to:,} have the same text." if start else "Version 1 is empty."
    return {"doc_id": doc.id, "from": start, "to": to, "diff": text, "added": added, "removed": removed}


def register(app) -> None:
    app.register_blueprint(bp)
