"""A chat's title, asked of its own model after the first answer."""
from __future__ import annotations

import logging

from backend.core.types import Message, ModelRequest
from backend.store import chats, history
from backend.store.db import db
from backend.turns.context import provider_config
from backend.turns.hub import ChatHub
from backend.turns.services import TurnServices

log = logging.getLogger(__name__)
TITLE_PROMPT = ("Write a title of at most six words for the conversation below. "
                "Answer with the title alone: no quotes, no final period.")
MAX_TITLE = 80


def clean_title(text: str) -> str:
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    return line.strip().strip("\"'“”‘’*#").strip().rstrip(".")[:MAX_TITLE].strip()


def maybe_title(services: TurnServices, hub: ChatHub, chat_id: str, model_id: str | None) -> None:
    """Give an untitled chat a title; a failure is logged and never touches the turn."""
    from backend.providers import complete_text

    try:
        with db.connection_context():
            chat = chats.get(chat_id)
            model = chats.model(model_id)
            if chat is None or chat.title or model is None:
                return
            rows = [r for r in history.branch_of(chat_id) if r.role in ("user", "assistant")][:2]
            excerpt = "\n\n".join(f"{r.role}: {r.content[:2000]}" for r in rows if r.content)
            request = ModelRequest(provider=provider_config(model.provider, services.keys),
                                   wire_api=model.wire_api, model=model.api_model, system=TITLE_PROMPT,
                                   messages=(Message(role="user", content=excerpt),),
                                   params={"max_tokens": 30})
            title = clean_title(complete_text(request, stream_fn=services.open_stream))
            if not title:
                return
            if chats.title_if_empty(chat_id, title):
                hub.publish("title_update", None, title=title)
                services.chat_changed(chat_id)
    except Exception as exc:
        log.warning("could not title chat %s: %s", chat_id, exc)
