"""Memory (CONTRACT §8, §11): facts the person's chats saved with `remember`, seen and edited by the person.

The memories are a table of numi.db with a full-text index (store.py); routes.py lists, searches,
edits and forgets them. A request carries them as quoted data in its system text (choice.py), and
its turn lists them as sources of kind memory (turn.py). Memory is on or off in Settings, per
folder and per chat; temporary chats never read or write it (switch.py). A `remember` after the
conversation read text from outside always asks, saying what was read (untrusted.py); a fact that
says an existing memory again updates it (words.py). Beyond the budget, memories are ranked by
embeddings too when knowledge's are on: the feature's service (service.py, embedder.py) embeds them
in the background into a table of numi.db (vector_rows.py) and a matrix it holds (held.py).
"""
from __future__ import annotations

from backend.features.memory import routes, store, switch, tool, turn, vector_rows
from backend.features.memory.service import MemoryService
from backend.turns.events import Event
from backend.turns.features import Feature

FEATURE = Feature(
    name="memory",
    migrations=(("table", store.create_table), ("owners", switch.create_table),
                ("vectors", vector_rows.create_table)),
    service=MemoryService,
    routes=routes.register,
    fields=(switch.FIELD,),
    settings=(switch.SECTION,),
    tools=turn.offered,
    catalog=lambda: [tool.remember_tool()],
    system_text=turn.system_text,
    bind=turn.TurnMemory,
    # The "Memory saved · Undo" chip: undo is DELETE /api/memories/{id}, or for an update a PATCH
    # back to `previous_text`.
    events=(Event("memory_saved", {"memory_id": str, "text": str, "updated": bool}, {"previous_text": str},
                  turn_id=str),),
)
