"""A turn's tool calls waiting for the person's approval (CONTRACT §7 `approve`).

A call waits on the turn's thread, as a question does (backend/features/questions/waiting.py):
its card is published, and the wait ends with the person's decision, or with none
when the turn is stopped. Sockets answer through the registry. Whether a call asks
at all is backend/turns/approvals.py's to say.
"""
from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import Callable

from backend.core import agent
from backend.core.cancel import CancelToken
from backend.core.types import ToolCall


@dataclass
class _Waiting:
    approval_id: str
    call: ToolCall
    wake: threading.Event = field(default_factory=threading.Event)
    decision: agent.Decision | None = None  # the person's, once they answered


class Approvals:
    """One turn's waiting calls. `publish(type, **fields)` is the turn's; `changed()` tells the
    chat list (and the tray) that the chat waits, or no longer does."""

    def __init__(self, publish: Callable[..., dict], changed: Callable[[], None]):
        self.publish, self.changed = publish, changed
        self._lock = threading.Lock()
        self._waiting: dict[str, _Waiting] = {}

    # --- the turn's side --------------------------------------------------------------------

    def wait(self, call: ToolCall, cancel: CancelToken, **card) -> agent.Decision | None:
        """Publish the call's `approval_required` (with `card`'s fields) and wait for the answer;
        None when the turn was stopped first."""
        waiting = _Waiting("a_" + secrets.token_hex(6), call)
        with self._lock:
            self._waiting[waiting.approval_id] = waiting
        unregister = cancel.on_cancel(waiting.wake.set)
        try:
            self.publish("approval_required", approval_id=waiting.approval_id, call_id=call.id, name=call.name,
                         arguments=call.arguments, **card)
            self.changed()
            waiting.wake.wait()
        finally:
            unregister()
            with self._lock:
                self._waiting.pop(waiting.approval_id, None)
                decision = waiting.decision
            self.changed()
        return decision

    # --- the sockets' side --------------------------------------------------------------------

    def pending(self) -> list[dict]:
        """The unanswered ones, as {"approval_id", "name"}."""
        with self._lock:
            return [{"approval_id": w.approval_id, "name": w.call.name}
                    for w in self._waiting.values() if w.decision is None]

    def answer(self, approval_id: str, decision: agent.Decision) -> bool:
        """Give a waiting call its decision; False when none such waits (answered, or its turn ended)."""
        with self._lock:
            waiting = self._waiting.get(approval_id)
            if waiting is None or waiting.decision is not None:
                return False
            waiting.decision = decision
        waiting.wake.set()
        return True
