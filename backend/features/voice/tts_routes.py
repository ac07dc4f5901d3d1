"""Text to speech over HTTP (CONTRACT §14): the audio of a text, and the offline voices to pick from.

- `POST /api/audio/speech` `{"text", "voice"?}` → 200 audio bytes (audio/wav offline; audio/mpeg,
  audio/wav or audio/ogg from a provider). `text`: 1–4 096 characters, not only white space;
  `voice` (≤ 100 characters) overrides the setting's. Refusals: 422 naming the field; 409 when the
  chosen provider cannot work now (section.problem's sentence); 502 when the provider or the offline
  engine fails; 503 when there is no offline engine (what to install); 504 when the engine passes its
  time cap.
- `GET /api/audio/voices` → `{"items": [{"id", "label"}]}`: the platform engine's voices (espeak-ng
  --voices, `say -v ?`, SAPI's installed voices), or [] without one; for Settings → Voice.
"""
from __future__ import annotations

from flask import Blueprint, Response

from backend.core.types import ProviderConfig
from backend.errors import ApiError
from backend.features.voice import section, tts_commands, tts_offline, tts_provider
from backend.features.voice.tts_audio import Speech, SpeechFailed
from backend.fields import Fields
from backend.request_body import json_body
from backend.store import chats

bp = Blueprint("voice_tts", __name__)

TEXT_MAX = 4096
DEFAULT_PROVIDER_VOICE = "alloy"



@bp.post("/api/audio/speech")
def speech():
    text, voice = _request()
    config = section.stored()["tts"]
    try:
        spoken = _provider(config, text, voice) if config["backend"] == "provider" else _offline(config, text, voice)
    except SpeechFailed as exc:
        fields = {exc.field: exc.message} if exc.field and voice is not None else None
        raise ApiError(exc.status, exc.code, exc.message, fields) from None
    response = Response(spoken.data, mimetype=spoken.mime)
    response.headers["Content-Disposition"] = "inline"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.get("/api/audio/voices")
def voices():
    return {"items": tts_offline.voices()}


def _request() -> tuple[str, str | None]:
    """The text and the voice asked for; a 422 naming each field that is wrong."""
    f = Fields(json_body(), ("text", "voice"))
    text = f.text("text", max_len=TEXT_MAX, required=True, non_empty=True)
    if isinstance(text, str) and not text.strip():
        f.fail("text", "Must hold something to say, not only white space.")
    voice = f.text("voice", max_len=tts_commands.VOICE_MAX, nullable=True, non_empty=True)
    if isinstance(voice, str) and (problem := tts_commands.voice_problem(voice)):
        f.fail("voice", problem)
    f.check()
    return text, voice if isinstance(voice, str) else None


def _offline(config: dict, text: str, voice: str | None) -> Speech:
    voice = voice or config["voice"]
    if voice and (problem := tts_commands.voice_problem(voice)):
        raise ApiError(409, "voice_unavailable", f"The voice saved in Settings → Voice ({voice!r}) cannot be used: "
                                                 f"{problem} Pick another there.")
    return tts_offline.speak(text, voice, float(config["speed"]))


def _provider(config: dict, text: str, voice: str | None) -> Speech:
    keys = section.keys()
    problem = section.problem("tts", keys)
    found = chats.provider(config["provider_id"])
    if problem is not None or found is None:
        raise ApiError(409, "voice_unavailable", problem or "The provider chosen for reading aloud is gone. Pick "
                                                            "another in Settings → Voice.")
    if not config["model"]:
        raise ApiError(409, "voice_unavailable", "Settings → Voice names no speech model for the provider. Pick one "
                                                 "there.")
    provider = ProviderConfig(id=found.id, name=found.name, kind=found.kind, base_url=found.base_url,
                              api_key=keys.get(found.id) if keys is not None else None,
                              timeout=float(found.timeout))
    return tts_provider.speak(provider, config["model"], voice or config["voice"] or DEFAULT_PROVIDER_VOICE, text,
                              float(config["speed"]))


def register(app) -> None:
    app.register_blueprint(bp)
