"""Documents beside the chat (CONTRACT §9, §11): texts the model and the person both edit, every change a version.

The model writes them only with `doc_create` and `doc_edit` (tools.py, turn.py); what a call is
writing is published while it is written (`doc_open`, `doc_delta`, then `doc_update`: stream.py,
reading the argument JSON as it arrives with partial_json.py). The documents and every version
are tables of numi.db (store.py), gone with their chat when it is purged. The person reads, edits
(a version authored "person", guarded by `base_version`) and compares them over HTTP (routes.py,
diff.py). Each request carries the chat's documents as quoted data in its system text, long ones
by outline and the parts changed last (context.py, outline.py). Export and import carry them with
their chat (transfer.py), and the "documents" service gives other features a document's text
(service.py: the previews).
"""
from __future__ import annotations

from backend.features.documents import routes, store, tools, transfer, turn
from backend.features.documents.service import DocumentsService
from backend.turns.events import Event
from backend.turns.features import Feature

FEATURE = Feature(
    name="documents",
    migrations=(("tables", store.create_tables),),
    service=DocumentsService,
    routes=routes.register,
    tools=turn.offered,
    catalog=lambda: [tools.create_tool(), tools.edit_tool()],
    system_text=turn.system_text,
    bind=turn.TurnDocuments,
    chat_data=transfer.CHAT_DATA,
    events=(
        # docs/PROTOCOL.md "Documents": a call's text as it is written, then the version it made.
        # A snapshot carries the texts still being written (backend/turns/hub.py).
        Event("doc_open", {"doc_id": str, "title": str, "language": str, "call_id": str}, turn_id=str),
        Event("doc_delta", {"doc_id": str, "delta": str, "call_id": str}, turn_id=str),
        # A person's PATCH publishes it too (turn_id null, no call_id).
        Event("doc_update", {"doc_id": str, "version": int, "author": str}, {"call_id": str},
              values={"author": ("model", "person")}),
    ),
)
