"""The `research` section of /api/settings: a research turn's limits (minutes, searches, pages)."""
from __future__ import annotations

from backend.features.research.gather import BOUNDS, DEFAULTS, SETTING, settings
from backend.fields import MISSING, Fields, nested
from backend.store.settings import Section


def _research(fields: Fields):
    """The `research` limits sent, or MISSING."""
    inner = nested(fields, SETTING, DEFAULTS,
                    'Must be an object like {"max_minutes": 10, "max_searches": 8, "max_pages": 12}.')
    if inner is None:
        return MISSING
    low, high = BOUNDS["max_minutes"]
    values = {"max_minutes": inner.number("max_minutes", low, high)}
    for key in ("max_searches", "max_pages"):
        low, high = BOUNDS[key]
        values[key] = inner.number(key, low, high, integer=True)
    fields.errors.update(inner.errors)
    return {k: v for k, v in values.items() if v is not MISSING}


SECTION = Section(SETTING, DEFAULTS, _research, merge=True, current=lambda: vars(settings()))
