"""Tool approval settings (our addition to CONTRACT §3, docs/PROTOCOL.md "Approvals"): each
tool's policy per chat and by default, and the standing "always" rules, listed and removable."""
from __future__ import annotations

from flask import Blueprint, request

from backend.api.validate import json_body
from backend.errors import invalid, not_found
from backend.runtime import runtime
from backend.store.models import Chat
from backend.turns import approvals

bp = Blueprint("approvals", __name__)


def _chat_id(value) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str) or Chat.get_or_none(Chat.id == value) is None:
        raise not_found("chat")
    return value


@bp.get("/api/approvals")
def list_approvals():
    chat_id = _chat_id(request.args.get("chat_id"))
    tools = [{"name": t.name, "description": t.spec.description, "needs_approval": bool(t.needs_approval)}
             for t in runtime().toolsets.catalog()]
    return {"tools": tools, "default": approvals.policies(None),
            "chat": approvals.policies(chat_id) if chat_id else {},
            "rules": [r for r in approvals.all_rules() if chat_id is None or r["chat_id"] == chat_id]}


@bp.put("/api/approvals/policy")
def put_policy():
    body = json_body()
    chat_id = _chat_id(body.get("chat_id"))
    tool, policy = body.get("tool"), body.get("policy")
    errors = {}
    if not isinstance(tool, str) or not tool.strip() or len(tool) > 200:
        errors["tool"] = "Name the tool (1 to 200 characters)."
    if policy is not None and policy not in approvals.POLICIES:
        errors["policy"] = "Must be ask, allow, deny, or null to fall back to the default."
    if errors:
        raise invalid(errors)
    approvals.set_policy(chat_id, tool, policy)
    return {"tool": tool, "chat_id": chat_id, "policy": policy}


@bp.delete("/api/approvals/rules")
def delete_rule():
    body = json_body()
    chat_id = _chat_id(body.get("chat_id"))
    rule = body.get("rule")
    if chat_id is None or not isinstance(rule, dict) or not isinstance(rule.get("tool"), str):
        raise invalid({"rule": "Give the chat_id and the rule as GET /api/approvals lists it."})
    if not approvals.forget(chat_id, {k: v for k, v in rule.items() if k != "chat_id"}):
        raise not_found("rule")
    return "", 204
