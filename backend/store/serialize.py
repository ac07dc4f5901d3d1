"""Rows to the JSON shapes of CONTRACT §3. No Flask here: the turn engine reuses these."""
from __future__ import annotations

from datetime import datetime, timezone


def iso(ts: float | None) -> str | None:
    """A stored epoch time as ISO 8601 UTC with milliseconds, e.g. 2026-11-29T10:00:00.123Z."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def chat_to_dict(chat, running: bool, full: bool = False) -> dict:
    data = {
        "id": chat.id,
        "title": chat.title,
        "model_id": chat.model_id,
        "folder_id": chat.folder_id,
        "pinned": bool(chat.pinned),
        "archived": bool(chat.archived),
        "temporary": bool(chat.temporary),
        "created_at": iso(chat.created_at),
        "updated_at": iso(chat.updated_at),
        "running": bool(running),
        "unread": bool(chat.unread),
    }
    if full:
        data["system_prompt"] = chat.system_prompt or ""
        data["params"] = dict(chat.params or {})
    return data


def _tool_call(call: dict) -> dict:
    # Accept the OpenAI nesting ({"function": {...}}) too, so rows written by any
    # adapter read back in the one shape the contract gives.
    fn = call.get("function") or {}
    return {
        "id": call.get("id"),
        "name": call.get("name", fn.get("name")),
        "arguments": call.get("arguments", fn.get("arguments", "")),
    }


def message_to_dict(msg) -> dict:
    return {
        "id": msg.id,
        "chat_id": msg.chat_id,
        "role": msg.role,
        "content": msg.content or "",
        "reasoning": msg.reasoning_content or "",
        "tool_calls": [_tool_call(c) for c in (msg.tool_calls or [])],
        "tool_call_id": msg.tool_call_id,
        "status": msg.status,
        "model_id": msg.model_id,
        "usage": msg.usage,
        "error": msg.error,
        "attachments": [],
        "created_at": iso(msg.created_at),
        "request_id": msg.request_id,
    }


def provider_to_dict(provider, has_key: bool) -> dict:
    return {
        "id": provider.id,
        "kind": provider.kind,
        "name": provider.name,
        "base_url": provider.base_url,
        "has_key": bool(has_key),
        "enabled": bool(provider.enabled),
        "timeout": provider.timeout,
        "created_at": iso(provider.created_at),
    }


def model_to_dict(model) -> dict:
    return {
        "id": model.id,
        "provider_id": model.provider_id,
        "wire_api": model.wire_api,
        "api_model": model.api_model,
        "label": model.label,
        "context_window": model.context_window,
        "max_output_tokens": model.max_output_tokens,
        "supports": {
            "tools": bool(model.supports_tools),
            "vision": bool(model.supports_vision),
            "reasoning": bool(model.supports_reasoning),
        },
        "fallbacks": list(model.fallbacks or []),
        "price": {"input": model.price_input, "output": model.price_output},
        "created_at": iso(model.created_at),
    }
