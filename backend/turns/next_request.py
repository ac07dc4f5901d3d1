"""A chat's next model request, as its next turn would send it.

The turn itself, `GET …/context` (the meter) and `GET …/inspect` all start at
`prepare`, so what the meter counts and the inspector shows is what is sent.
"""
from __future__ import annotations

import base64
import hashlib
import logging
import threading
from collections import OrderedDict

from backend.core import tokens
from backend.core.types import Message
from backend.store import history
from backend.store.chats import ChatRow
from backend.store.serialize import files_by_id
from backend.turns import features, tools_off
from backend.turns.context import Plan, TurnSetupError, _attach, plan_request, resolve_model, workspace_folder
from backend.turns.services import TurnServices

log = logging.getLogger(__name__)


def prepare(services: TurnServices, chat: ChatRow, asked_model_id: str | None = None, continuing: bool = False,
            draft: tuple[Message, int] | None = None):
    """The chat's model, its tool set (without what it turns off or denies) and the plan of its next request."""
    model = resolve_model(chat, asked_model_id)
    toolset = services.toolsets.for_chat(workspace_folder(chat), bool(model.supports_tools), chat.mode,
                                         features.plan_open(chat.id), tools_off.left_out(chat),
                                         chat_id=chat.id, folder_id=chat.folder_id)
    plan = plan_request(chat, model, services.keys, toolset.specs(), continuing, services.files, draft)
    return model, toolset, plan


def draft_message(services: TurnServices, model, text: str, file_ids: list[str]) -> tuple[Message, int]:
    """What the person is writing as the next user message, and the tokens its files add
    (files the model cannot take are left out)."""
    message = Message(role="user", content=text)
    if not file_ids:
        return message, 0
    found = files_by_id(file_ids)
    from backend.turns.attachments import Budget
    try:
        return _attach(message, [found[i] for i in file_ids if i in found], model, services.files,
                       Budget.from_env(model.context_window), current=True)
    except TurnSetupError:
        return message, 0  # the send itself says why such a file cannot go


# --- the meter -----------------------------------------------------------------------------

DEFAULT_THRESHOLD = 0.8  # of the window: where the meter turns "near" when the caller names none


def context_json(services: TurnServices, chat: ChatRow, draft_text: str | None = None,
                 file_ids: list[str] | None = None, threshold: float = DEFAULT_THRESHOLD) -> dict:
    """CONTRACT §6 `GET …/context`, plus the threshold, input budget and level the meter shows
    (`threshold`: the compaction feature's, which the route reads)."""
    model = resolve_model(chat)
    draft = draft_message(services, model, draft_text or "", file_ids or []) if (draft_text or file_ids) else None
    model, toolset, plan = prepare(services, chat, draft=draft)
    parts, exact = exact_parts(services, plan, draft is not None)
    used = sum(parts.values())
    limits = plan.limits
    # Over: the whole branch after the summary does not fit the window, so older messages
    # are left out (trimmed_by "window"); no message count ever trims a request.
    over = used > limits.input or plan.trimmed > 0
    level = "over" if over else "near" if used >= threshold * limits.window else "ok"
    return {"model_id": model.id, "context_window": limits.window, "max_output_tokens": limits.reserve,
            "used_tokens": used, "estimated": not exact, "parts": parts,
            "messages_included": plan.included, "messages_omitted": plan.omitted,
            "compaction": plan.checkpoint.as_json() if plan.checkpoint else None,
            "threshold": threshold, "input_budget": limits.input, "level": level,
            "window_known": limits.known, "trimmed_by": "window" if plan.trimmed else None}


def exact_parts(services: TurnServices, plan: Plan, drafted: bool) -> tuple[dict, bool]:
    """The plan's parts, with the history made exact where a provider counted it."""
    parts = dict(plan.parts)
    total = None if drafted else _from_last_reply(plan)
    if total is None and plan.request.wire_api == "anthropic_messages":
        total = _counter.count(plan)
    if total is None:
        return parts, False
    rest = sum(v for k, v in parts.items() if k != "history")
    parts["history"] = max(0, total - rest)
    return parts, True


def _from_last_reply(plan: Plan) -> int | None:
    """The last reply's own count: its request's input plus what it wrote, when the next
    request carries the same system text, tools and first message (the same context key)."""
    if not plan.rows or plan.rows[-1].role != "assistant":
        return None
    row = history.by_ids([plan.rows[-1].id]).get(plan.rows[-1].id)
    usage = row.usage if row is not None and isinstance(row.usage, dict) else {}
    if usage.get("context_key") != plan.key or usage.get("estimated") or not usage.get("input_tokens"):
        return None
    return int(usage["input_tokens"]) + int(usage.get("output_tokens") or 0) - int(usage.get("reasoning_tokens") or 0)


class _AnthropicCounter:
    """Anthropic's token counting endpoint, asked once per distinct request."""

    TIMEOUT_S = 3.0
    SIZE = 64

    def __init__(self):
        self.lock = threading.Lock()
        self.known: OrderedDict[str, int | None] = OrderedDict()

    def count(self, plan: Plan) -> int | None:
        from backend.providers import count_tokens
        url, body = wire(plan)
        key = hashlib.sha256(repr((url, body)).encode()).hexdigest()
        with self.lock:
            if key in self.known:
                return self.known[key]
        try:
            found = count_tokens(plan.request, self.TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - any failure means: estimate instead
            log.info("token counting failed for %s: %s", plan.request.provider.name, exc)
            found = None
        with self.lock:
            self.known[key] = found
            while len(self.known) > self.SIZE:
                self.known.popitem(last=False)
        return found


_counter = _AnthropicCounter()


# --- the inspector -------------------------------------------------------------------------

def wire(plan: Plan) -> tuple[str, dict]:
    from backend.providers import wire_request
    return wire_request(plan.request)


def inspect_json(services: TurnServices, chat: ChatRow) -> dict:
    """CONTRACT §6 `GET …/inspect`: the next request as sent, image bytes as their size and hash."""
    _, _, plan = prepare(services, chat)
    url, body = wire(plan)
    body = _without_bytes(body)
    wire_messages = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input") or []
    counts = [tokens.MESSAGE_FRAMING + _text_tokens(m) for m in wire_messages]
    return {"wire_api": plan.request.wire_api, "model": plan.request.model, "url": url, "body": body,
            "tokens": {"system": plan.parts["system"] + plan.parts["summary"], "tools": plan.parts["tools"],
                       "messages": counts, "total": plan.used}}


def _without_bytes(value):
    """Base64 payloads replaced by a note of their type, size and sha256."""
    if isinstance(value, dict):
        if value.get("type") == "base64" and isinstance(value.get("data"), str):
            return {**value, "data": _described(value.get("media_type", ""), value["data"])}
        return {k: _without_bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_bytes(v) for v in value]
    if isinstance(value, str) and value.startswith("data:") and ";base64," in value[:100]:
        head, data = value.split(";base64,", 1)
        return _described(head[5:], data)
    return value


def _described(mime: str, data: str) -> str:
    try:
        raw = base64.b64decode(data, validate=False)
    except ValueError:
        raw = data.encode()
    return f"[{mime or 'binary'}, {len(raw):,} bytes, sha256 {hashlib.sha256(raw).hexdigest()}]"


def _text_tokens(value) -> int:
    if isinstance(value, str):
        return tokens.IMAGE_TOKENS if value.startswith("[image/") and "sha256" in value else tokens.estimate(value)
    if isinstance(value, dict):
        return sum(_text_tokens(v) for k, v in value.items() if k not in ("role", "type", "id", "tool_call_id"))
    if isinstance(value, list):
        return sum(_text_tokens(v) for v in value)
    return 0
