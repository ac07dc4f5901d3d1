"""A failed call to a provider's OpenAI-style API (images, audio) said as one sentence a person can act on.

The chat's own requests have their mapping in error_map.py; the features that call another API of a
catalog provider through the `openai` SDK (drawing, transcribing, reading aloud) share this one, so
each failure names the provider, what it was asked, the HTTP status and the provider's own words,
and says where to fix it.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)
MESSAGE_CHARS = 200  # the provider's own words quoted at most


@dataclass(frozen=True)
class Task:
    """What the call was for, in the words its failures use."""
    doing: str  # what it was asked to do: "draw", "transcribe", "read aloud"
    refusing: str  # what a 4xx refused to do: "draw this", "transcribe this recording", "read this aloud"
    while_doing: str  # "drawing", "transcribing", "reading aloud"
    api: str  # "images API", "transcription API", "speech API"
    model_kind: str  # "image model", "model", "speech model"
    settings: str  # where the model is chosen: "Settings → Images"
    refused_fix: str = ""  # what to do after a 4xx refusal, a sentence with a leading space
    timeout: str = ""  # the sentence for a timeout, when the task says it its own way
    broke: str = ""  # what a connection broken mid-answer lost: "the image", "the audio"
    lost: str = ""  # appended where nothing was kept: "; nothing was kept"


def upstream_message(body) -> str:
    """The message an error answer carries (OpenAI's {"error": {"message"}}, FastAPI's {"detail"},
    {"error": str}), short and on one line; "" when none."""
    if isinstance(body, (bytes, bytearray, str)):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):
            return ""
    message = ""
    if isinstance(body, dict):
        err = body.get("error")
        # OpenAI: {"error": {"message"}}; Automatic1111: {"error": its type, "detail", "errors": the words}.
        found = [err.get("message"), err.get("detail")] if isinstance(err, dict) else [
            body.get("errors"), body.get("detail"), body.get("message"), err]
        for text in found:
            if isinstance(text, list) and text and isinstance(text[0], dict):  # FastAPI's validation errors
                text = text[0].get("msg")
            if isinstance(text, str) and text.strip():
                message = text
                break
    return " ".join(message.split())[:MESSAGE_CHARS]


def said(message: str) -> str:
    """The upstream's words as a clause, else a full stop."""
    return f": {message!r}." if message else "."


def sentence(exc: Exception, name: str, model: str, base_url: str, task: Task) -> str:
    """The sentence for `exc`, raised by the SDK while asking provider `name` for `task`."""
    import httpx2
    import openai

    if isinstance(exc, openai.APIStatusError):
        status, words = exc.status_code, said(upstream_message(exc.body))
        if status in (401, 403):
            return (f"{name} refused the API key (HTTP {status}) when asked to {task.doing}{words} Check the key "
                    f"for {name} in Settings → Providers.")
        if status == 404:
            return (f"{name} has no {task.api} or no {task.model_kind} {model!r} at {base_url} (HTTP 404){words} "
                    f"Check the model in {task.settings}.")
        if status == 429:
            return f"{name} is rate-limiting or out of credit (HTTP 429){words} Try again later."
        if 400 <= status < 500:
            return f"{name} refused to {task.refusing} with {model} (HTTP {status}){words}{task.refused_fix}"
        return f"{name} failed while {task.while_doing} (HTTP {status}){words} Try again later."
    if isinstance(exc, (openai.APITimeoutError, httpx2.TimeoutException)):
        return task.timeout or f"{name} did not answer in time while {task.while_doing}{task.lost}. Try again later."
    if isinstance(exc, openai.APIConnectionError):
        return f"{name} could not be reached at {base_url} to {task.doing}. Check that it is running."
    if isinstance(exc, httpx2.HTTPError) and task.broke:
        return (f"The connection to {name} broke while {task.broke} came ({type(exc).__name__}){task.lost}. "
                f"Try again.")
    log.exception("asking %s to %s failed", name, task.doing)
    return (f"{name} did not answer as the OpenAI {task.api} does ({type(exc).__name__}). Check the provider's "
            f"base URL and the model in {task.settings}.")
