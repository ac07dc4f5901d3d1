"""Rows to the JSON shapes of CONTRACT §3. No Flask here: the turn engine reuses these."""
from __future__ import annotations

from datetime import datetime, timezone

from backend.store import message_images
from backend.store.files import kind_of
from backend.store.models import File


def iso(ts: float | None) -> str | None:
    """A stored epoch time as ISO 8601 UTC with milliseconds, e.g. 2026-11-29T10:00:00.123Z."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def chat_to_dict(chat, running: bool, full: bool = False, awaiting: bool = False, asking: bool = False) -> dict:
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
        "awaiting_approval": bool(awaiting),  # a running turn waits for an approval answer
        "awaiting_answer": bool(asking),  # a running turn waits for the answer to a question
        "unread": bool(chat.unread),
        "mode": chat.mode or "ask",  # CONTRACT §7
    }
    if full:
        data["system_prompt"] = chat.system_prompt or ""
        data["params"] = dict(chat.params or {})
        data["workspace"] = chat.workspace
        # CONTRACT §15: its own list; null follows its folder's (GET …/tools says what applies).
        data["tools_off"] = list(chat.tools_off) if chat.tools_off is not None else None
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
    data = {
        "id": msg.id,
        "chat_id": msg.chat_id,
        "role": msg.role,
        "content": msg.content or "",
        "reasoning": msg.reasoning_content or "",
        "tool_calls": [_tool_call(c) for c in (msg.tool_calls or [])],
        "tool_call_id": msg.tool_call_id,
        "tool_error": bool(msg.tool_error),  # a tool result that reports a failure
        "status": msg.status,
        "model_id": msg.model_id,
        "usage": msg.usage,
        "error": msg.error,
        "attachments": message_attachments(msg),
        "created_at": iso(msg.created_at),
        "request_id": msg.request_id,
        "parent_id": msg.parent_id,
        # CONTRACT §7: the plan its step's update_plan call left ({"plan_id", "steps"}), else null.
        "plan": msg.plan if isinstance(getattr(msg, "plan", None), dict) else None,
        # CONTRACT §8: the sources its turn's tools brought in, which its text cites as [n].
        "sources": _sources(msg.citation_sources),
    }
    if msg.role == "assistant":
        # CONTRACT §13: the images its step drew (image_generate), each a file; [] when none.
        data["images"] = message_images.items(msg.content_parts)
    # A question sent for a research turn (docs/PROTOCOL.md "Research"): said on the message, so a
    # reload still marks it.
    if msg.role == "user" and isinstance(msg.content_parts, dict) and msg.content_parts.get("research") is True:
        data["research"] = True
    # The models a compare asked (CONTRACT §10), so a reload shows its columns again.
    if msg.role == "user" and isinstance(msg.content_parts, dict) and isinstance(msg.content_parts.get("compare"), list):
        data["compare"] = [m for m in msg.content_parts["compare"] if isinstance(m, str)]
    if msg.role == "user" and isinstance(msg.content_parts, dict) and msg.content_parts.get("image") is True:
        data["image"] = True  # a message sent to be drawn (CONTRACT §13)
    # A user message that executed a plan (CONTRACT §7): the plan as it stood then (docs/PROTOCOL.md).
    executed = msg.content_parts.get("plan") if msg.role == "user" and isinstance(msg.content_parts, dict) else None
    if isinstance(executed, dict) and isinstance(executed.get("steps"), list):
        data["executes_plan"] = {"plan_id": executed.get("plan_id"), "steps": executed["steps"]}
    # A tool result of a file write: the change it made, as its tool row shows it (docs/PROTOCOL.md).
    diff = msg.content_parts.get("diff") if msg.role == "tool" and isinstance(msg.content_parts, dict) else None
    if isinstance(diff, str):
        data["diff"] = diff
    return data


def _sources(value) -> list[dict]:
    """Saved sources as listed: objects with a number (an imported file may hold anything)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict) and isinstance(item.get("n"), int)]


def message_preview(msg, chars: int = 120) -> str:
    """A message's first words; one of files alone is previewed by their names, not as nothing."""
    if msg.content or not attachment_ids(msg):
        return (msg.content or "")[:chars]
    return ("Files: " + ", ".join(f["name"] for f in message_attachments(msg)))[:chars]


def file_to_dict(row) -> dict:
    return {"id": row.id, "name": row.name, "mime": row.mime, "size": row.size, "sha256": row.sha256,
            "kind": kind_of(row.mime), "created_at": iso(row.created_at)}


def attachment_ids(msg) -> list[str]:
    parts = msg.content_parts if isinstance(msg.content_parts, dict) else {}
    return [i for i in parts.get("attachments") or () if isinstance(i, str)]


def files_by_id(ids) -> dict:
    ids = list(dict.fromkeys(ids))
    return {f.id: f for f in File.select().where(File.id.in_(ids))} if ids else {}


def message_attachments(msg) -> list[dict]:
    """The message's files in the order they were attached (one query, none without files)."""
    ids = attachment_ids(msg)
    if not ids:
        return []
    rows = files_by_id(ids)
    return [file_to_dict(rows[i]) for i in ids if i in rows]


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
        "note": model.note,
        "discovered_context_window": model.found_window,
        "created_at": iso(model.created_at),
    }
