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
from backend.providers import api_failure
from backend.providers.wire import client_timeout, openai_base_url, sendable_key

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 300.0  # a long recording on a busy server; a transcription sends nothing until done


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


def _failure(exc: Exception, provider: ProviderConfig, model: str, base_url: str) -> SttFailed:
    """The sentence for a transcription that got no text."""
    task = api_failure.Task(
        doing="transcribe", refusing="transcribe this recording", while_doing="transcribing",
        api="transcription API", model_kind="model", settings="Settings → Voice",
        timeout=f"{provider.name} did not finish the transcription within {timeout_s():g} s. Try again later, or "
                f"send a shorter recording.")
    return SttFailed(api_failure.sentence(exc, provider.name, model, base_url, task))
