"""POST /api/import (CONTRACT §3): Numi's own export or ChatGPT's data export, all or nothing.

The answer: `chat_ids`, the chats made; `already`, how many of the file's chats were
here from an earlier import of the same source; `updated`, those of them that gained
messages (backend/store/import_plan.py); `prompts`, what became of the export's prompt
library (`added`, `already`, and `clashed`: the commands taken here by another prompt, which
was kept: backend/features/prompts/transfer.py). They come in with the chats or not at all.

The body is the JSON itself (application/json), or a multipart upload whose
`file` is that JSON or a zip holding it. A multipart upload streams to
files/.tmp (never whole in memory) and is deleted afterwards. Limits: the
request may be NUMI_MAX_IMPORT_MB (default 200) — over it, 413 — and a zip may
inflate to four times that (backend/store/import_read.py has the zip checks).
"""
from __future__ import annotations

from flask import Blueprint, request
from werkzeug.exceptions import RequestEntityTooLarge

from backend.api.files import receive_upload
from backend.errors import ApiError, invalid
from backend.features.prompts import transfer as prompt_transfer
from backend.runtime import runtime
from backend.store import import_read as rd
from backend.store.files import TooLarge, human_size
from backend.store.import_chatgpt import parse_chatgpt
from backend.store.import_write import Outcome, write_import
from backend.turns.registry import CommandError

bp = Blueprint("importer", __name__)


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "import_too_large",
                    f"The file is larger than {human_size(limit)}, the most Numi imports at once "
                    f"(the limit is set by NUMI_MAX_IMPORT_MB). Nothing was imported.")


@bp.post("/api/import")
def import_chats():
    limit = rd.max_import_bytes()
    store = runtime().files
    blobs, safe_zip = [], None
    prompts: list[dict] = []
    try:
        if request.mimetype == "multipart/form-data":
            upload, _name = receive_upload(limit, _too_large,
                                           'Upload the export in a multipart field named "file".', blobs)
            if bytes(upload.head[:4]) == b"PK\x03\x04":
                safe_zip = rd.SafeZip(upload.path, limit)
                kind, raw = rd.find_document(safe_zip)
            else:
                upload.seek(0)
                raw, kind = upload.read(), None
        else:
            if request.content_length is not None and request.content_length > limit:
                raise _too_large(limit)
            request.max_content_length = limit
            try:
                raw, kind = request.get_data(cache=False), None
            except RequestEntityTooLarge:
                raise _too_large(limit) from None
            if not raw:
                raise invalid({"body": "Send a Numi export or a ChatGPT conversations.json, "
                                       "or upload the file as multipart/form-data in a field named \"file\"."})
        doc = rd.parse_json(raw)
        del raw
        kind = kind or rd.detect(doc)
        if kind == "numi":
            if not isinstance(doc, dict):
                raise rd.ImportRefused("numi-export.json is not a Numi export (it is not a JSON object).")
            chats = rd.parse_numi(doc)
            prompts = prompt_transfer.parse(doc)
        else:
            if not isinstance(doc, list):
                raise rd.ImportRefused("conversations.json is not a ChatGPT export (it is not a list).")
            chats = parse_chatgpt(doc)
        if chats or not prompts:
            outcome = write_import(store, chats, safe_zip, limit,
                                   also=(lambda: prompt_transfer.write(prompts)) if prompts else None)
        else:  # prompts alone (an export made before any chat)
            outcome = Outcome(created=[], already=0, updated=[], switch={}, also=prompt_transfer.write(prompts))
    except rd.ImportRefused as exc:
        raise ApiError(exc.status, exc.code, exc.message, exc.fields) from None
    except TooLarge as exc:
        raise _too_large(exc.limit) from None
    finally:
        if safe_zip is not None:
            safe_zip.close()
        for blob in blobs:
            blob.discard()
    for chat_id, message_id in outcome.switch.items():
        try:  # a chat here that the file continues: its branch runs on into what was added
            runtime().turns.switch(chat_id, message_id)
        except CommandError:
            pass  # a reply is being written there: the new messages wait as another version
    events = runtime().app_events
    if outcome.created and any(c.folder for c in chats):
        events.folders_changed()
    for chat_id in outcome.created + outcome.updated:
        events.chat_changed(chat_id)
    prompts_did = outcome.also or {"added": 0, "already": 0, "clashed": []}
    return {"chat_ids": outcome.created, "already": outcome.already, "updated": outcome.updated,
            "prompts": prompts_did}, 201
