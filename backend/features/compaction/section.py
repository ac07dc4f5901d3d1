"""The `compaction` section of /api/settings: automatic summaries, their threshold, the summary model."""
from __future__ import annotations

from backend.features.compaction.summary import DEFAULTS, SETTING, settings
from backend.fields import MISSING, Fields, nested
from backend.store import chats
from backend.store.settings import Section


def _compaction(fields: Fields):
    """The `compaction` keys sent, or MISSING."""
    inner = nested(fields, SETTING, DEFAULTS,
                    'Must be an object like {"auto": true, "threshold": 0.8}.')
    if inner is None:
        return MISSING
    auto = inner.boolean("auto")
    threshold = inner.number("threshold", 0.5, 0.95)
    model_id = inner.text("model_id", max_len=200, nullable=True)
    if model_id not in (MISSING, None) and chats.model(model_id) is None:
        inner.fail("model_id", "No model with this id. Pick one from GET /api/models, or null for the chat's own.")
    fields.errors.update(inner.errors)
    values = {"auto": auto, "threshold": threshold, "model_id": model_id}
    return {k: v for k, v in values.items() if v is not MISSING}


SECTION = Section(SETTING, DEFAULTS, _compaction, merge=True, current=lambda: vars(settings()))
