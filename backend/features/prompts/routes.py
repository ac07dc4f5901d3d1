"""The prompt library over HTTP (CONTRACT §12): list (by name, `q` to filter), create, change, delete."""
from __future__ import annotations

from flask import Blueprint, request

from backend.errors import ApiError, invalid, not_found
from backend.features.prompts import library
from backend.features.prompts.text import CONTENT_MAX, NAME_MAX, VARIABLES_MAX, command_problem, variables
from backend.fields import MISSING, Fields
from backend.request_body import json_body
from backend.store.serialize import iso

QUERY_MAX = 200
WRITABLE = ("name", "command", "content")
READ_ONLY = ("id", "variables", "created_at", "updated_at")

bp = Blueprint("prompts", __name__)


def to_dict(p: library.Prompt) -> dict:
    return {"id": p.id, "name": p.name, "command": p.command, "content": p.content, "variables": p.variables,
            "created_at": iso(p.created_at), "updated_at": iso(p.updated_at)}


def _prompt(prompt_id: str) -> library.Prompt:
    p = library.get(prompt_id)
    if p is None:
        raise not_found("prompt")
    return p


def _taken(exc: library.CommandTaken, command: str) -> ApiError:
    whose = f" (“{exc.other.name}”)" if exc.other else ""
    sentence = f"Another prompt{whose} already has the command /{command}. Choose another command, or edit that prompt."
    return ApiError(409, "conflict", sentence, {"command": sentence})


def _changes(body: dict, creating: bool) -> dict:
    f = Fields(body, WRITABLE, READ_ONLY)
    name = f.text("name", max_len=NAME_MAX, required=creating, non_empty=True, strip=True)
    command = f.text("command", max_len=10_000, required=creating, non_empty=True, strip=True)
    if isinstance(command, str) and (problem := command_problem(command)):
        f.fail("command", problem)
    content = f.text("content", max_len=CONTENT_MAX, required=creating)
    if isinstance(content, str):
        if not content.strip():
            f.fail("content", "Must not be empty: write the text the prompt fills the message box with.")
        elif len(found := variables(content)) > VARIABLES_MAX:
            f.fail("content", f"Has {len(found)} different {{{{variables}}}}; a prompt may ask for at most "
                              f"{VARIABLES_MAX}.")
    f.check()
    changes = {"name": name, "command": command, "content": content}
    return {k: v for k, v in changes.items() if v is not MISSING}


@bp.get("/api/prompts")
def list_prompts():
    q = request.args.get("q", "").strip()
    if len(q) > QUERY_MAX:
        raise invalid({"q": f"Must be at most {QUERY_MAX} characters (it has {len(q)})."})
    # "/sum" as typed in the message box finds /summarize too.
    return {"items": [to_dict(p) for p in library.all_prompts(q.removeprefix("/"))]}


@bp.post("/api/prompts")
def create_prompt():
    changes = _changes(json_body(), True)
    try:
        p = library.create(changes["name"], changes["command"], changes["content"])
    except library.CommandTaken as exc:
        raise _taken(exc, changes["command"]) from None
    return to_dict(p), 201


@bp.get("/api/prompts/<prompt_id>")
def get_prompt(prompt_id):
    return to_dict(_prompt(prompt_id))


@bp.patch("/api/prompts/<prompt_id>")
def patch_prompt(prompt_id):
    _prompt(prompt_id)
    changes = _changes(json_body(), False)
    try:
        p = library.update(prompt_id, **changes)
    except library.CommandTaken as exc:
        raise _taken(exc, changes["command"]) from None
    if p is None:  # deleted meanwhile
        raise not_found("prompt")
    return to_dict(p)


@bp.delete("/api/prompts/<prompt_id>")
def delete_prompt(prompt_id):
    if not library.delete(prompt_id):
        raise not_found("prompt")
    return "", 204


def register(app) -> None:
    app.register_blueprint(bp)
