"""`settings.ui`: the person's display choices (theme, recently used models, folded folders).

They live in the database, not the page's storage: the desktop window runs in private mode
and the server's port changes at every start, so anything kept by the page would be lost.
"""
from __future__ import annotations

from backend.api.validate import MISSING, Fields
from backend.store import settings

SETTING = "ui"
THEMES = ("system", "light", "dark")
DEFAULTS = {"theme": "system", "recent_models": [], "folded_folders": []}
# Caps: the picker shows 5 recent models; a person has at most a few hundred folders.
LIMITS = {"recent_models": 20, "folded_folders": 500}
MAX_ID = 200
EXAMPLE = 'Must be an object like {"theme": "dark", "recent_models": ["model id"], "folded_folders": ["folder id"]}.'


def stored() -> dict:
    """The stored choices, every key present (defaults for what was never set or is malformed)."""
    value = settings.get_object(SETTING)
    out = dict(DEFAULTS)
    if value.get("theme") in THEMES:
        out["theme"] = value["theme"]
    for key in LIMITS:
        if isinstance(value.get(key), list):
            out[key] = [x for x in value[key] if isinstance(x, str)][:LIMITS[key]]
    return out


def theme() -> str | None:
    """The picked theme for the page's `data-theme` ("light" / "dark"), or None to follow the system."""
    chosen = stored()["theme"]
    return chosen if chosen != "system" else None


def parse(fields: Fields):
    """The `ui` keys sent (to merge into the stored ones), or MISSING; problems go into `fields`."""
    body = fields.raw(SETTING, False, False)
    if body is MISSING:
        return MISSING
    if not isinstance(body, dict):
        return fields.fail(SETTING, EXAMPLE)
    inner = Fields(body, allowed=DEFAULTS, prefix=SETTING + ".")
    values = {"theme": inner.choice("theme", THEMES)}
    for key, cap in LIMITS.items():
        values[key] = _ids(inner, key, cap)
    fields.errors.update(inner.errors)
    if inner.errors:
        return MISSING
    return {k: v for k, v in values.items() if v is not MISSING}


def _ids(inner: Fields, key: str, cap: int):
    value = inner.raw(key, False, False)
    if value is MISSING:
        return MISSING
    if (not isinstance(value, list) or len(value) > cap
            or not all(isinstance(x, str) and 0 < len(x) <= MAX_ID for x in value)):
        return inner.fail(key, f"Must be a list of at most {cap} ids, each a string of 1 to {MAX_ID} characters.")
    return list(dict.fromkeys(value))  # order kept, repeats dropped


# The keys sent are merged into the stored choices.
settings.register(settings.Section(SETTING, DEFAULTS, parse, merge=True, current=stored))
