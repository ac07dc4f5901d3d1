"""A chat's context (CONTRACT §6): the meter's counts, the inspector, and compaction."""
from __future__ import annotations

from flask import Blueprint

from backend.api.validate import MISSING, Fields, json_body
from backend.errors import ApiError, not_found
from backend.features import compaction
from backend.runtime import runtime
from backend.store.models import Chat, File
from backend.turns import next_request
from backend.turns.context import TurnSetupError
from backend.turns.registry import CommandError

bp = Blueprint("context", __name__)
MAX_DRAFT_CHARS = 1_000_000
MAX_DRAFT_FILES = 50


def _chat(chat_id: str) -> Chat:
    chat = Chat.get_or_none((Chat.id == chat_id) & Chat.deleted_at.is_null())
    if chat is None:
        raise not_found("chat")
    return chat


def _setup_error(exc: TurnSetupError) -> ApiError:
    # No model, a provider turned off, a missing workspace: the chat cannot be planned until fixed.
    return ApiError(409 if exc.code != "context_too_long" else 422, exc.code, exc.message)


def _meter(services, chat: Chat, *args) -> dict:
    """The meter, at the threshold where compaction summarizes."""
    return next_request.context_json(services, chat, *args, threshold=compaction.settings().threshold)


def _planned(build, chat: Chat, *args) -> dict:
    """What `build` makes of the chat's next request; a chat that cannot plan one says why."""
    try:
        return build(runtime().services, chat, *args)
    except TurnSetupError as exc:
        raise _setup_error(exc) from None


@bp.get("/api/chats/<chat_id>/context")
def get_context(chat_id):
    return _planned(_meter, _chat(chat_id))


@bp.post("/api/chats/<chat_id>/context")
def count_draft(chat_id):
    """The context as it would be with the draft (text and uploaded files) sent next."""
    chat = _chat(chat_id)
    f = Fields(json_body(), ("draft", "file_ids"))
    draft = f.text("draft", max_len=MAX_DRAFT_CHARS)
    ids = f.raw("file_ids", False, False)
    if ids is not MISSING and (not isinstance(ids, list) or len(ids) > MAX_DRAFT_FILES
                               or not all(isinstance(i, str) for i in ids)):
        f.fail("file_ids", f"Must be a list of up to {MAX_DRAFT_FILES} file ids from POST /api/files.")
    f.check()
    ids = [] if ids is MISSING else list(dict.fromkeys(ids))
    known = {r.id for r in File.select(File.id).where(File.id.in_(ids))} if ids else set()
    if missing := [i for i in ids if i not in known]:
        f.fail("file_ids", f"No uploaded file with id {missing[0]!r}. Attach it again.")
        f.check()
    return _planned(_meter, chat, "" if draft is MISSING else draft, ids)


@bp.get("/api/chats/<chat_id>/inspect")
def inspect(chat_id):
    return _planned(next_request.inspect_json, _chat(chat_id))


@bp.post("/api/chats/<chat_id>/compact")
def compact(chat_id):
    """Summarize everything but the newest turn now → 200 the compaction (the engine's command:
    a message sent meanwhile waits for it, and no turn's summary of the chat runs beside it)."""
    chat = _chat(chat_id)
    try:
        return runtime().turns.compact(chat.id).as_json()
    except CommandError as exc:
        raise ApiError(503 if exc.code == "shutting_down" else 409, exc.code, exc.message) from None
    except TurnSetupError as exc:
        raise _setup_error(exc) from None
    except compaction.NothingToCompact as exc:
        raise ApiError(422, exc.code, exc.message) from None
    except compaction.SummaryStopped as exc:
        if exc.reason == "shutdown":
            raise ApiError(503, "shutting_down", "Numi is quitting, so the summary was not made. "
                                                 "Nothing was changed.") from None
        raise ApiError(409, "cancelled", "The summary was stopped. Nothing was changed; "
                                         "Summarize now starts it again.") from None
    except compaction.CompactionFailed as exc:
        # A time cap is the provider not answering in time (504); anything else it said is 502.
        status = 504 if isinstance(exc, compaction.SummaryTimedOut) else 502
        raise ApiError(status, "compaction_failed", f"The summary could not be made: {exc.message}. "
                                                    f"Nothing was changed; try again or pick another summary "
                                                    f"model in Settings.") from None
