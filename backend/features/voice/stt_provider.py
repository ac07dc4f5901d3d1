"""Speech to text by a provider: `POST {base_url}/audio/transcriptions` through the `openai` SDK.

The recording goes as it came (the API takes WAV, MP3, OGG, WebM and M4A itself), named with the
extension of the format PyAV found in it, so a server that goes by the name reads it right. The SDK
retries nothing: the person sees the failure and can dictate again. Any failure is SttFailed with a
sentence naming the provider (and the HTTP status when there is one).
"""
from __future__ import annotations

import logging
import os
from typing import IO

from backend.core.errors import ProviderError
from backend.core.types import ProviderConfig
from backend.providers.wire import client_timeout, openai_base_url, sendable_key

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 300.0  # a long recording on a busy server; a transcription sends nothing until done
MESSAGE_CHARS = 300  # of an upstream error message, quoted in the sentence


class SttFailed(Exception):
    """The provider gave no transcript; the message is a sentence for the person."""


def timeout_s() -> float:
    """How long a transcription may take (NUMI_STT_TIMEOUT_S; read at each use: tests shorten it)."""
    try:
        return max(0.1, float(os.environ.get("NUMI_STT_TIMEOUT_S", DEFAULT_TIMEOUT_S)))
    except ValueError:
        return DEFAULT_TIMEOUT_S


def transcribe(provider: ProviderConfig, model: str, file: IO[bytes], filename: str) -> str:
    """The text `model` hears in the recording `file`; SttFailed with a sentence."""
    import openai

    try:
        key, base_url = sendable_key(provider), openai_base_url(provider)
    except ProviderError as exc:
        raise SttFailed(str(exc)) from None
    client = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=client_timeout(timeout_s()))
    try:
        with client:
            answer = client.audio.transcriptions.create(model=model, file=(filename, file), response_format="json")
    except Exception as exc:
        raise _failure(exc, provider, model, base_url) from None
    text = getattr(answer, "text", None)
    if not isinstance(text, str):
        raise SttFailed(f"{provider.name} answered without a transcript (no text). Check the model in Settings → "
                        f"Voice.")
    return " ".join(text.split())


def _said(body) -> str:
    """`: "<the provider's message>".` when the error body has one, else `.`."""
    # The SDK hands over the body's "error" object; a server may also answer {"error": "…"} or {"detail": "…"}.
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message") or error.get("detail") if isinstance(error, dict) else error
    if not isinstance(message, str) or not message.strip():
        return "."
    message = " ".join(message.split())
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + "…"
    return f': "{message}".'


def _failure(exc: Exception, provider: ProviderConfig, model: str, base_url: str) -> SttFailed:
    """The sentence for a transcription that got no text."""
    import httpx2
    import openai

    name = provider.name
    if isinstance(exc, openai.APIStatusError):
        status, said = exc.status_code, _said(exc.body)
        if status in (401, 403):
            return SttFailed(f"{name} refused the API key (HTTP {status}) when asked to transcribe{said} Check the "
                             f"key for {name} in Settings → Providers.")
        if status == 404:
            return SttFailed(f"{name} has no transcription API or no model {model!r} at {base_url} (HTTP 404){said} "
                             f"Check the model in Settings → Voice.")
        if status == 429:
            return SttFailed(f"{name} is rate-limiting or out of credit (HTTP 429){said} Try again later.")
        if 400 <= status < 500:
            return SttFailed(f"{name} refused to transcribe this recording with {model} (HTTP {status}){said}")
        return SttFailed(f"{name} failed while transcribing (HTTP {status}){said} Try again later.")
    if isinstance(exc, (openai.APITimeoutError, httpx2.TimeoutException)):
        return SttFailed(f"{name} did not finish the transcription within {timeout_s():g} s. Try again later, or "
                         f"send a shorter recording.")
    if isinstance(exc, openai.APIConnectionError):
        return SttFailed(f"{name} could not be reached at {base_url} to transcribe. Check that it is running.")
    log.exception("voice: transcribing with %s failed", name)
    return SttFailed(f"{name} did not answer as the OpenAI audio API does ({type(exc).__name__}). Check the "
                     f"provider's base URL and the model in Settings → Voice.")
