"""GET /api/search (CONTRACT §3): full-text search over every kept chat's messages."""
from __future__ import annotations

from datetime import date, datetime, time, timezone

from flask import Blueprint, request

from backend.errors import invalid
from backend.store import search as fts
from backend.store.db import db
from backend.store.models import Folder
from backend.store.serialize import iso

bp = Blueprint("search", __name__)

MAX_QUERY = 500
LIMIT_DEFAULT, LIMIT_MAX = 20, 100
ROLES = ("user", "assistant")
DATE_HINT = "Use an ISO 8601 date or time, like 2026-11-29 or 2026-11-29T15:04:05Z."


def _query(errors: dict) -> str | None:
    q = request.args.get("q")
    if q is None or not q.strip():
        errors["q"] = "Type something to search for."
        return None
    if len(q) > MAX_QUERY:
        errors["q"] = f"Must be at most {MAX_QUERY} characters (it has {len(q)})."
        return None
    return q


def _limit(errors: dict) -> int:
    raw = request.args.get("limit", "").strip()
    if not raw:
        return LIMIT_DEFAULT
    if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= LIMIT_MAX:
        return int(raw)
    errors["limit"] = f"Must be a whole number from 1 to {LIMIT_MAX}."
    return LIMIT_DEFAULT


def _moment(name: str, errors: dict, end_of_day: bool) -> float | None:
    """An ISO 8601 date or date-time as epoch seconds. Without an offset it is UTC;
    a bare date means the start of that day for `from` and its end for `to`."""
    raw = request.args.get(name, "").strip()
    if not raw:
        return None
    try:
        try:
            day = date.fromisoformat(raw)
        except ValueError:
            at = datetime.fromisoformat(raw)
            return (at if at.tzinfo else at.replace(tzinfo=timezone.utc)).timestamp()
        if end_of_day:
            return datetime.combine(day, time.max, timezone.utc).timestamp()
        return datetime.combine(day, time.min, timezone.utc).timestamp()
    except (ValueError, OverflowError):
        errors[name] = f"Not a date this server can read. {DATE_HINT}"
        return None


def _filters(errors: dict) -> fts.Filters:
    folder_id = request.args.get("folder_id", "").strip() or None
    if folder_id is not None and Folder.get_or_none(Folder.id == folder_id) is None:
        errors["folder_id"] = "No folder with this id. Use one from the folder list, or leave it out."
    role = request.args.get("role", "").strip() or None
    if role is not None and role not in ROLES:
        errors["role"] = f"Must be one of: {', '.join(ROLES)}."
    since = _moment("from", errors, end_of_day=False)
    until = _moment("to", errors, end_of_day=True)
    if since is not None and until is not None and since > until:
        errors["to"] = "Must not be before `from`."
    return fts.Filters(folder_id=folder_id, since=since, until=until, role=role)


@bp.get("/api/search")
def search():
    errors: dict[str, str] = {}
    q = _query(errors)
    limit = _limit(errors)
    filters = _filters(errors)
    if errors:
        raise invalid(errors)
    query = fts.parse(q)
    if query is None:
        return {"items": []}  # only punctuation: nothing any message could contain
    # One read snapshot for the ranking and its snippets; DEFERRED, so searching
    # never takes the write lock (the database's default is IMMEDIATE).
    with db.atomic(lock_type="DEFERRED"):
        items = fts.search(db, query, limit, filters)
    for item in items:
        item["created_at"] = iso(item["created_at"])
    return {"items": items}
