"""A provider's speech API through the `openai` SDK: `POST {base_url}/audio/speech`.

MP3 is asked for (the smallest the API gives); an OpenAI-compatible server may answer WAV or Ogg
whatever was asked, so the type is told from the bytes and anything else is refused. The body is
read in capped chunks, the whole call has a time cap (its sockets shut when it passes), and the SDK
retries nothing: every failure is a 502 whose sentence names the provider (and its HTTP status).
"""
from __future__ import annotations

import logging
import threading
from typing import Final

from backend.core.errors import ProviderError
from backend.core.types import ProviderConfig
from backend.features.voice import tts_audio
from backend.features.voice.tts_audio import Speech, SpeechFailed
from backend.providers import StreamControl, api_failure
from backend.providers.wire import client_timeout, openai_base_url, sendable_key

log = logging.getLogger(__name__)

FORMAT: Final = "mp3"
BODY_CAP = 64 * 1024 * 1024  # far above 4 096 characters of speech in any of the formats
TOTAL_S = 300.0  # a whole answer, however slowly it trickles in
READING = api_failure.Task(doing="read aloud", refusing="read this aloud", while_doing="reading aloud",
                           api="speech API", model_kind="speech model", settings="Settings → Voice",
                           refused_fix=" Check the model and the voice in Settings → Voice.", broke="the audio")


def speak(provider: ProviderConfig, model: str, voice: str, text: str, speed: float) -> Speech:
    """`text` spoken by `model` on `provider`; SpeechFailed (502) with a sentence naming it."""
    import openai

    try:
        key, base_url = sendable_key(provider), openai_base_url(provider)
    except ProviderError as exc:
        raise SpeechFailed(409, "provider_unusable", str(exc)) from None
    control = StreamControl()
    http = control.http_client(provider.timeout)
    client = openai.OpenAI(api_key=key, base_url=base_url, http_client=http, max_retries=0,
                           timeout=client_timeout(provider.timeout))
    timer = threading.Timer(TOTAL_S, control.abort)
    timer.daemon = True
    timer.start()
    try:
        with client.audio.speech.with_streaming_response.create(
                model=model, voice=voice, input=text, response_format=FORMAT, speed=speed) as response:
            data = _read_capped(response.iter_bytes(), response.headers.get("content-length"), provider)
    except SpeechFailed:
        raise
    except Exception as exc:
        raise _failure(exc, provider, model, base_url, control) from None
    finally:
        timer.cancel()
        http.close()
    mime = tts_audio.mime_of(data)
    if mime is None:
        raise SpeechFailed(502, "provider_error", f"{provider.name} answered the speech request with something that "
                                                  f"is not WAV, MP3 or Ogg audio ({len(data)} bytes). Check the "
                                                  f"model in Settings → Voice.")
    return Speech(data, mime)


def _read_capped(chunks, length: str | None, provider: ProviderConfig) -> bytes:
    too_big = SpeechFailed(502, "provider_error", f"{provider.name} answered with more audio than Numi takes "
                                                  f"({BODY_CAP // (1024 * 1024)} MB). Try a shorter text.")
    if length is not None and length.strip().isdigit() and int(length) > BODY_CAP:
        raise too_big
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > BODY_CAP:
            raise too_big
    if not out:
        raise SpeechFailed(502, "provider_error", f"{provider.name} answered the speech request with no audio. "
                                                  f"Try again.")
    return bytes(out)


def _failure(exc: Exception, provider: ProviderConfig, model: str, base_url: str,
             control: StreamControl) -> SpeechFailed:
    """The sentence for a speech request that got no audio (a 502)."""
    if control.closed:
        message = f"{provider.name} did not finish reading this aloud within {TOTAL_S:g} s, the most Numi waits. " \
                  f"Try a shorter text."
    else:
        message = api_failure.sentence(exc, provider.name, model, base_url, READING)
    return SpeechFailed(502, "provider_error", message)
