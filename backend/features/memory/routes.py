"""Memories over HTTP (CONTRACT §8): list (and search), add, edit, delete one, forget everything.

A change wakes the embedding thread (service.py); forgetting everything drops the vectors too.
"""
from __future__ import annotations

from flask import Blueprint, request

from backend.errors import invalid, not_found
from backend.features.memory import service, store
from backend.fields import Fields
from backend.request_body import json_body

bp = Blueprint("memory", __name__)
READ_ONLY = ("id", "source_chat_id", "created_at", "updated_at")


def _text(body: dict) -> str:
    f = Fields(body, ("text",), READ_ONLY)
    text = f.text("text", max_len=store.TEXT_MAX, required=True, non_empty=True, strip=True)
    f.check()
    return store.clean(text)


def _memory(memory_id: str) -> store.Memory:
    found = store.get(memory_id)
    if found is None:
        raise not_found("memory")
    return found


@bp.get("/api/memories")
def list_memories():
    q = request.args.get("q", "")
    if len(q) > store.QUERY_MAX:
        raise invalid({"q": f"Search with at most {store.QUERY_MAX} characters (it has {len(q):,})."})
    return {"items": [m.to_dict() for m in store.listed(q)]}


@bp.post("/api/memories")
def create_memory():
    created = store.create(_text(json_body()), None)
    service.changed()
    return created.to_dict(), 201


@bp.patch("/api/memories/<memory_id>")
def patch_memory(memory_id):
    _memory(memory_id)
    updated = store.update(memory_id, _text(json_body()))
    if updated is None:  # deleted meanwhile
        raise not_found("memory")
    service.changed()
    return updated.to_dict()


@bp.delete("/api/memories/<memory_id>")
def delete_memory(memory_id):
    if not store.delete(memory_id):
        raise not_found("memory")
    service.changed()
    return "", 204


@bp.delete("/api/memories")
def forget_everything():
    store.forget_everything()
    service.forgotten()
    return "", 204


def register(app) -> None:
    app.register_blueprint(bp)
