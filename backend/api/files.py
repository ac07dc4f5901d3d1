"""Attachments (CONTRACT §3 Files): upload one file, read it back safely.

POST /api/files takes multipart/form-data with the file in the field `file`.
The body streams through backend/api/multipart.py straight into a temporary
file that hashes as it writes (backend/store/files.py), so a 50 MB upload never
sits in memory; past the limit the reading stops and the answer is a 413.
"""
from __future__ import annotations

from typing import Callable
from urllib.parse import quote

from flask import Blueprint, request, send_file
from werkzeug.exceptions import RequestEntityTooLarge

from backend.api import multipart
from backend.errors import ApiError, invalid, not_found
from backend.runtime import runtime
from backend.store.db import db
from backend.store.files import TooLarge, clean_name, human_size, max_file_bytes, served_type, sniff
from backend.store.models import File
from backend.store.serialize import file_to_dict

bp = Blueprint("files", __name__)

# Room for the multipart framing (boundaries, part headers, small fields) around the file.
MULTIPART_SLACK = multipart.MAX_FIELD_BYTES + multipart.MAX_PENDING_BYTES


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "file_too_large",
                    f"The file is larger than {human_size(limit)}, the most Numi accepts. "
                    f"Attach a smaller file (the limit is set by NUMI_MAX_FILE_MB).")


def receive_upload(limit: int, too_large: Callable[[int], ApiError], missing: str, blobs: list):
    """The request's multipart part `file`, streamed into a blob of the file store (hashed
    on the way, never held in memory, stopped past `limit` bytes); the blob is added to
    `blobs` for the caller to commit or discard. Returns (blob, the name the client gave).
    Refusals: 413 `too_large(limit)` from the Content-Length or while streaming, 400 for a
    broken body, 422 with `missing` when no file part is called `file`."""
    # Refused from the header alone when it already says too much; werkzeug's server
    # reads and drops the rest of the body after the answer, so the client sees the
    # 413 rather than a reset connection.
    if request.content_length is not None and request.content_length > limit + MULTIPART_SLACK:
        raise too_large(limit)
    request.max_content_length = limit + MULTIPART_SLACK  # the app's own cap is for JSON bodies
    store = runtime().files

    def open_blob():
        blob = store.writer(limit)
        blobs.append(blob)
        return blob

    try:
        upload = multipart.receive(request.stream, request.mimetype_params.get("boundary"), "file", open_blob)
    except (TooLarge, RequestEntityTooLarge):
        raise too_large(limit) from None
    except multipart.SecondFile:
        raise invalid({"file": "Send one file per upload."}) from None
    except multipart.Malformed as exc:
        raise ApiError(400, "bad_request", f"The upload is not valid multipart/form-data: {exc} "
                                           f"Send the file again.") from None
    if upload.blob is None:
        raise invalid({"file": missing})
    upload.blob.file.flush()
    return upload.blob, upload.filename


@bp.post("/api/files")
def upload():
    if request.mimetype != "multipart/form-data":
        raise ApiError(415, "unsupported_media_type",
                       'Upload the file as multipart/form-data, in a field named "file".')
    store = runtime().files
    blobs = []
    try:
        blob, raw_name = receive_upload(max_file_bytes(), _too_large,
                                        'Attach the file in a multipart field named "file".', blobs)
        name = clean_name(raw_name)
        mime = sniff(bytes(blob.head), name, complete=blob.size <= len(blob.head))
        sha = store.commit(blob)
    finally:
        for other in blobs:
            other.discard()  # no-op for the committed one: it was moved away
    with db.atomic():
        # The same bytes under the same name are the same attachment: its row is reused.
        row = File.get_or_none((File.sha256 == sha) & (File.name == name))
        if row is None:
            row = File.create(sha256=sha, name=name, mime=mime, size=blob.size)
    return file_to_dict(row), 201


@bp.get("/api/files/<file_id>")
def download(file_id: str):
    row = File.get_or_none(File.id == file_id)
    if row is None:
        raise not_found("file")
    path = runtime().files.path(row.sha256)
    if not path.is_file():
        raise ApiError(410, "file_missing", f"The bytes of {row.name} are no longer in Numi's data folder "
                                            f"(files/). Restore it from a backup, or attach the file again.")
    ctype, inline = served_type(row.mime)
    response = send_file(path, mimetype=ctype, conditional=True, etag=row.sha256, max_age=None)
    response.headers["Content-Type"] = ctype  # send_file would add a charset of its own to text/*
    response.headers["Content-Disposition"] = _disposition("inline" if inline else "attachment", row.name)
    response.headers["X-Content-Type-Options"] = "nosniff"
    # Opened on its own (not as an <img> in the page), the file gets no scripts, no
    # plugins and an origin of its own.
    response.headers["Content-Security-Policy"] = "default-src 'none'; img-src 'self'; sandbox"
    # The bytes of an id never change: the browser may keep them (private: behind the cookie).
    response.headers["Cache-Control"] = "private, max-age=31536000, immutable"
    return response


def _disposition(kind: str, name: str) -> str:
    # RFC 6266: an ASCII fallback for old clients, the exact name as UTF-8 in filename*.
    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in name)
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
