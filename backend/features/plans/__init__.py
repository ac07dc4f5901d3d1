"""Plans (CONTRACT §7): `update_plan`, the plan on the message that made it, executing a plan.

Plugged into the engine's points: the tool (held back by the mode as backend/turns/modes.py
says, kept while a plan is carried out: `plan_open`), each turn's recording of its plan
(`bind`), the plan quoted as the model's own message before the user message that
executes it (`quote`), the `plan` event, and the `execute_plan` command, which the
registry carries out (`TurnRegistry.feature_turn`).
"""
from __future__ import annotations

import secrets

from backend.core.tools import ToolRegistry
from backend.features.plans.plan import (
    EXECUTE_TEXT,
    EXECUTING_KEY,
    QUOTE_HEAD,
    NotPending,
    PlanStep,
    bind,
    executed_plan,
    executing,
    mode_changed,
    pending,
    quote,
    quoted,
    record,
    start,
    update_plan_tool,
)
from backend.store import chats
from backend.store.db import db
from backend.turns.events import Event
from backend.turns.features import Feature, Offer, Refused, TurnHandle, TurnPart

__all__ = ["EXECUTING_KEY", "EXECUTE_TEXT", "FEATURE", "QUOTE_HEAD", "executed_plan", "executing", "mode_changed", "quote",
           "quoted", "update_plan_tool"]

_TOOL = update_plan_tool()  # each turn binds its own (`_TurnPlans`)


def _tools(offer: Offer) -> list:
    # Offered with the rest; modes.py keeps it only in plan mode or while a plan is carried out.
    return [_TOOL] if offer.model_calls_tools else []


class _TurnPlans(TurnPart):
    """A turn's update_plan: the plan goes on the message of the step that called it."""

    def __init__(self, turn: TurnHandle):
        self.turn = turn

    def bind_tools(self, tools: ToolRegistry) -> None:
        bind(tools, self._record)

    def _record(self, steps: list[dict]) -> str:
        mode = chats.mode(self.turn.chat_id)  # as it is now: a switch while the turn runs counts
        return record(self.turn.chat_id, self.turn.message_id(), steps, self.turn.publish, mode)


def _quote(content_parts):
    executed = quoted(content_parts)
    return quote(executed) if executed is not None else None


def _execute(chat_id: str, request_id: str | None, check_idle, plan_id: str):
    """Carry out a plan (CONTRACT §7): the chat switches to edit and a turn runs from a user
    message saying to go ahead; `accepted` announces that message with the plan it executes."""
    try:
        pending(chat_id, plan_id)  # an unknown plan is not_pending, even while a reply runs
        check_idle()
        with db.atomic():
            row = start(chat_id, plan_id, request_id or "plan_" + secrets.token_hex(6))
            chats.touch(chat_id)
    except NotPending as exc:
        raise Refused("not_pending", str(exc)) from None
    return row, {"executes_plan": executed_plan(row.content_parts)}


FEATURE = Feature(
    name="plans",
    tools=_tools,
    catalog=lambda: [_TOOL],
    quote=_quote,
    plan_open=lambda chat_id: executing(chat_id) is not None,
    mode_changed=mode_changed,
    bind=_TurnPlans,
    commands={"execute_plan": _execute},
    # CONTRACT §7: update_plan made or changed a plan; `message_id` is the message that carries it.
    events=(Event("plan", {"plan_id": str, "steps": list[PlanStep]}, {"message_id": int}, turn_id=str),),
)
