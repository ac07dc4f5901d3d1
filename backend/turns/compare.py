"""A compare (CONTRACT §10): one user message answered by 2–4 models at once, one turn.

Each model's reply is a `Turn` of its own (runner.py) on its own thread, seated in a `Column`:
it shares the compare's turn id and stop, writes its rows beside the active branch (the first
model's reply stays active until a switch), and stamps every event it publishes with its model
and message. The columns prepare their requests one at a time, so each model gets the same
history and none sees another's reply, then all stream together (`Gate`).
"""
from __future__ import annotations

import secrets
import threading

from backend.core.cancel import CancelToken
from backend.core.status import CANCELLED, COMPLETED, FAILED, STREAMING, TurnOutcome
from backend.store import history
from backend.store.db import db
from backend.turns.columns import Column, Gate
from backend.turns.hub import ChatHub
from backend.turns.runner import Turn
from backend.turns.services import TurnServices


def start_rows(chat_id: str, user_message_id: int, model_ids: list[str]) -> list[int]:
    """Each model's reply row under the user message, the first on the active branch."""
    with db.atomic():
        first = history.append(chat_id, user_message_id, role="assistant", status=STREAMING, model_id=model_ids[0])
        rest = [history.append_beside(chat_id, user_message_id, role="assistant", status=STREAMING, model_id=m)
                for m in model_ids[1:]]
    return [first.id] + [r.id for r in rest]


class CompareApprovals:
    """The columns' approval waits seen as one (the registry's view of a turn's approvals)."""

    def __init__(self, columns: list[Turn]):
        self._columns = columns

    def pending(self) -> list[dict]:
        return [p for c in self._columns for p in c.approvals.pending()]

    def answer(self, approval_id: str, decision) -> bool:
        return any(c.approvals.answer(approval_id, decision) for c in self._columns)


class CompareTurn:
    """The compare's one turn: its columns run at once; it ends when they all have."""

    def __init__(self, services: TurnServices, hub: ChatHub, chat_id: str, user_message_id: int,
                 model_ids: list[str]):
        self.id = "t_" + secrets.token_hex(6)
        self.hub, self.chat_id, self.user_message_id = hub, chat_id, user_message_id
        self.cancel = CancelToken()
        rows = start_rows(chat_id, user_message_id, model_ids)
        gate = Gate(len(model_ids))
        self.columns = [Turn(services, hub, chat_id, user_message_id, lambda: [], model_id=model_id, reply_id=row,
                             column=Column(self.id, self.cancel, gate, model_id, row))
                        for model_id, row in zip(model_ids, rows)]
        self.approvals = CompareApprovals(self.columns)

    # What the registry reads of a running turn, over every column.

    @property
    def partials(self) -> list:
        return [c.partial for c in self.columns if c.partial is not None]

    @property
    def parts(self) -> dict:
        return {f"{i}:{name}": part for i, c in enumerate(self.columns) for name, part in c.parts.items()}

    @property
    def final_message_id(self) -> int | None:
        """The first column's reply that completed (what a title is written from)."""
        return next((c.final_message_id for c in self.columns if c.final_message_id is not None), None)

    @property
    def model_id(self) -> str | None:
        return next((c.model_id for c in self.columns if c.final_message_id is not None), self.columns[0].model_id)

    def publish(self, type_: str, **fields) -> dict:
        return self.hub.publish(type_, self.id, **fields)

    def run(self) -> TurnOutcome:
        self.publish("turn_start", user_message_id=self.user_message_id, continue_message_id=None,
                     compare=[{"model_id": c.asked_model_id, "message_id": c.reply_id} for c in self.columns])
        statuses: list[TurnOutcome] = [FAILED] * len(self.columns)

        def run_column(i: int, column: Turn) -> None:
            with db.connection_context():
                statuses[i] = column.run()

        threads = [threading.Thread(target=run_column, args=(i, c), name=f"compare-{self.chat_id}-{i}", daemon=True)
                   for i, c in enumerate(self.columns)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if self.cancel.is_set():
            return CANCELLED
        return COMPLETED if COMPLETED in statuses else FAILED


def compared_models(user_message_id: int | None) -> list[str]:
    """The models a user message was sent to compare (its `compare`), or none."""
    if user_message_id is None:
        return []
    row = history.by_ids([user_message_id]).get(user_message_id)
    parts = row.content_parts if row is not None and isinstance(row.content_parts, dict) else {}
    models = parts.get("compare")
    return [m for m in models if isinstance(m, str)] if isinstance(models, list) else []
