"""From stored rows to a model request: the chat's model, its provider and its history."""
from __future__ import annotations

import os
from dataclasses import replace

from backend.core.agent import Route
from backend.core.history import MAX_MESSAGES, Window, fit
from backend.core.types import Message, ModelRequest, ProviderConfig, ToolCall
from backend.store import history
from backend.store.files import FileStore
from backend.store.models import Chat, ModelEntry, Provider, Setting
from backend.store.serialize import attachment_ids, files_by_id
from backend.turns.attachments import AttachmentError, Budget, message_parts

CONTINUE_PROMPT = ("Your previous reply was cut off. Continue it exactly where it stopped, "
                   "without repeating what is already written.")


class TurnSetupError(Exception):
    """The turn cannot start; the message says what the person should do."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def row_to_message(row) -> Message:
    calls = tuple(ToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments", ""))
                  for c in (row.tool_calls or []))
    return Message(role=row.role, content=row.content or "", reasoning=row.reasoning_content or "",
                   reasoning_details=tuple(row.reasoning_details or ()), tool_calls=calls,
                   tool_call_id=row.tool_call_id, is_error=bool(row.tool_error), model_id=row.model_id)


# fit() keeps at most MAX_MESSAGES messages, so a request reads only the newest rows
# (with a margin for the rows it skips): a 10 000-message chat then costs what a
# 225-message one does, instead of building every row it is about to drop.
HISTORY_READ = MAX_MESSAGES + 25


# The rows a request reads (backend/store/history.py).
HistoryRow = history.RequestRow
history_rows = history.request_rows


def _usable(row: HistoryRow) -> bool:
    # A failed reply that never produced text carries nothing the model should see.
    return not (row.role == "assistant" and not row.content and not row.tool_calls)


def resolve_model(chat: Chat, asked: str | None = None) -> ModelEntry:
    """The model a turn uses: the one asked for (regenerate with…), the chat's, else the default."""
    model_id = asked or chat.model_id
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


def workspace_folder(chat: Chat) -> str | None:
    """The chat's workspace folder, which must still be there: tools never guess another."""
    if not chat.workspace:
        return None
    if not os.path.isdir(chat.workspace):
        raise TurnSetupError("workspace_missing", f"The workspace folder {chat.workspace} is no longer there. "
                                                  f"Choose another folder for this chat, or remove it.")
    return chat.workspace


def provider_config(provider: Provider, keys) -> ProviderConfig:
    if not provider.enabled:
        raise TurnSetupError("provider_disabled", f"The provider {provider.name} is turned off. "
                                                  f"Turn it on in Settings → Providers, or pick another model.")
    return ProviderConfig(id=provider.id, name=provider.name, kind=provider.kind, base_url=provider.base_url,
                          api_key=keys.get(provider.id), timeout=float(provider.timeout))


def with_attachments(rows: list[HistoryRow], model: ModelEntry, store: FileStore | None) -> list[Message]:
    """The rows as Messages, each user message with its files: images as Images, readable
    files as text before what the person wrote (backend/turns/attachments.py)."""
    files = files_by_id(i for r in rows if r.role == "user" for i in attachment_ids(r))
    newest_user = max((r.id for r in rows if r.role == "user"), default=None)
    budget = Budget.from_env(model.context_window) if files else None
    out = []
    for row in rows:
        message = row_to_message(row)
        attached = [files[i] for i in attachment_ids(row) if i in files] if row.role == "user" else []
        if attached and store is not None:
            try:
                parts = message_parts(attached, store, budget, vision=bool(model.supports_vision),
                                      model_label=model.label or model.api_model,
                                      current=row.id == newest_user)
            except AttachmentError as exc:
                raise TurnSetupError(exc.code, exc.message) from None
            content = "\n\n".join(p for p in (parts.context, message.content) if p)
            message = replace(message, content=content, images=parts.images)
        out.append(message)
    return out


def newest_turns(chat_id: str) -> list[HistoryRow]:
    """The usable rows fit() needs to choose exactly as it would from the whole branch."""
    n = HISTORY_READ
    while True:
        read = history_rows(chat_id, newest=n)
        if len(read) < n:
            return [r for r in read if _usable(r)]
        # Start at a turn's first message: a turn cut by the read could otherwise be sent
        # without its user message (or with tool results whose call was not read).
        start = next((i for i, r in enumerate(read) if r.role == "user"), None)
        if start is not None:
            rows = [r for r in read[start:] if _usable(r)]
            if len(rows) > MAX_MESSAGES:  # more whole turns than fit() can keep
                return rows
        n *= 4


def left_out(rows: list[HistoryRow], window: Window, continuing: bool = False) -> int:
    """How many messages of the branch lie above the window's first: its depth.

    fit() keeps whole turns, so the window opens with the user message that is as
    many user messages from the end as the window holds (the continue prompt aside).
    """
    users = [r for r in rows if r.role == "user"]
    kept = sum(m.role == "user" for m in window.messages) - (1 if continuing else 0)
    return users[-kept].depth if 0 < kept <= len(users) else 0


def build_request(chat: Chat, model: ModelEntry, keys, tools=(), continuing: bool = False,
                  files: FileStore | None = None) -> tuple[ModelRequest, Window]:
    rows = newest_turns(chat.id)
    messages = with_attachments(rows, model, files)
    if continuing:
        messages.append(Message(role="user", content=CONTINUE_PROMPT))
    try:
        window = fit(messages)
    except Exception as exc:
        raise TurnSetupError(getattr(exc, "code", "context_too_long"), str(exc)) from exc
    window = replace(window, omitted=left_out(rows, window, continuing))
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
    # A model that cannot see images is no stand-in for a request that carries some.
    needs_vision = any(m.images for m in base.messages)
    for model_id in model.fallbacks or []:
        other = ModelEntry.get_or_none(ModelEntry.id == model_id)
        if other is None or other.id == model.id or not other.provider.enabled:
            continue
        if needs_vision and not other.supports_vision:
            continue
        routes.append(Route(other.id, replace(base, provider=provider_config(other.provider, keys),
                                              wire_api=other.wire_api, model=other.api_model,
                                              model_id=other.id, max_output_tokens=other.max_output_tokens)))
    return tuple(routes)
