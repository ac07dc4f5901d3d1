"""The `questions` section of /api/settings: how long a question waits ({"timeout_s": seconds or null})."""
from __future__ import annotations

from backend.features.questions.waiting import DEFAULTS, MAX_TIMEOUT_S, SETTING, timeout_s
from backend.fields import MISSING, Fields, nested
from backend.store.settings import Section


def _questions(fields: Fields):
    """The `questions` object sent ({"timeout_s": seconds or null}), or MISSING."""
    inner = nested(fields, SETTING, DEFAULTS,
                    'Must be an object like {"timeout_s": 600}, or {"timeout_s": null} for no limit.')
    if inner is None:
        return MISSING
    # Seconds a question waits for an answer; null (the default) waits until it is answered.
    limit = inner.number("timeout_s", 1, MAX_TIMEOUT_S, integer=True, nullable=True)
    fields.errors.update(inner.errors)
    return MISSING if limit is MISSING else {"timeout_s": limit}


def _questions_now() -> dict:
    return {"timeout_s": timeout_s()}


SECTION = Section(SETTING, DEFAULTS, _questions, current=_questions_now)
