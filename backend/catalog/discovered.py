"""What discovery found, into the catalog: new models added, known ones' windows kept in step.

A model found again keeps what the person made of it, but not a window Numi
filled in that its server no longer runs it with: after the person gives Ollama
a bigger num_ctx (as the model's note tells them) and looks for models again,
the catalog follows. A window Numi did not fill in is the person's, and stays.
Call inside CatalogService.editing() (the rows change and catalog.toml follows).
"""
from __future__ import annotations

from backend.catalog.capabilities import Window
from backend.store.models import ModelEntry, Provider, new_id


def add(provider: Provider, found: list[dict]) -> list[ModelEntry]:
    """Add the models not in the catalog yet (returned, in order) and refresh the known ones' windows."""
    rows: dict[str, list[ModelEntry]] = {}
    for row in ModelEntry.select().where(ModelEntry.provider == provider):
        rows.setdefault(row.api_model, []).append(row)
    added = []
    for entry in found:
        columns = {k: v for k, v in entry.items() if k != "window"}
        known = rows.get(entry["api_model"])
        if known is None:
            added.append(ModelEntry.create(id=new_id("m"), provider=provider, found_window=entry["context_window"],
                                           **columns))
            continue
        for row in known:
            _follow(row, entry["window"])
            # Kept even where the person's own window stays: Settings shows it beside theirs.
            if entry["context_window"] and row.found_window != entry["context_window"]:
                ModelEntry.update(found_window=entry["context_window"]).where(ModelEntry.id == row.id).execute()
    return added


def _follow(row: ModelEntry, window: Window) -> None:
    """Give a known row the window its server states now, where that window was Numi's to set."""
    if not window.served:
        return  # the server said nothing: a guess never replaces what the row has
    noted = row.note is not None and row.note == window.note_for(row.context_window)  # as Numi noted it
    # Never filled in, filled in with a note, or the model's own length (what discovery wrote before
    # it read the window served): Numi's. Any other window is one the person set.
    if not (row.context_window is None or noted or row.context_window == window.supports):
        return
    note = window.note() if row.note is None or noted else row.note  # the person's, or "Tools off", stays
    if (row.context_window, row.note) != (window.served, note):
        ModelEntry.update(context_window=window.served, note=note).where(ModelEntry.id == row.id).execute()
