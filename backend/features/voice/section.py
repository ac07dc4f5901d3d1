"""The `voice` section of /api/settings (CONTRACT §14): which engines turn speech into text and back.

`{"stt": {"backend", "provider_id"?, "model"?}, "tts": {"backend", "provider_id"?, "model"?, "voice"?,
"speed"?}, "auto_read": bool, "send_dictation": bool}`; a PATCH replaces the whole object. `offline`
(the default for both) works with no network and no key: pocketsphinx hears, the platform's own
voice speaks. `provider` uses the OpenAI audio API through the SDK on a catalog provider of kind
`openai` or `openai_compatible`, `model` being the upstream name (`whisper-1`, `gpt-4o-mini-tts`).
Numi's additions (docs/PROTOCOL.md "Voice"): `tts.speed` (0.5–2, default 1) and `send_dictation`
(a transcript is sent at once instead of landing in the message box; default false). GET adds
`problem` to each engine: why a `provider` engine cannot work now (its provider gone, turned off,
or without its key), else null.
"""
from __future__ import annotations

from typing import Any

from backend.fields import MISSING, Fields
from backend.store import chats, settings
from backend.store.settings import Section

SETTING = "voice"
BACKENDS = ("offline", "provider")
OPENAI_KINDS = ("openai", "openai_compatible")  # the providers whose API has /v1/audio
STT_KEYS = ("backend", "provider_id", "model")
TTS_KEYS = ("backend", "provider_id", "model", "voice", "speed")
KEYS = ("stt", "tts", "auto_read", "send_dictation")
NAME_MAX = 200
SPEED_MIN, SPEED_MAX = 0.5, 2.0
DEFAULTS: dict = {"stt": {"backend": "offline", "provider_id": None, "model": None},
                  "tts": {"backend": "offline", "provider_id": None, "model": None, "voice": None, "speed": 1.0},
                  "auto_read": False, "send_dictation": False}
EXAMPLE = ('Must be an object like {"stt": {"backend": "offline"}, "tts": {"backend": "provider", "provider_id": '
           '"p_…", "model": "gpt-4o-mini-tts", "voice": "alloy"}, "auto_read": false}.')


def stored() -> dict:
    """The setting as saved, every key present (defaults where unset)."""
    value = settings.get_object(SETTING)
    out: dict[str, Any] = {"stt": dict(DEFAULTS["stt"]), "tts": dict(DEFAULTS["tts"]),
                           "auto_read": value.get("auto_read") is True, "send_dictation": value.get("send_dictation") is True}
    for part, keys in (("stt", STT_KEYS), ("tts", TTS_KEYS)):
        found = value.get(part)
        saved: dict = found if isinstance(found, dict) else {}
        if saved.get("backend") in BACKENDS:
            for key in keys:
                if key in saved and saved[key] is not None:
                    out[part][key] = saved[key]
    return out


def problem(part: str, keys=None) -> str | None:
    """Why the `part` engine ("stt" or "tts") cannot work now (a sentence), or None."""
    config = stored()[part]
    if config["backend"] != "provider":
        return None
    what = "Dictation" if part == "stt" else "Reading aloud"
    found = chats.provider(config["provider_id"])
    if found is None:
        return f"The provider chosen for {what.lower()} is no longer in the catalog. Pick another in Settings → Voice."
    if not found.enabled:
        return f"{found.name} is turned off. Turn it on in Settings → Providers, or pick another in Settings → Voice."
    if found.kind == "openai" and keys is not None and not keys.has(found.id):
        return f"{found.name} has no API key. Add it in Settings → Providers."
    return None


def _engine(f: Fields, part: str, body, keys: tuple[str, ...]):
    """One engine's object from a PATCH, or MISSING (each problem noted in `f`)."""
    if not isinstance(body, dict):
        return f.fail(part, 'Must be an object like {"backend": "offline"} or {"backend": "provider", '
                            '"provider_id": "p_…", "model": "…"}.')
    e = Fields(body, allowed=keys + ("problem",), prefix=f"{SETTING}.{part}.")
    backend = e.raw("backend", True, False)
    if backend is not MISSING and backend not in BACKENDS:
        backend = e.fail("backend", 'Must be "offline" (works with no network and no key) or "provider".')
    out = dict(DEFAULTS[part], backend=backend)
    provider_wanted = backend == "provider"
    model = e.text("model", max_len=NAME_MAX, required=provider_wanted, nullable=not provider_wanted,
                   non_empty=True, strip=True)
    out["model"] = model if isinstance(model, str) and model else None
    if provider_wanted:
        provider_id = e.text("provider_id", max_len=200, required=True, non_empty=True, strip=True)
        if isinstance(provider_id, str):
            found = chats.provider(provider_id)
            if found is None:
                e.fail("provider_id", f"No provider with the id {provider_id!r}. Pick one from Settings → Providers.")
            elif found.kind not in OPENAI_KINDS:
                e.fail("provider_id", f"{found.name} speaks Anthropic's API, which has no audio. Pick an OpenAI or "
                                      f"OpenAI-compatible provider.")
            out["provider_id"] = provider_id
    elif body.get("provider_id") is not None:
        e.fail("provider_id", "Leave it out (or null) for the offline engine.")
    if "voice" in keys:
        voice = e.text("voice", max_len=NAME_MAX, nullable=True, non_empty=True, strip=True)
        out["voice"] = voice if isinstance(voice, str) and voice else None
        speed = e.number("speed", SPEED_MIN, SPEED_MAX, nullable=True)
        out["speed"] = float(speed) if isinstance(speed, (int, float)) else 1.0
    f.errors.update(e.errors)
    return MISSING if e.errors or backend is MISSING else out


def _voice(fields: Fields):
    """The `voice` object sent, or MISSING (each problem noted in `fields`)."""
    body = fields.raw(SETTING, False, False)
    if body is MISSING:
        return MISSING
    if not isinstance(body, dict):
        return fields.fail(SETTING, EXAMPLE)
    f = Fields(body, allowed=KEYS, prefix=SETTING + ".")
    out: dict[str, Any] = {"stt": dict(DEFAULTS["stt"]), "tts": dict(DEFAULTS["tts"])}
    for part, keys in (("stt", STT_KEYS), ("tts", TTS_KEYS)):
        if body.get(part) is not None:
            out[part] = _engine(f, part, body[part], keys)
    for flag in ("auto_read", "send_dictation"):
        value = f.boolean(flag)
        out[flag] = value if isinstance(value, bool) else False
    fields.errors.update(f.errors)
    return MISSING if f.errors or MISSING in (out["stt"], out["tts"]) else out


def keys():
    """The app's key store, through the feature's service, inside a request (else None)."""
    from flask import current_app, has_app_context

    from backend.turns import features

    try:
        service = features.service(current_app, SETTING) if has_app_context() else None
    except (KeyError, AttributeError):  # an app without Numi's runtime (a test's)
        return None
    return getattr(service, "keys", None)


def shown() -> dict:
    """What GET gives: the setting, each engine with why it cannot work now (or null)."""
    value, store = stored(), keys()
    return {**value, "stt": {**value["stt"], "problem": problem("stt", store)},
            "tts": {**value["tts"], "problem": problem("tts", store)}}


SECTION = Section(SETTING, DEFAULTS, _voice, current=stored, shown=shown)
