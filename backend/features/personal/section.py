"""The `personal` section of /api/settings: `{"about", "instructions", "date"}`; a PATCH merges what it sends."""
from __future__ import annotations

from backend.fields import MISSING, Fields, nested
from backend.store import settings
from backend.store.settings import Section

SETTING = "personal"
DEFAULTS = {"about": "", "instructions": "", "date": True}
ABOUT_MAX = 4000
INSTRUCTIONS_MAX = 8000


def _personal(fields: Fields):
    """The fields of `personal` sent, or MISSING."""
    inner = nested(fields, SETTING, DEFAULTS,
                   'Must be an object like {"about": "I teach chemistry.", "instructions": "Answer briefly.", '
                   '"date": true}.')
    if inner is None:
        return MISSING
    sent = {
        "about": inner.text("about", max_len=ABOUT_MAX),
        "instructions": inner.text("instructions", max_len=INSTRUCTIONS_MAX),
        "date": inner.boolean("date"),
    }
    fields.errors.update(inner.errors)
    sent = {k: v for k, v in sent.items() if v is not MISSING}
    return MISSING if inner.errors or not sent else sent


def current() -> dict:
    """The section as stored, defaults filling what is unset."""
    stored = settings.get_object(SETTING)
    return {key: stored.get(key, default) if isinstance(stored.get(key), type(default)) else default
            for key, default in DEFAULTS.items()}


SECTION = Section(SETTING, DEFAULTS, _personal, merge=True, current=current)
