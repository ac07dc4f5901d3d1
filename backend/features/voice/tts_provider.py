"""A provider's speech API through the `openai` SDK: `POST {base_url}/audio/speech`.

MP3 is asked for (the smallest the API gives); an OpenAI-compatible server may answer WAV or Ogg
whatever was asked, so the type is told from the bytes and anything else is refused. The body is
read in capped chunks, the whole call has a time cap (its sockets shut when it passes), and the SDK
retries nothing: every failure is a 502 whose sentence names the provider (and its HTTP status).
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Final

from backend.core.errors import ProviderError
from backend.core.types import ProviderConfig
from backend.features.voice import tts_audio
from backend.features.voice.tts_audio import Speech, SpeechFailed
from backend.providers import StreamControl
from backend.providers.wire import client_timeout, openai_base_url, sendable_key

log = logging.getLogger(__name__)

FORMAT: Final = "mp3"
BODY_CAP = 64 * 1024 * 1024  # far above 4 096 characters of speech in any of the formats
TOTAL_S = 300.0  # a whole answer, however slowly it trickles in


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


def _said(body) -> str:
    """The upstream's own words ({"error": {"message"}}, {"detail"}, {"error": str}) as a clause, else "."."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except ValueError:
            return "."
    message = ""
    if isinstance(body, dict):
        err = body.get("error")
        for text in ([err.get("message")] if isinstance(err, dict) else [body.get("detail"), body.get("message"), err]):
            if isinstance(text, str) and text.strip():
                message = " ".join(text.split())[:300]
                break
    return f": {message!r}." if message else "."


def _failure(exc: Exception, provider: ProviderConfig, model: str, base_url: str,
             control: StreamControl) -> SpeechFailed:
    import httpx2
    import openai

    name = provider.name

    def failed(message: str) -> SpeechFailed:
        return SpeechFailed(502, "provider_error", message)

    if control.closed:
        return failed(f"{name} did not finish reading this aloud within {TOTAL_S:g} s, the most Numi waits. "
                      f"Try a shorter text.")
    if isinstance(exc, openai.APIStatusError):
        status, said = exc.status_code, _said(exc.body)
        if status in (401, 403):
            return failed(f"{name} refused the API key (HTTP {status}) when asked to read aloud. Check the key "
                          f"for {name} in Settings → Providers.")
        if status == 404:
            return failed(f"{name} has no speech API or no speech model {model!r} at {base_url} (HTTP 404){said} "
                          f"Check the model in Settings → Voice.")
        if status == 429:
            return failed(f"{name} is rate-limiting or out of credit (HTTP 429){said} Try again later.")
        if 400 <= status < 500:
            return failed(f"{name} refused to read this aloud with {model} (HTTP {status}){said} Check the model "
                          f"and the voice in Settings → Voice.")
        return failed(f"{name} failed while reading aloud (HTTP {status}){said} Try again later.")
    if isinstance(exc, (openai.APITimeoutError, httpx2.TimeoutException)):
        return failed(f"{name} did not answer in time while reading aloud. Try again later.")
    if isinstance(exc, openai.APIConnectionError):
        return failed(f"{name} could not be reached at {base_url} to read aloud. Check that it is running.")
    if isinstance(exc, httpx2.HTTPError):
        return failed(f"The connection to {name} broke while the audio came ({type(exc).__name__}). Try again.")
    log.exception("voice: reading aloud with %s failed", name)
    return failed(f"{name} did not answer as the OpenAI speech API does ({type(exc).__name__}). Check the "
                  f"provider's base URL and the model in Settings → Voice.")
