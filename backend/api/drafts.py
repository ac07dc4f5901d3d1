"""GET/PUT/DELETE /api/chats/{id}/draft: a chat's unsent message, kept server-side so it
survives switching chats, reloading and restarting (docs/PROTOCOL.md, "Drafts")."""
from __future__ import annotations

from flask import Blueprint

from backend.api.validate import MISSING, Fields, json_body
from backend.errors import not_found
from backend.protocol import MAX_CONTENT_CHARS
from backend.store import drafts
from backend.store.db import db
from backend.store.models import Chat, File
from backend.store.serialize import file_to_dict, files_by_id, iso

bp = Blueprint("drafts", __name__)
MAX_FILES = 20  # attachments a draft may hold


def _chat(chat_id: str) -> Chat:
    chat = Chat.get_or_none(Chat.id == chat_id)
    if chat is None or chat.deleted_at is not None:
        raise not_found("chat")
    return chat


def _json(draft) -> dict:
    if draft is None:
        return {"text": "", "file_ids": [], "files": [], "updated_at": None}
    ids = list(draft.file_ids or [])
    # The files' names, types and sizes: what the message box needs to show them as it left them.
    rows = files_by_id(ids)
    return {"text": draft.text, "file_ids": ids, "files": [file_to_dict(rows[i]) for i in ids if i in rows],
            "updated_at": iso(draft.updated_at)}


@bp.get("/api/chats/<chat_id>/draft")
def get_draft(chat_id):
    """The chat's draft; an empty one when there is none."""
    return _json(drafts.read(_chat(chat_id).id))


@bp.put("/api/chats/<chat_id>/draft")
def put_draft(chat_id):
    """Replace the chat's draft → 200 the draft (an empty one drops it)."""
    fields = Fields(json_body(), allowed=("text", "file_ids"))
    text = fields.text("text", max_len=MAX_CONTENT_CHARS, required=True)
    file_ids = fields.raw("file_ids", False, False)
    with db.atomic():
        chat = _chat(chat_id)
        if file_ids is MISSING or file_ids is None:
            file_ids = []
        if not isinstance(file_ids, list) or len(file_ids) > MAX_FILES \
                or not all(isinstance(x, str) and 0 < len(x) <= 200 for x in file_ids):
            fields.fail("file_ids", f"Must be a list of at most {MAX_FILES} file ids from POST /api/files.")
        else:
            file_ids = list(dict.fromkeys(file_ids))
            known = {f.id for f in File.select(File.id).where(File.id.in_(file_ids))} if file_ids else set()
            unknown = [x for x in file_ids if x not in known]
            if unknown:
                fields.fail("file_ids", f"No file with the id {unknown[0][:200]}: upload it with POST /api/files first.")
        fields.check()
        return _json(drafts.save(chat.id, text, file_ids))


@bp.delete("/api/chats/<chat_id>/draft")
def delete_draft(chat_id):
    """Forget the chat's draft (cleared by the person) → 204."""
    with db.atomic():
        drafts.drop(_chat(chat_id).id)
    return "", 204
