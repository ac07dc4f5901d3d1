"""Knowledge bases over HTTP (CONTRACT §8): list, create, change, delete, their documents, and a query."""
from __future__ import annotations

from flask import Blueprint, current_app

from backend.errors import not_found
from backend.features.knowledge import bases, files
from backend.fields import MISSING, Fields
from backend.request_body import json_body
from backend.store.serialize import files_by_id
from backend.turns import features

NAME_MAX = 100
PATHS_MAX = 100
FILE_IDS_MAX = 1000
QUERY_MAX = 1000
LIMIT_MAX = 50

bp = Blueprint("knowledge", __name__)


def _service():
    return features.service(current_app, "knowledge")


def _base(base_id: str) -> bases.Base:
    base = bases.get(base_id)
    if base is None:
        raise not_found("knowledge base")
    return base


def _string_list(f: Fields, name: str, most: int, example: str) -> list[str] | object:
    value = f.raw(name, False, False)
    if value is MISSING:
        return MISSING
    if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
        return f.fail(name, f"Must be a list of non-empty strings, like {example}.")
    if len(value) > most:
        return f.fail(name, f"Must list at most {most:,} items (it lists {len(value):,}).")
    return list(dict.fromkeys(value))


def _changes(body: dict, current: bases.Base | None) -> dict:
    f = Fields(body, ("name", "paths", "file_ids"), ("id", "status", "documents", "chunks", "updated_at",
                                                     "problems", "progress", "embeddings"))
    name = f.text("name", max_len=NAME_MAX, required=current is None, non_empty=True, strip=True)
    paths = _string_list(f, "paths", PATHS_MAX, '["/home/me/notes"]')
    file_ids = _string_list(f, "file_ids", FILE_IDS_MAX, '["file_…"]')
    if isinstance(paths, list):
        checked = []
        for raw in paths:
            try:
                checked.append(files.check_path(raw, _service().ctx.data_dir))
            except files.PathRefused as exc:
                f.fail("paths", exc.reason)
                break
        else:
            try:
                files.check_limits(checked)
                paths = list(dict.fromkeys(checked))
            except files.PathRefused as exc:
                f.fail("paths", exc.reason)
    if isinstance(file_ids, list) and file_ids:
        known = files_by_id(file_ids)
        unknown = [x for x in file_ids if x not in known]
        if unknown:
            f.fail("file_ids", f"No uploaded file with the id {unknown[0]!r}. Upload it first (POST /api/files).")
    after_paths = paths if isinstance(paths, list) else (current.paths if current else [])
    after_files = file_ids if isinstance(file_ids, list) else (current.file_ids if current else [])
    if "paths" not in f.errors and "file_ids" not in f.errors and not after_paths and not after_files:
        f.fail("paths", "A knowledge base needs at least one folder or file: give `paths` or `file_ids`.")
    f.check()
    changes = {"name": name, "paths": paths, "file_ids": file_ids}
    return {k: v for k, v in changes.items() if v is not MISSING}


@bp.get("/api/knowledge")
def list_bases():
    service = _service()
    return {"items": [service.to_dict(b) for b in bases.all_bases()]}


@bp.post("/api/knowledge")
def create_base():
    changes = _changes(json_body(), None)
    base = bases.create(changes["name"], changes.get("paths", []), changes.get("file_ids", []))
    _service().changed(base)
    return _service().to_dict(base), 201


@bp.get("/api/knowledge/<base_id>")
def get_base(base_id):
    return _service().to_dict(_base(base_id))


@bp.patch("/api/knowledge/<base_id>")
def patch_base(base_id):
    changes = _changes(json_body(), _base(base_id))
    base = bases.update(base_id, **changes) or _base(base_id)
    if "paths" in changes or "file_ids" in changes:
        _service().changed(base)
    return _service().to_dict(base)


@bp.delete("/api/knowledge/<base_id>")
def delete_base(base_id):
    _base(base_id)
    bases.delete(base_id)
    _service().forget(base_id)
    return "", 204


@bp.get("/api/knowledge/<base_id>/documents")
def list_documents(base_id):
    _base(base_id)
    return {"items": _service().index.documents(base_id)}


@bp.get("/api/knowledge/<base_id>/documents/<int:doc_id>")
def get_document(base_id, doc_id):
    _base(base_id)
    doc = _service().index.document(base_id, doc_id)
    if doc is None:
        raise not_found("document in this knowledge base")
    return doc


@bp.post("/api/knowledge/<base_id>/query")
def query(base_id):
    _base(base_id)
    f = Fields(json_body(), ("q", "limit"))
    q = f.text("q", max_len=QUERY_MAX, required=True, non_empty=True, strip=True)
    limit = f.number("limit", 1, LIMIT_MAX, integer=True)
    f.check()
    hits = _service().search([base_id], q, 8 if limit is MISSING else limit)
    keys = ("title", "file", "snippet", "score", "locator", "document_id")
    return {"items": [{k: hit[k] for k in keys} for hit in hits]}


def register(app) -> None:
    app.register_blueprint(bp)
