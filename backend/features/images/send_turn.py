"""An image send (CONTRACT §13): a message sent with `image: true` is drawn, not answered by the chat model.

The feature runs such a turn itself (`runs_turn`): the message's text is the prompt, drawn at the
size Settings → Images sets with the backend chosen there. The turn opens its reply first, so the
partial images have a message to go on, then draws, keeps and announces the image as a tool call
does (making.py; the events' `call_id` is `send-<reply id>`: there is no call, and it ties the
partials to the image), and closes the reply with one plain sentence. No backend, one that cannot
draw, or an answer that is no image Numi keeps ends the turn `failed` with the sentence saying why,
the reply left with status `error` and nothing kept; Stop while drawing ends it `cancelled`, nothing
kept. The chat model is never asked.
"""
from __future__ import annotations

from backend.core import agent
from backend.core.status import CANCELLED, COMPLETED, FAILED
from backend.core.text import well_formed
from backend.features.images import making, picture, section, tool
from backend.features.images.draw import settings
from backend.features.images.wire import DrawFailed
from backend.store import history
from backend.store.db import short_connection
from backend.turns.features import TurnRun

NO_BACKEND = "no_image_backend"  # nothing chosen in Settings → Images, or what is chosen cannot draw
FAILED_CODE = "image_failed"  # the backend drew nothing Numi keeps


def requested(user_message_id: int | None) -> str | None:
    """The text of the message the turn answers when it was sent with `image: true`, else None."""
    if user_message_id is None:
        return None
    row = history.by_ids([user_message_id]).get(user_message_id)
    parts = row.content_parts if row is not None and isinstance(row.content_parts, dict) else {}
    return row.content if row is not None and parts.get("image") is True else None


def call_id(message_id: int) -> str:
    return f"send-{message_id}"


def reply_text(item: dict) -> str:
    """The reply's words beside its image: plain text, with nothing an image backend said in it."""
    return f"Drew the image ({item['width']} × {item['height']} px)."


def run(turn: TurnRun) -> agent.Outcome | None:
    """The outcome of an image send's turn; None for any other turn (the engine runs it)."""
    if turn.continuing:
        return None
    text = requested(turn.user_message_id)
    if text is None:
        return None
    message_id = turn.open_reply()
    refused = _refused(turn, text)
    if refused is not None:
        return refused
    try:
        made = making.make(turn.services.feature_services.get("images"), turn.publish, well_formed(text.strip()),
                           None, turn.cancel, message_id, call_id(message_id))
    except (DrawFailed, picture.NotAnImage) as exc:
        if turn.cancel.is_set():
            return agent.Outcome(CANCELLED, "cancelled", "Stopped before the image was finished; nothing was kept.")
        return agent.Outcome(FAILED, FAILED_CODE, str(exc))
    turn.close_reply(message_id, reply_text(made.item))
    return agent.Outcome(COMPLETED)


def _refused(turn: TurnRun, text: str) -> agent.Outcome | None:
    """Why nothing can be drawn for this message before anything is asked, or None."""
    if turn.cancel.is_set():
        return agent.Outcome(CANCELLED, "cancelled", "Stopped before the image was drawn.")
    if settings()["backend"] is None:
        return agent.Outcome(FAILED, NO_BACKEND, "No image backend is set, so nothing can be drawn. Choose one in "
                                                 "Settings → Images, then send the message again.")
    service = turn.services.feature_services.get("images")
    with short_connection():
        reason = section.cannot_draw(service.keys if service is not None else None)
    if reason is not None:
        return agent.Outcome(FAILED, NO_BACKEND, reason)
    if service is None:
        return agent.Outcome(FAILED, FAILED_CODE, "Images cannot be drawn right now (the images feature did not "
                                                  "start; Numi's log says why).")
    if len(text.strip()) > tool.PROMPT_MAX:
        return agent.Outcome(FAILED, FAILED_CODE, f"The message is {len(text.strip()):,} characters long; an image "
                                                  f"is drawn from at most {tool.PROMPT_MAX:,}. Describe the picture "
                                                  f"in fewer words.")
    return None
