"""Voice (CONTRACT §14): a person dictates a message and hears a reply, offline by default.

`settings.voice` (section.py) picks each engine. Speech to text (`POST /api/audio/transcriptions`,
stt_routes.py): the upload is decoded with PyAV whatever its format, checked against the limits
as it is read, and heard by pocketsphinx offline or by a provider's transcription API through the
SDK. Text to speech (`POST /api/audio/speech`, tts_routes.py): the platform's own voice offline
(a separate process: SAPI, `say`, espeak-ng) or a provider's speech API. The web UI reads a reply
aloud sentence by sentence (web/js/speech-text.js) through that route.
"""
from __future__ import annotations

from backend.features.voice import stt_routes, tts_routes
from backend.features.voice.section import SECTION
from backend.features.voice.service import VoiceService
from backend.turns.features import Feature


def _routes(app) -> None:
    stt_routes.register(app)
    tts_routes.register(app)


FEATURE = Feature(
    name="voice",
    service=VoiceService,
    routes=_routes,
    settings=(SECTION,),
)
