"""What the in-app viewer of a knowledge source needs beyond the document's text: a PDF page drawn as
an image, and the file opened in the system's own app.

- `GET /api/knowledge/{id}/documents/{doc_id}/pages/{page_index}` → image/png of that page (0-based),
  at most MAX_WIDTH × MAX_HEIGHT pixels; 404 for a page out of range or a document that is no PDF;
  409 when the file changed since it was read or is gone.
- `POST /api/knowledge/{id}/documents/{doc_id}/open` → 204: the file is handed to the system's opener
  (xdg-open, open, os.startfile) as it is now; only a document given by path, and never a script, which
  an opener may run instead of show (422); 409 when it is gone.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass

from flask import Blueprint, Response, current_app, request

from backend.errors import ApiError, not_found
from backend.features.knowledge import bases
from backend.features.knowledge.readers import file_suffix
from backend.store.serialize import files_by_id
from backend.turns import features

MAX_WIDTH = 1400  # px: readable beside the page's text, and a few hundred KB at most
MAX_HEIGHT = 2400
MAX_SCALE = 2.0  # 144 dpi for a page of ordinary size
CACHED_PAGES = 24  # rendered pages kept: going back to a citation is instant

# Suffixes a system opener may run rather than show (os.startfile runs .py and .js on Windows).
RUNNABLE = frozenset({".py", ".pyw", ".js", ".sh", ".bash", ".zsh", ".command", ".pl", ".rb", ".php", ".lua",
                      ".bat", ".cmd", ".ps1", ".vbs", ".jar", ".exe", ".app", ".desktop"})

bp = Blueprint("knowledge_viewer", __name__)

# PDFium is not thread-safe, and the server answers each request on a thread of its own.
_pdfium = threading.Lock()
_cache: OrderedDict[tuple, bytes] = OrderedDict()
_cache_lock = threading.Lock()


@dataclass(frozen=True)
class _File:
    """A document's file as it is on disk now."""
    read_path: str
    name: str
    by_path: bool  # given by path (else uploaded to Numi)
    stamp: tuple  # (size, mtime_ns) of a path, the sha256 of an upload: what a rendered page is cached by


def _service():
    return features.service(current_app, "knowledge")


def _file(base_id: str, doc_id: int, as_read: bool = True) -> _File:
    """The document's file; 404, or 409 with a sentence when it is gone or (`as_read`) changed since it was read."""
    if bases.get(base_id) is None:
        raise not_found("knowledge base")
    index = _service().index
    doc = index.document(base_id, doc_id)
    if doc is None:
        raise not_found("document in this knowledge base")
    if doc.get("path") is not None:
        path = doc["path"]
        name = os.path.basename(path)
        try:
            st = os.stat(path)
        except OSError:
            raise ApiError(409, "file_gone", f"“{name}” is no longer at {path}; it was moved or removed since it "
                                             "was read.") from None
        known = index.document_by_key(base_id, path) or {}
        if as_read and (known.get("size") != st.st_size or known.get("mtime") != st.st_mtime):
            raise ApiError(409, "file_changed", f"“{name}” changed since it was read; Numi is reading it again. "
                                                "Open the source again in a moment.")
        return _File(path, name, True, (st.st_size, st.st_mtime_ns))
    row = files_by_id([doc["file_id"]]).get(doc["file_id"])
    blob = None if row is None else str(_service().ctx.files.path(row.sha256))
    if row is None or blob is None or not os.path.isfile(blob):
        raise ApiError(409, "file_gone", "The uploaded file of this document is no longer in Numi.")
    return _File(blob, row.name, False, (row.sha256,))


@bp.get("/api/knowledge/<base_id>/documents/<int:doc_id>/pages/<int:page_index>")
def page_image(base_id, doc_id, page_index):
    found = _file(base_id, doc_id)
    if file_suffix(found.read_path, found.name) != ".pdf":
        raise ApiError(404, "not_found", "This document is not a PDF: it has no pages to show.")
    key = (found.read_path, found.stamp, page_index)
    etag = hashlib.sha256(repr(key).encode()).hexdigest()[:32]
    if request.if_none_match.contains(etag):
        return Response(status=304, headers={"ETag": f'"{etag}"'})
    png = _cached(key)
    if png is None:
        png = _render(found.read_path, page_index)
        _keep(key, png)
    # no-cache: the browser asks again each time, and a changed file is never shown from its cache.
    return Response(png, mimetype="image/png", headers={"ETag": f'"{etag}"', "Cache-Control": "private, no-cache"})


def _render(path: str, page_index: int) -> bytes:
    """The page as PNG bytes; 404 for a page the PDF does not have, 409 for a file PDFium cannot open."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    with _pdfium:
        try:
            pdf = pdfium.PdfDocument(path)
        except pdfium.PdfiumError:
            raise ApiError(409, "unreadable", "This PDF can no longer be opened (it may have been replaced by a "
                                              "damaged or password-protected copy).") from None
        try:
            if page_index >= len(pdf):
                raise ApiError(404, "not_found", f"This PDF has {len(pdf)} page{'s' * (len(pdf) != 1)}; "
                                                 f"there is no page {page_index + 1}.")
            page = pdf[page_index]
            try:
                width, height = page.get_size()
                scale = min(MAX_SCALE, MAX_WIDTH / max(width, 1.0), MAX_HEIGHT / max(height, 1.0))
                bitmap = page.render(scale=scale, may_draw_forms=False)
                image = bitmap.to_pil()
            finally:
                page.close()
        finally:
            pdf.close()
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=3)  # most of the size for a fraction of the time of level 9
    return out.getvalue()


def _cached(key: tuple) -> bytes | None:
    with _cache_lock:
        png = _cache.get(key)
        if png is not None:
            _cache.move_to_end(key)
        return png


def _keep(key: tuple, png: bytes) -> None:
    with _cache_lock:
        _cache[key] = png
        while len(_cache) > CACHED_PAGES:
            _cache.popitem(last=False)


@bp.post("/api/knowledge/<base_id>/documents/<int:doc_id>/open")
def open_file(base_id, doc_id):
    # A file changed since it was read still opens: the person asks for the file as it is now
    # (one Numi could not read, say a password-protected PDF, too).
    found = _file(base_id, doc_id, as_read=False)
    if not found.by_path:
        raise ApiError(422, "not_a_path", "This document was uploaded to Numi, so it has no file of its own on this "
                                          "computer to open; its text is shown here.")
    suffix = file_suffix(found.read_path)
    if suffix in RUNNABLE:
        raise ApiError(422, "runnable", f"Numi does not hand {suffix} files to the system to open: some systems run "
                                        f"them instead of showing them. Open it from its folder, "
                                        f"{os.path.dirname(found.read_path)}.")
    _open(found.read_path)
    return "", 204


def _open(path: str) -> None:
    """Hand the file to the system's own app for it, without waiting for that app."""
    if sys.platform == "win32":
        os.startfile(path)  # type: ignore[attr-defined]  # Windows only
        return
    name = "open" if sys.platform == "darwin" else "xdg-open"
    opener = shutil.which(name)
    if opener is None:
        raise ApiError(503, "no_opener", f"No program to open files with was found ({name}); on Linux it comes "
                                         "with xdg-utils.")
    # The path is absolute, so it cannot read as an option. A session of its own: a Ctrl-C to
    # Numi's terminal does not reach the app it starts.
    proc = subprocess.Popen([opener, path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    # Reaped in the background: xdg-open may wait for the app it starts.
    threading.Thread(target=proc.wait, name="knowledge-open", daemon=True).start()


def register(app) -> None:
    app.register_blueprint(bp)
