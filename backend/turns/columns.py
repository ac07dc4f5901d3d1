"""A compare's columns (backend/turns/compare.py): what each reply's Turn shares with the others."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from backend.core.cancel import CancelToken
from backend.turns.events import CHAT_EVENTS

WAIT_STEP = 0.1  # s between looks at Stop while a column waits for the others to prepare


class Gate:
    """The columns prepare one at a time (a summary or a memory write is made once, and the
    history each reads holds no reply yet), then start streaming together."""

    def __init__(self, columns: int):
        self._preparing = threading.Lock()
        self._arrived = threading.Condition()
        self._waiting = columns

    @contextmanager
    def preparing(self) -> Iterator[None]:
        """One column's preparation; it counts as arrived however it ends (a failed setup too)."""
        with self._preparing:
            try:
                yield
            finally:
                with self._arrived:
                    self._waiting -= 1
                    self._arrived.notify_all()

    def wait(self, cancel: CancelToken) -> None:
        """Until every column has prepared, or Stop."""
        with self._arrived:
            while self._waiting > 0 and not cancel.is_set():
                self._arrived.wait(WAIT_STEP)


class Solo:
    """The gate of a turn that is no compare's column: nothing to wait for."""

    @contextmanager
    def preparing(self) -> Iterator[None]:
        yield

    def wait(self, cancel: CancelToken) -> None:
        return None


SOLO = Solo()


@dataclass(frozen=True)
class Column:
    """A reply's seat in a compare: what its Turn shares with the others, and its own model and row."""
    turn_id: str
    cancel: CancelToken
    gate: Gate
    model_id: str
    message_id: int  # its first reply row, made when the compare starts

    def stamp(self, type_: str, fields: dict, message_id: int | None) -> dict:
        """The event's fields with this column's model, and its message where the event takes one."""
        spec = CHAT_EVENTS.get(type_)
        if spec is None:
            return fields
        out = dict(fields)
        if "model_id" in spec.keys and "model_id" not in out:
            out["model_id"] = self.model_id
        if "message_id" in spec.keys and out.get("message_id") is None:
            out["message_id"] = message_id if message_id is not None else self.message_id
        return out
