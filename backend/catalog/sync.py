"""Between the checked catalog (toml_file.CatalogData) and the `provider` / `model` / `mcp_server` tables."""
from __future__ import annotations

from backend.catalog.toml_file import CatalogData
from backend.store.db import db, now
from backend.store.models import McpServer, ModelEntry, Provider

MCP_COLUMNS = ("transport", "command", "args", "env", "cwd", "url", "headers", "secret_headers", "enabled",
               "call_timeout")


def read_db() -> CatalogData:
    """The catalog as the tables hold it, oldest first (the order the API lists it in)."""
    providers = [{
        "id": p.id, "kind": p.kind, "name": p.name, "base_url": p.base_url,
        "enabled": bool(p.enabled), "timeout": float(p.timeout),
    } for p in Provider.select().order_by(Provider.created_at, Provider.id)]
    models = [{
        "id": m.id, "provider": m.provider_id, "wire_api": m.wire_api, "api_model": m.api_model,
        "label": m.label, "context_window": m.context_window, "max_output_tokens": m.max_output_tokens,
        "supports": {"tools": bool(m.supports_tools), "vision": bool(m.supports_vision),
                     "reasoning": bool(m.supports_reasoning)},
        "fallbacks": list(m.fallbacks or []), "price_input": m.price_input, "price_output": m.price_output,
        "note": m.note,
    } for m in ModelEntry.select().order_by(ModelEntry.created_at, ModelEntry.id)]
    return CatalogData(providers, models, read_mcp_servers())


def mcp_server_dict(row: McpServer) -> dict:
    """A row in the canonical form mcp_file.mcp_server gives (what the file and the API show)."""
    return {"id": row.id, "transport": row.transport, "command": row.command, "args": list(row.args or []),
            "env": dict(row.env or {}), "cwd": row.cwd, "url": row.url, "headers": dict(row.headers or {}),
            "secret_headers": list(row.secret_headers or []), "enabled": bool(row.enabled),
            "call_timeout": float(row.call_timeout)}


def read_mcp_servers() -> list[dict]:
    return [mcp_server_dict(s) for s in McpServer.select().order_by(McpServer.created_at, McpServer.id)]


def _provider_columns(p: dict) -> dict:
    return {"kind": p["kind"], "name": p["name"], "base_url": p["base_url"], "enabled": p["enabled"],
            "timeout": p["timeout"]}


def _model_columns(m: dict) -> dict:
    return {"provider": m["provider"], "wire_api": m["wire_api"], "api_model": m["api_model"],
            "label": m["label"], "context_window": m["context_window"],
            "max_output_tokens": m["max_output_tokens"], "supports_tools": m["supports"]["tools"],
            "supports_vision": m["supports"]["vision"], "supports_reasoning": m["supports"]["reasoning"],
            "fallbacks": m["fallbacks"], "price_input": m["price_input"], "price_output": m["price_output"],
            "note": m["note"]}


def _upsert(model_class, rows: dict, item_id: str, columns: dict, created_at: float) -> bool:
    """Insert or update one row; True when something changed."""
    row = rows.get(item_id)
    if row is None:
        model_class.insert(id=item_id, created_at=created_at, **columns).execute()
        return True
    changed = {}
    for name, value in columns.items():
        current = row.provider_id if name == "provider" else getattr(row, name)
        if current != value:
            changed[name] = value
    if changed:
        model_class.update(**changed).where(model_class.id == item_id).execute()
    return bool(changed)


def apply(data: CatalogData) -> int:
    """Make the tables equal to `data` in one transaction; returns how many rows changed.

    Rows that stay keep their created_at (the API's list order); new ones get
    increasing times in file order. A chat keeps its model_id when its model
    goes: the turn then says the model no longer exists.
    """
    changes = 0
    with db.atomic():
        start = now()
        providers = {p.id: p for p in Provider.select()}
        models = {m.id: m for m in ModelEntry.select()}
        for i, p in enumerate(data.providers):
            changes += _upsert(Provider, providers, p["id"], _provider_columns(p), start + i * 1e-6)
        keep_models = [m["id"] for m in data.models]
        changes += ModelEntry.delete().where(ModelEntry.id.not_in(keep_models)).execute()
        for i, m in enumerate(data.models):
            changes += _upsert(ModelEntry, models, m["id"], _model_columns(m), start + i * 1e-6)
        keep_providers = [p["id"] for p in data.providers]
        changes += Provider.delete().where(Provider.id.not_in(keep_providers)).execute()
        servers = {s.id: s for s in McpServer.select()}
        changes += McpServer.delete().where(McpServer.id.not_in([s["id"] for s in data.mcp_servers])).execute()
        for i, s in enumerate(data.mcp_servers):
            changes += _upsert(McpServer, servers, s["id"], {c: s[c] for c in MCP_COLUMNS}, start + i * 1e-6)
    return changes
