"""Speech to text over HTTP (CONTRACT §14): `POST /api/audio/transcriptions`.

multipart/form-data with the recording in the part `file` (WAV, MP3, OGG/Opus, WebM or M4A, at most
25 MB and 10 minutes) → 200 `{"text", "duration_s"}`. The engine is settings.voice.stt's: `offline`
(pocketsphinx, stt_offline.py) or `provider` (stt_provider.py). Refusals, each with a sentence:
415 not multipart; 400 a broken body; 413 past 25 MB (from the Content-Length, else while reading)
or past 10 minutes (from the file's stated length, else while decoding); 422 no part `file`, an
empty file or one that is not audio that decodes; 409 a provider engine that cannot work now
(section.problem); 502 the provider failed.
"""
from __future__ import annotations

from flask import Blueprint, request
from werkzeug.exceptions import RequestEntityTooLarge

from backend.core.types import ProviderConfig
from backend.errors import ApiError, invalid
from backend.features.voice import audio_in, section, stt_offline, stt_provider, stt_upload
from backend.store import chats

bp = Blueprint("voice_stt", __name__)

MAX_BYTES = 25 * 1024 * 1024  # OpenAI's own limit for a transcription, so either engine takes the same files
FILE_FIELD = 'Attach the recording in a multipart field named "file".'


def _too_large() -> ApiError:
    return ApiError(413, "audio_too_large", f"The recording is larger than {MAX_BYTES // (1024 * 1024)} MB, the "
                                            f"most Numi transcribes. Send a shorter or more compressed recording.")



def _provider(config: dict, keys) -> ProviderConfig:
    """The `provider` engine's provider as the catalog has it now, with its key; 409 when it cannot work."""
    why = section.problem("stt", keys)
    found = chats.provider(config["provider_id"])
    if why is not None or found is None:
        raise ApiError(409, "voice_unavailable", why or "The provider chosen for dictation is no longer in the "
                                                        "catalog. Pick another in Settings → Voice.")
    return ProviderConfig(id=found.id, name=found.name, kind=found.kind, base_url=found.base_url,
                          api_key=keys.get(found.id) if keys is not None else None, timeout=float(found.timeout))


def _receive() -> stt_upload.Recording:
    if request.mimetype != "multipart/form-data":
        raise ApiError(415, "unsupported_media_type",
                       'Send the recording as multipart/form-data, in a field named "file".')
    cap = MAX_BYTES + stt_upload.SLACK
    # Refused from the header alone when it already says too much (werkzeug's server reads and drops
    # the rest, so the client sees the 413 rather than a reset connection).
    if request.content_length is not None and request.content_length > cap:
        raise _too_large()
    request.max_content_length = cap  # the app's own cap is for JSON bodies
    try:
        recording = stt_upload.receive(request.stream, request.mimetype_params.get("boundary"), MAX_BYTES)
    except (stt_upload.TooLarge, RequestEntityTooLarge):
        raise _too_large() from None
    except stt_upload.Malformed as exc:
        if str(exc) == FILE_FIELD:
            raise invalid({"file": FILE_FIELD}) from None
        raise ApiError(400, "bad_request", f"The upload is not valid multipart/form-data: {exc} Send the "
                                           f"recording again.") from None
    if recording.size == 0:
        recording.file.close()
        raise ApiError(422, "not_audio", "The recording is empty (0 bytes). Record again, then send it.")
    return recording


@bp.post("/api/audio/transcriptions")
def transcriptions():
    config = section.stored()["stt"]
    keys = section.keys()
    provider = _provider(config, keys) if config["backend"] == "provider" else None
    recording = _receive()
    try:
        try:
            audio = audio_in.decode(recording.file, keep_samples=provider is None)
        except audio_in.TooLong as exc:
            raise ApiError(413, "audio_too_long", str(exc)) from None
        except audio_in.NotAudio as exc:
            raise ApiError(422, "not_audio", str(exc)) from None
        if provider is None:
            text = stt_offline.transcribe(audio.pcm)
        else:
            recording.file.seek(0)
            try:
                text = stt_provider.transcribe(provider, config["model"], recording.file,
                                               _filename(recording.filename, audio.extension))
            except stt_provider.SttFailed as exc:
                raise ApiError(502, "provider_error", str(exc)) from None
    finally:
        recording.file.close()
    return {"text": text, "duration_s": audio.duration_s}


def _filename(given: str, extension: str) -> str:
    """The name the provider gets: the person's when it ends in the format's extension, else `audio.<ext>`."""
    base = given.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, ext = base.rpartition(".")
    fits = dot and stem and ext.lower() == extension and base.isprintable() and '"' not in base and len(base) <= 200
    return base if fits else f"audio.{extension}"


def register(app) -> None:
    app.register_blueprint(bp)
