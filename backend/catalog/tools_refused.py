"""A model whose provider refused tool definitions: its catalog entry turns tools off and says why.

Discovery assumes a chat model takes tools unless its server says otherwise,
so the first request with tools is where a wrong guess shows. The adapters
raise ToolsUnsupported for that refusal; the turn then lands here, which
writes `supports.tools = false` and a note into the catalog (and so into
catalog.toml), and names the setting in the turn's error.
"""
from __future__ import annotations

import logging

from backend.store.models import ModelEntry

log = logging.getLogger(__name__)

NOTE_PREFIX = "Tools off: "


def setting(label: str) -> str:
    """Where the person turns tools back on."""
    return f"Settings → Models → {label} → Tools"


def is_tools_off_note(model) -> bool:
    return bool(model is not None and model.note and model.note.startswith(NOTE_PREFIX))


def turn_tools_off(catalog, model_id: str | None, provider_message: str) -> str | None:
    """Mark the model as taking no tools (through `catalog`, a CatalogService, so catalog.toml says
    so too); the sentence for the turn's error, None when the model is gone."""
    model = ModelEntry.get_or_none(ModelEntry.id == model_id) if model_id else None
    if model is None:
        return None
    note = (f"{NOTE_PREFIX}{model.provider.name} refused tool definitions for this model. "
            f"Turn tools on again if it takes them after all.")
    try:
        with catalog.editing():
            (ModelEntry.update(supports_tools=False, note=note)
             .where(ModelEntry.id == model.id).execute())
    except Exception:  # e.g. catalog.toml has an unsaved error: the turn's error still explains
        log.exception("could not turn tools off for model %s", model.id)
        return (f"{provider_message} Turn tools off for {model.label} ({setting(model.label)}), "
                f"then send again.")
    return (f"{provider_message} Numi turned tools off for {model.label} ({setting(model.label)}): "
            f"send again for an answer without tools, or turn them back on there.")
