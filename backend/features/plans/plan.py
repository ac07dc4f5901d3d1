"""Plans (CONTRACT §7): the `update_plan` tool, the plan saved on the message that made it,
and executing a plan.

A plan is `{"plan_id", "steps": [{"text", "status"}]}`. The assistant message whose step
called `update_plan` carries the plan as that call left it, and a `plan` event says so.
Updates continue the chat's current plan (the newest one on the active branch, or the one
being executed) and keep its id; once every step of it is done, the next update starts a
new plan.

Executing a plan switches the chat to `edit` and adds a user message saying to go ahead,
which holds the plan as it was then. The model reads the plan in the request as an
assistant message before that user message, its own proposal: never in the person's
words, so that plan text the model took from a file or a page does not come back to it
with the person's authority (the feature's `quote`, which backend/turns/context.py calls). While the plan runs, `update_plan`
stays offered until every step is done or the chat's mode changes.
"""
from __future__ import annotations

import secrets
from typing import TypedDict

from backend.core.tools import Tool, ToolRegistry
from backend.core.types import Message as ModelMessage
from backend.core.types import ToolSpec
from backend.store import chat_state, chats, history
from backend.store.db import db
from backend.turns.modes import UPDATE_PLAN

STATUSES = ("pending", "active", "done")
MAX_STEPS = 50
MAX_STEP_CHARS = 500
EXECUTE_TEXT = ("Go ahead with the plan: work through it in order, and if a step turns out to be wrong, "
                "stop and say so.")
QUOTE_HEAD = "The plan I proposed:"

SPEC = ToolSpec(
    name=UPDATE_PLAN,
    description=("Propose or update the plan for the task: the whole list of steps each time, in order, "
                 "each with its status (pending, active or done). The person sees the plan as a card "
                 "with each step's status; in plan mode they can execute it."),
    parameters={
        "type": "object",
        "properties": {"steps": {
            "type": "array", "minItems": 1, "maxItems": MAX_STEPS,
            "items": {"type": "object",
                      "properties": {"text": {"type": "string", "description": "What the step does, briefly."},
                                     "status": {"type": "string", "enum": list(STATUSES)}},
                      "required": ["text", "status"], "additionalProperties": False}}},
        "required": ["steps"],
        "additionalProperties": False,
    })


class PlanStep(TypedDict):
    """One step of a `plan` event."""
    text: str
    status: str  # pending | active | done


class NotPending(Exception):
    """There is no such plan to execute; the message says why."""


# --- the tool -----------------------------------------------------------------------------

def checked_steps(args: dict) -> list[dict]:
    """The steps of an update_plan call, or ValueError with a sentence for the model."""
    steps = args.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ValueError("update_plan needs \"steps\": a non-empty list of {\"text\", \"status\"} objects.")
    if len(steps) > MAX_STEPS:
        raise ValueError(f"A plan has at most {MAX_STEPS} steps (this one has {len(steps)}); merge some.")
    out = []
    for n, step in enumerate(steps, start=1):
        if not isinstance(step, dict):
            raise ValueError(f"Step {n} must be an object with \"text\" and \"status\".")
        text, status = step.get("text"), step.get("status")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"Step {n} needs a non-empty \"text\".")
        if len(text.strip()) > MAX_STEP_CHARS:
            raise ValueError(f"Step {n} is longer than {MAX_STEP_CHARS} characters; say it more briefly.")
        if status not in STATUSES:
            raise ValueError(f"Step {n} has status {status!r}; use one of: {', '.join(STATUSES)}.")
        out.append({"text": text.strip(), "status": status})
    return out


def finished(steps) -> bool:
    """Whether every step is done (a plan of no steps is not)."""
    return bool(steps) and all(isinstance(s, dict) and s.get("status") == "done" for s in steps)


def update_plan_tool(record=None) -> Tool:
    """The update_plan tool; `record(steps) -> result text` saves and announces a plan (a turn's)."""
    def run(args: dict, cancel) -> str:
        steps = checked_steps(args)
        if record is None:
            raise ValueError("update_plan can only run inside a turn.")
        return record(steps)

    # Not concurrent: its updates must reach the chat in the order the model made them.
    return Tool(SPEC, run, concurrent=False, needs_approval=False, read_only=True)


def bind(tools: ToolRegistry, record) -> None:
    """Give the turn's update_plan (when it is offered one) the turn's way of recording a plan."""
    if tools.get(UPDATE_PLAN) is not None:
        tools.add(update_plan_tool(record))


def record(chat_id: str, message_id: int | None, steps: list[dict], publish, mode: str) -> str:
    """Save the plan on the message whose step called update_plan, announce it, say so to the model."""
    with db.atomic():
        running = executing(chat_id)
        plan_id = running or _continued(chat_id) or "p_" + secrets.token_hex(6)
        plan = {"plan_id": plan_id, "steps": steps}
        if message_id is not None:
            history.save(message_id, plan=plan)
        done = finished(steps)
        if running and done:
            _set_executing(chat_id, None)
    publish("plan", plan_id=plan_id, steps=steps, **({"message_id": message_id} if message_id is not None else {}))
    counts = ", ".join(f"{sum(s['status'] == k for s in steps)} {k}" for k in STATUSES)
    said = f"Plan {plan_id} saved: {len(steps)} step{'s' if len(steps) != 1 else ''} ({counts})."
    if mode == "plan":
        return said + " Stop here: the person reviews the plan and can execute it."
    return said + (" Every step is done." if done else "")


# --- which plan ---------------------------------------------------------------------------

def _continued(chat_id: str) -> str | None:
    """The id an update keeps: the newest plan's on the branch, unless every step of it is done."""
    found = history.plans_on_branch(chat_id)
    if not found:
        return None
    plan = found[0][1]
    return None if finished(plan.get("steps")) else plan.get("plan_id")


def find(chat_id: str, plan_id: str) -> dict | None:
    """The plan as its newest update on the active branch left it, or None."""
    return next((plan for _, plan in history.plans_on_branch(chat_id) if plan.get("plan_id") == plan_id), None)


# --- executing ----------------------------------------------------------------------------

EXECUTING_KEY = "plan_executing"  # a chat's own state (backend/store/chat_state.py): the plan it carries out


def executing(chat_id: str) -> str | None:
    """The id of the plan the chat is carrying out, or None."""
    value = chat_state.get(chat_id, EXECUTING_KEY)
    return value if isinstance(value, str) else None


def _set_executing(chat_id: str, plan_id: str | None) -> None:
    chat_state.put(chat_id, EXECUTING_KEY, plan_id)


def mode_changed(chat_id: str) -> None:
    """The person changed the chat's mode: a plan being carried out stops being one."""
    _set_executing(chat_id, None)


def pending(chat_id: str, plan_id: str) -> dict:
    """The plan with that id as it stands, when it can be executed; else NotPending saying why."""
    plan = find(chat_id, plan_id)
    if plan is None:
        raise NotPending("There is no plan with that id in this chat (on the branch shown). "
                         "Execute a plan from its card.")
    if finished(plan.get("steps")):
        raise NotPending("Every step of that plan is done already; there is nothing left to execute.")
    if _executed_as(chat_id, plan_id) == _steps_of(plan):
        raise NotPending("That plan was executed already and has not changed since; ask the model to go on, "
                         "or to change the plan, instead.")
    return plan


def _steps_of(plan: dict | None) -> list | None:
    steps = plan.get("steps") if isinstance(plan, dict) else None
    return [(s.get("text"), s.get("status")) for s in steps if isinstance(s, dict)] if isinstance(steps, list) else None


def _executed_as(chat_id: str, plan_id: str) -> list | None:
    """The steps of that plan as its last execution on the active branch quoted them, or None."""
    for parts in history.plan_executions_on_branch(chat_id):
        executed = quoted(parts)
        if executed is not None and executed.get("plan_id") == plan_id:
            return _steps_of(executed)
    return None


def executed_plan(content_parts) -> dict | None:
    """What `accepted` and GET …/messages say a user message executes: `{"plan_id", "steps"}`, or None."""
    plan = quoted(content_parts)
    return {"plan_id": plan.get("plan_id"), "steps": plan["steps"]} if plan is not None else None


def start(chat_id: str, plan_id: str, request_id: str):
    """Inside a transaction: switch the chat to edit and add the user message that executes the
    plan (returned; its turn is the caller's to start). NotPending when it cannot be executed."""
    plan = pending(chat_id, plan_id)
    chats.set_mode(chat_id, "edit")
    _set_executing(chat_id, plan_id)
    return history.append_to_branch(chat_id, role="user", content=EXECUTE_TEXT, request_id=request_id,
                                    content_parts={"plan": plan})


def quoted(content_parts) -> dict | None:
    """The plan a user message executes, from its stored parts (None for any other message)."""
    plan = content_parts.get("plan") if isinstance(content_parts, dict) else None
    return plan if isinstance(plan, dict) and isinstance(plan.get("steps"), list) else None


def quote(plan: dict) -> ModelMessage:
    """The plan as the model's own message: what it proposed, as its update_plan call left it."""
    lines = [QUOTE_HEAD]
    for n, step in enumerate(plan.get("steps") or (), start=1):
        if isinstance(step, dict):
            lines.append(f"{n}. [{step.get('status', 'pending')}] {step.get('text', '')}")
    return ModelMessage(role="assistant", content="\n".join(lines))
