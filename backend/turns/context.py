"""From stored rows to a model request: the chat's model, its provider and its history."""
from __future__ import annotations

from dataclasses import replace

from backend.core.agent import Route
from backend.core.history import Window, fit
from backend.core.types import Message, ModelRequest, ProviderConfig, ToolCall
from backend.store.models import Chat, Message as MessageRow, ModelEntry, Provider, Setting

CONTINUE_PROMPT = ("Your previous reply was cut off. Continue it exactly where it stopped, "
                   "without repeating what is already written.")


class TurnSetupError(Exception):
    """The turn cannot start; the message says what the person should do."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def row_to_message(row: MessageRow) -> Message:
    calls = tuple(ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments", ""))
                  for c in (row.tool_calls or []))
    return Message(role=row.role, content=row.content or "", reasoning=row.reasoning_content or "",
                   reasoning_details=tuple(row.reasoning_details or ()), tool_calls=calls,
                   tool_call_id=row.tool_call_id, is_error=bool(row.tool_error), model_id=row.model_id)


def history_rows(chat_id: str, upto_id: int | None = None) -> list[MessageRow]:
    """The chat's live messages in order, without queued ones (they have not been sent yet)."""
    query = (MessageRow.select()
             .where((MessageRow.chat == chat_id) & MessageRow.deleted_at.is_null()
                    & (MessageRow.status != "queued"))
             .order_by(MessageRow.id))
    if upto_id is not None:
        query = query.where(MessageRow.id <= upto_id)
    return list(query)


def _usable(row: MessageRow) -> bool:
    # A failed reply that never produced text carries nothing the model should see.
    return not (row.role == "assistant" and not row.content and not row.tool_calls)


def resolve_model(chat: Chat) -> ModelEntry:
    model_id = chat.model_id
    if not model_id:
        setting = Setting.get_or_none(Setting.key == "default_model_id")
        model_id = setting.value if setting else None
    if not model_id:
        raise TurnSetupError("no_model", "No model is chosen for this chat. Add a provider in Settings, "
                                         "then pick a model for the chat or a default model.")
    model = ModelEntry.get_or_none(ModelEntry.id == model_id)
    if model is None:
        raise TurnSetupError("no_model", f"The model {model_id!r} of this chat no longer exists. "
                                         f"Pick another model for the chat.")
    return model


def provider_config(provider: Provider, keys) -> ProviderConfig:
    if not provider.enabled:
        raise TurnSetupError("provider_disabled", f"The provider {provider.name} is turned off. "
                                                  f"Turn it on in Settings → Providers, or pick another model.")
    return ProviderConfig(id=provider.id, name=provider.name, kind=provider.kind, base_url=provider.base_url,
                          api_key=keys.get(provider.id), timeout=float(provider.timeout))


def build_request(chat: Chat, model: ModelEntry, keys, tools=(), continuing: bool = False) -> tuple[ModelRequest, Window]:
    rows = [r for r in history_rows(chat.id) if _usable(r)]
    messages = [row_to_message(r) for r in rows]
    if continuing:
        messages.append(Message(role="user", content=CONTINUE_PROMPT))
    try:
        window = fit(messages)
    except Exception as exc:
        raise TurnSetupError(getattr(exc, "code", "context_too_long"), str(exc)) from exc
    system = "\n\n".join(p for p in (chat.system_prompt or "", window.notice()) if p)
    params = {k: v for k, v in (chat.params or {}).items() if v is not None}
    request = ModelRequest(provider=provider_config(model.provider, keys), wire_api=model.wire_api,
                           model=model.api_model, system=system, messages=window.messages,
                           tools=tuple(tools), params=params, model_id=model.id,
                           max_output_tokens=model.max_output_tokens)
    return request, window


def fallback_routes(model: ModelEntry, base: ModelRequest, keys) -> tuple[Route, ...]:
    """The model's fallbacks that can answer now (existing, provider turned on), in order."""
    routes = []
    for model_id in model.fallbacks or []:
        other = ModelEntry.get_or_none(ModelEntry.id == model_id)
        if other is None or other.id == model.id or not other.provider.enabled:
            continue
        routes.append(Route(other.id, replace(base, provider=provider_config(other.provider, keys),
                                              wire_api=other.wire_api, model=other.api_model,
                                              model_id=other.id, max_output_tokens=other.max_output_tokens)))
    return tuple(routes)
