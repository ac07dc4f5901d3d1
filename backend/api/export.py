"""Export (CONTRACT §3): one chat as JSON or Markdown, or everything as a zip.

The formats are in backend/store/export_format.py and docs/PROTOCOL.md
("Export and import"). Nothing from the catalog, the settings or the keyring is
part of an export; the zip of everything carries the prompt library too.
"""
from __future__ import annotations

import json
import tempfile
import time

from flask import Blueprint, Response, request, send_file

from backend.api.chats import _chat
from backend.api.files import _disposition
from backend.errors import invalid
from backend.features.prompts import transfer as prompts
from backend.runtime import runtime
from backend.store import export_format as fmt
from backend.store.models import Chat

bp = Blueprint("export", __name__)


@bp.get("/api/chats/<chat_id>/export")
def export_chat(chat_id):
    kind = request.args.get("format", "json")
    if kind not in ("json", "md"):
        raise invalid({"format": 'Must be "json" or "md".'})
    chat = _chat(chat_id)
    store = runtime().files
    stem = f"{fmt.safe_stem(chat.title)}-{chat.id}"
    if kind == "md":
        body, mime = fmt.to_markdown(fmt.chat_export(chat), fmt.model_labels()), "text/markdown; charset=utf-8"
    else:
        # Inline bytes: one chat's JSON is a complete export on its own.
        def inline(sha):
            path = store.path(sha)
            return path.read_bytes() if path.is_file() else None
        body = json.dumps(fmt.document([fmt.chat_export(chat, inline)]), ensure_ascii=False, indent=1)
        mime = "application/json; charset=utf-8"
    response = Response(body, mimetype=mime)
    response.headers["Content-Type"] = mime
    response.headers["Content-Disposition"] = _disposition("attachment", f"{stem}.{kind}")
    return response


@bp.get("/api/export")
def export_all():
    chats = list(Chat.select().where(Chat.deleted_at.is_null(), Chat.temporary == False)  # noqa: E712
                 .order_by(Chat.created_at, Chat.id))
    # An unnamed temporary file: it disappears when the response closes it, even after a crash.
    out = tempfile.TemporaryFile(prefix="numi-export-")
    fmt.write_zip(out, chats, runtime().files.path, prompts.exported())
    out.seek(0)
    name = time.strftime("numi-export-%Y%m%d-%H%M%S.zip")
    response = send_file(out, mimetype="application/zip", as_attachment=True, download_name=name,
                         conditional=False, etag=False, max_age=None)
    response.headers["Content-Disposition"] = _disposition("attachment", name)
    return response
