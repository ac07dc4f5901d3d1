"""A chat's documents in an export, and back on import (CONTRACT §9: every version kept).

The export's chat carries them as `features.documents`: a list of
`{"id","title","language","created_at","updated_at","versions": [{"version","author","content","created_at","message_id"}]}`,
oldest first, each version's `message_id` the exported message whose call wrote it (null for the
person's). An import checks every field (a refusal names the document and the field, and nothing
is imported), keeps a document's id unless this database has it already (then it gets a new one),
and links each version to the message the import made of its `message_id`.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from backend.features.documents import languages, store, tools
from backend.store.chat_data import ChatData, MessageIds
from backend.store.import_read import is_clean_text
from backend.store.serialize import iso

MAX_DOCUMENTS = 1_000  # per chat
MAX_VERSIONS = 10_000  # per document
ID_CHARS = 100


def export(chat_id: str) -> list[dict] | None:
    docs = store.in_chat(chat_id)
    if not docs:
        return None
    out = []
    for doc in docs:
        versions = [{"version": v.version, "author": v.author, "content": store.text(doc, v.version) or "",
                     "created_at": iso(v.created_at), "message_id": v.message_id} for v in store.versions(doc)]
        out.append({"id": doc.id, "title": doc.title, "language": doc.language, "created_at": iso(doc.created_at),
                    "updated_at": iso(doc.updated_at), "versions": versions})
    return out


def _time(value: Any, where: str) -> float:
    try:
        dt = datetime.fromisoformat(value)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        return dt.timestamp()
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where}: created_at and updated_at must be dates in ISO 8601, like "
                         f"2026-01-31T10:00:00.000Z.") from None


def check(value: Any) -> list[dict]:
    """The export's documents, checked; ValueError with a sentence naming the first problem."""
    if not isinstance(value, list):
        raise ValueError("Must be a list of documents.")
    if len(value) > MAX_DOCUMENTS:
        raise ValueError(f"A chat holds at most {MAX_DOCUMENTS:,} documents in an import (this one has {len(value):,}).")
    return [_document(doc, f"document {i + 1}") for i, doc in enumerate(value)]


def _document(doc: Any, where: str) -> dict:
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: must be an object.")
    doc_id, title, language = doc.get("id"), doc.get("title"), doc.get("language")
    if not isinstance(doc_id, str) or not doc_id.startswith("doc_") or not 4 < len(doc_id) <= ID_CHARS \
            or not doc_id.isascii() or not doc_id[4:].isalnum():
        raise ValueError(f'{where}: "id" must be a document id like doc_0123456789abcdef.')
    if not isinstance(title, str) or not is_clean_text(title) or not tools.clean_title(title) \
            or len(tools.clean_title(title)) > tools.TITLE_MAX:
        raise ValueError(f'{where}: "title" must be text of 1 to {tools.TITLE_MAX} characters.')
    if not isinstance(language, str):
        raise ValueError(f'{where}: "language" must be text.')
    versions = doc.get("versions")
    if not isinstance(versions, list) or not versions or len(versions) > MAX_VERSIONS:
        raise ValueError(f'{where}: "versions" must be a list of 1 to {MAX_VERSIONS:,} versions.')
    checked = [_version(v, f"{where}, version {j + 1}") for j, v in enumerate(versions)]
    numbers = [v[0] for v in checked]
    if numbers != list(range(1, len(numbers) + 1)):
        raise ValueError(f"{where}: its versions must be numbered 1, 2, 3 … in order.")
    created = _time(doc.get("created_at"), where)
    return {"id": doc_id, "title": tools.clean_title(title), "language": languages.normalize(language)[0],
            "created_at": created, "updated_at": _time(doc.get("updated_at", doc.get("created_at")), where),
            "versions": checked}


def _version(v: Any, where: str) -> tuple[int, str, str, int | None, float]:
    if not isinstance(v, dict):
        raise ValueError(f"{where}: must be an object.")
    number, content, author, message_id = v.get("version"), v.get("content"), v.get("author"), v.get("message_id")
    if isinstance(number, bool) or not isinstance(number, int):
        raise ValueError(f'{where}: "version" must be a whole number.')
    if not isinstance(content, str) or not is_clean_text(content):
        raise ValueError(f'{where}: "content" must be text (valid Unicode).')
    if len(content.encode("utf-8")) > tools.CONTENT_MAX_BYTES:
        raise ValueError(f"{where}: a document holds at most 1 MB ({tools.CONTENT_MAX_BYTES:,} bytes of UTF-8).")
    if author not in store.AUTHORS:
        raise ValueError(f'{where}: "author" must be "model" or "person".')
    if message_id is not None and (isinstance(message_id, bool) or not isinstance(message_id, int)):
        raise ValueError(f'{where}: "message_id" must be a whole number or null.')
    return number, content, author, message_id, _time(v.get("created_at"), where)


def write(chat_id: str, docs: list[dict], message_ids: MessageIds):
    """Write the checked documents for a chat the import makes: a generator (backend/store/paced.py)."""
    for doc in docs:
        doc_id = doc["id"]
        while store.taken(doc_id):
            doc_id = store.new_id()
        versions = [(n, content, author, message_ids(mid) if mid is not None else None, when)
                    for n, content, author, mid, when in doc["versions"]]
        yield from store.restore(chat_id, doc_id, doc["title"], doc["language"], doc["created_at"],
                                 doc["updated_at"], versions)


CHAT_DATA = ChatData(export=export, check=check, write=write)
