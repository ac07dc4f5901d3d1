"""POST /api/backup: a consistent copy of numi.db while the app runs (backend/store/backup.py)."""
from __future__ import annotations

from pathlib import Path

from flask import Blueprint

from backend.api.validate import json_body
from backend.errors import ApiError, invalid
from backend.runtime import runtime
from backend.store import backup
from backend.store.serialize import iso

bp = Blueprint("backup", __name__)


@bp.post("/api/backup")
def make_backup():
    body = json_body()
    unknown = set(body) - {"path"}
    if unknown:
        raise invalid({name: "Not a field of a backup request; only \"path\" is." for name in unknown})
    data_dir = runtime().config.data_dir
    raw = body.get("path")
    if raw is None:
        dest = backup.default_path(data_dir)
    else:
        if not isinstance(raw, str) or not raw.strip():
            raise invalid({"path": "Must be the absolute path of the new backup file, or left out."})
        dest = Path(raw)
        problem = backup.check_destination(dest)
        if problem:
            raise invalid({"path": problem})
    try:
        result = backup.make_backup(backup.db_path(data_dir), dest)
    except backup.BackupError as exc:
        raise ApiError(500, "backup_failed", f"{exc} Nothing was written at {dest}.") from None
    except OSError as exc:
        raise ApiError(500, "backup_failed", f"The backup could not be written ({exc.strerror}). "
                                             f"Nothing was written at {dest}.") from None
    return {"path": str(result.path), "size": result.size, "created_at": iso(result.created_at)}, 201
