"""File rows for bytes already at their content address (backend/store/files.py): what a feature
that makes a file (an image a model drew) names it by, as an upload's row is made."""
from __future__ import annotations

from backend.store.models import File
from backend.store.serialize import file_to_dict


def add(sha256: str, name: str, mime: str, size: int) -> dict:
    """The file row for these bytes under this name (the same bytes and name reuse theirs), as
    the API shows a file; call inside the transaction that also names it."""
    row = File.get_or_none((File.sha256 == sha256) & (File.name == name))
    if row is None:
        row = File.create(sha256=sha256, name=name, mime=mime, size=size)
    return file_to_dict(row)
