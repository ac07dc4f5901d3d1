"""settings.voice (CONTRACT §14, Numi's additions in docs/PROTOCOL.md "Voice"): defaults, a PATCH
replacing the whole object, each refusal naming its field, and `problem` on GET."""
from __future__ import annotations

import pytest

from tests.test_api_catalog import assert_invalid

STT = {"backend": "offline", "provider_id": None, "model": None, "problem": None}
TTS = {"backend": "offline", "provider_id": None, "model": None, "voice": None, "speed": 1.0, "problem": None}
DEFAULT = {"stt": STT, "tts": TTS, "auto_read": False, "send_dictation": False}


def voice_of(api) -> dict:
    return api.get("/api/settings").body["voice"]


@pytest.fixture
def providers(api):
    """Ids of an OpenAI-compatible provider, an OpenAI one without a key, and an Anthropic one."""
    out = {}
    for kind, name, extra in (("openai_compatible", "Local Audio", {"base_url": "http://127.0.0.1:9/v1"}),
                              ("openai", "OpenAI", {}), ("anthropic", "Claude", {"api_key": "sk-ant-test"})):
        r = api.post("/api/providers", {"kind": kind, "name": name, **extra})
        assert r.status == 201, r
        out[kind] = r.body["id"]
    return out


def test_voice_is_offline_by_default_and_a_patch_replaces_the_whole_object(api, providers):
    assert voice_of(api) == DEFAULT
    local = providers["openai_compatible"]
    sent = {"stt": {"backend": "provider", "provider_id": local, "model": " whisper-1 "},
            "tts": {"backend": "provider", "provider_id": local, "model": "gpt-4o-mini-tts", "voice": "alloy",
                    "speed": 1.5}, "auto_read": True, "send_dictation": True}
    r = api.patch("/api/settings", {"voice": sent})
    assert r.status == 200, r
    shown = {"stt": {**STT, "backend": "provider", "provider_id": local, "model": "whisper-1"},
             "tts": {**TTS, "backend": "provider", "provider_id": local, "model": "gpt-4o-mini-tts",
                     "voice": "alloy", "speed": 1.5}, "auto_read": True, "send_dictation": True}
    assert r.body["voice"] == shown
    assert voice_of(api) == shown
    # What GET gives goes back as it is (problem included: it is worked out, not kept).
    assert api.patch("/api/settings", {"voice": voice_of(api)}).body["voice"] == shown
    # Nothing is merged: what is left out is back to its default.
    r = api.patch("/api/settings", {"voice": {"tts": {"backend": "offline", "voice": "Samantha"}}})
    assert r.status == 200, r
    assert r.body["voice"] == {**DEFAULT, "tts": {**TTS, "voice": "Samantha"}}
    assert api.patch("/api/settings", {"voice": {}}).body["voice"] == DEFAULT
    # {} is the way back to the defaults; null is not a voice setting.
    assert_invalid(api.patch("/api/settings", {"voice": None}), "voice", says="cannot be null")


def test_a_refused_patch_changes_nothing(api, providers):
    assert api.patch("/api/settings", {"voice": {"auto_read": True}}).status == 200
    r = api.patch("/api/settings", {"voice": {"auto_read": False, "stt": {"backend": "cloud"}}})
    assert_invalid(r, "voice.stt.backend")
    assert voice_of(api)["auto_read"] is True


REFUSALS = [
    ({"voice": "on"}, "voice", "Must be an object like"),
    ({"voice": {"colour": "blue"}}, "voice.colour", "Unknown field"),
    ({"voice": {"stt": "offline"}}, "voice.stt", "Must be an object like"),
    ({"voice": {"stt": {}}}, "voice.stt.backend", "This field is required."),
    ({"voice": {"stt": {"backend": "cloud"}}}, "voice.stt.backend", 'Must be "offline"'),
    ({"voice": {"stt": {"backend": "offline", "voice": "x"}}}, "voice.stt.voice", "Unknown field"),
    ({"voice": {"stt": {"backend": "offline", "provider_id": "{openai_compatible}"}}}, "voice.stt.provider_id",
     "Leave it out (or null) for the offline engine."),
    ({"voice": {"stt": {"backend": "provider", "model": "whisper-1"}}}, "voice.stt.provider_id",
     "This field is required."),
    ({"voice": {"stt": {"backend": "provider", "provider_id": "{openai_compatible}"}}}, "voice.stt.model",
     "This field is required."),
    ({"voice": {"stt": {"backend": "provider", "provider_id": "{openai_compatible}", "model": "  "}}},
     "voice.stt.model", "Must not be empty."),
    ({"voice": {"stt": {"backend": "provider", "provider_id": "p_nope", "model": "whisper-1"}}},
     "voice.stt.provider_id", "No provider with the id 'p_nope'."),
    ({"voice": {"stt": {"backend": "provider", "provider_id": "{anthropic}", "model": "whisper-1"}}},
     "voice.stt.provider_id", "speaks Anthropic's API, which has no audio"),
    ({"voice": {"tts": {"backend": "offline", "speed": 3}}}, "voice.tts.speed", ""),
    ({"voice": {"tts": {"backend": "offline", "speed": 0.25}}}, "voice.tts.speed", ""),
    ({"voice": {"tts": {"backend": "offline", "speed": "fast"}}}, "voice.tts.speed", ""),
    ({"voice": {"tts": {"backend": "offline", "voice": "v" * 201}}}, "voice.tts.voice", ""),
    ({"voice": {"tts": {"backend": "provider", "provider_id": "{openai_compatible}", "model": "m" * 201}}},
     "voice.tts.model", ""),
    ({"voice": {"auto_read": "yes"}}, "voice.auto_read", ""),
    ({"voice": {"send_dictation": 1}}, "voice.send_dictation", ""),
]


@pytest.mark.parametrize("body,field,says", REFUSALS, ids=[r[1] + ":" + str(i) for i, r in enumerate(REFUSALS)])
def test_each_refusal_is_a_422_naming_the_field(api, providers, body, field, says):
    import json

    text = json.dumps(body)
    for kind, provider_id in providers.items():
        text = text.replace("{" + kind + "}", provider_id)
    assert_invalid(api.patch("/api/settings", json.loads(text)), field, says=says or None)
    assert voice_of(api) == DEFAULT


def test_get_shows_why_a_provider_engine_cannot_work(api, providers):
    local, openai = providers["openai_compatible"], providers["openai"]
    r = api.patch("/api/settings", {"voice": {"stt": {"backend": "provider", "provider_id": local, "model": "w"},
                                              "tts": {"backend": "provider", "provider_id": openai, "model": "t"}}})
    assert r.status == 200, r
    shown = voice_of(api)
    assert shown["stt"]["problem"] is None
    assert shown["tts"]["problem"] == "OpenAI has no API key. Add it in Settings → Providers."
    assert api.patch(f"/api/providers/{local}", {"enabled": False}).status == 200
    assert voice_of(api)["stt"]["problem"] == ("Local Audio is turned off. Turn it on in Settings → Providers, or "
                                               "pick another in Settings → Voice.")
    assert api.delete(f"/api/providers/{local}").status in (200, 204)
    problem = voice_of(api)["stt"]["problem"]
    assert problem is not None and "no longer in the catalog" in problem
    assert problem.startswith("The provider chosen for dictation")
