"""Compaction checkpoints, and which one the active branch carries.

A checkpoint summarizes a branch from its start through a boundary message.
It belongs to every branch that runs through that boundary: a new version at
or before the boundary starts a branch without it, and switching back brings
it back. Of several on the branch, the deepest boundary wins (it summarizes
the most; each summary already includes the one before it).
"""
from __future__ import annotations

from dataclasses import dataclass

from backend.store import history
from backend.store.db import db, now
from backend.store.models import Compaction


@dataclass(frozen=True)
class Checkpoint:
    id: int
    boundary_id: int
    boundary_depth: int
    summary: str
    tokens_before: int
    tokens_after: int
    model_id: str | None
    created_at: float

    def as_json(self) -> dict:
        return {"boundary_message_id": self.boundary_id, "summary": self.summary,
                "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
                "created_at": self.created_at}


_COLUMNS = ("c.id, c.boundary_id, m.depth, c.summary, c.tokens_before, c.tokens_after, c.model_id, "
            "c.created_at, m.line_id")


def on_branch(chat_id: str, leaf_id: int | None = None) -> Checkpoint | None:
    """The checkpoint the branch ending at `leaf_id` (default: the active one) carries, if any."""
    rows = db.execute_sql(f"SELECT {_COLUMNS} FROM compaction AS c JOIN message AS m ON m.id = c.boundary_id "
                          f"WHERE c.chat_id = ? AND m.deleted_at IS NULL", (chat_id,)).fetchall()
    if not rows:
        return None
    leaf = history.active_leaf(chat_id) if leaf_id is None else leaf_id
    on = history.on_active_branch(leaf, {r[1]: (r[8], r[2]) for r in rows})
    best = max((r for r in rows if r[1] in on), key=lambda r: (r[2], r[0]), default=None)
    return None if best is None else Checkpoint(*best[:8])


def save(chat_id: str, boundary_id: int, boundary_depth: int, summary: str, tokens_before: int,
         tokens_after: int, model_id: str | None) -> Checkpoint:
    with db.atomic():
        row = Compaction.create(chat=chat_id, boundary_id=boundary_id, summary=summary,
                                tokens_before=tokens_before, tokens_after=tokens_after,
                                model_id=model_id, created_at=now())
    return Checkpoint(row.id, boundary_id, boundary_depth, summary, tokens_before, tokens_after,
                      model_id, row.created_at)
