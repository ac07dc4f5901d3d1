"""Documents' share of a chat's requests and turns: the tools offered, what a request carries, the calls run.

`doc_create` goes to every model that calls tools, `doc_edit` once the chat has a document
(CONTRACT §11). A turn whose request offered `doc_create` but not `doc_edit` can still run a
`doc_edit` after it created one (a document exists in the chat then), unless the chat turns
`doc_edit` off or denies it. Each call that succeeds makes one version, authored "model", linked
to the assistant message and turn that asked for it, and ends with `doc_update`
{doc_id, version, author, call_id}; one that fails makes none and publishes none.
"""
from __future__ import annotations

from backend.core.tools import ToolRegistry
from backend.core.types import ToolCall
from backend.features.documents import context, store, tools
from backend.features.documents.stream import DocStreams
from backend.store import chats
from backend.turns import tools_off
from backend.turns.features import Offer, TurnHandle, TurnPart


def offered(offer: Offer) -> list:
    if not offer.model_calls_tools:
        return []
    # A folder's or the catalog's listing (no chat) shows both.
    if offer.chat_id is None or store.any_in_chat(offer.chat_id):
        return [tools.create_tool(), tools.edit_tool()]
    return [tools.create_tool()]


def system_text(chat, tool_names: list[str]) -> str | None:
    model = chats.model(chat.model_id)
    return context.system_text(chat.id, tool_names, model.context_window if model is not None else None)


class TurnDocuments(TurnPart):
    """One turn's documents: its calls' streams (stream.py) and its own doc_create and doc_edit."""

    def __init__(self, turn: TurnHandle):
        self.turn = turn
        self.streams = DocStreams(turn.publish, self._shown)
        self._call_id: str | None = None  # the call running now (tool_starting, then its run, on one thread)

    def bind_tools(self, tools_: ToolRegistry) -> None:
        creates = tools_.get(tools.CREATE) is not None
        if creates:
            tools_.add(tools.create_tool(self._create))
        if tools_.get(tools.EDIT) is not None or (creates and self._edit_allowed()):
            tools_.add(tools.edit_tool(self._edit))

    def _edit_allowed(self) -> bool:
        """Whether a doc_edit after this turn's doc_create may run: not turned off or denied for the chat."""
        chat = chats.get(self.turn.chat_id)
        return chat is not None and not tools_off.left_out(chat).tool(tools.EDIT)

    def _shown(self, doc_id: str) -> tuple[str, str] | None:
        doc = store.get(doc_id)
        return (doc.title, doc.language) if doc is not None and doc.chat_id == self.turn.chat_id else None

    # --- the turn's events ---------------------------------------------------------------------

    def tool_arguments(self, call_id: str, name: str, delta: str) -> None:
        self.streams.piece(call_id, name, delta)

    def tool_starting(self, call: ToolCall) -> None:
        if call.name in (tools.CREATE, tools.EDIT):
            self._call_id = call.id
            self.streams.starting(call.id)

    # --- the calls -----------------------------------------------------------------------------

    def _create(self, args: dict, cancel) -> str:
        title = tools.title_of(args)
        language, note = tools.language_of(args)
        content = tools.content_of(args.get("content"))
        call_id = self._call_id
        doc_id = (self.streams.reserved(call_id) if call_id else None) or store.new_id()
        while store.taken(doc_id):  # 64 random bits: never in practice
            doc_id = store.new_id()
        doc = store.create(self.turn.chat_id, doc_id, title, language, content, "model",
                           self.turn.message_id(), self.turn.turn_id)
        self._updated(doc, call_id)
        said = f'Created the document {doc.id} ("{title}", {language}), version 1.'
        return said + (f" {note}" if note else "") + " Change it with doc_edit and this doc_id."

    def _edit(self, args: dict, cancel) -> str:
        doc_id = args.get("doc_id")
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise ValueError(f'{tools.EDIT} needs "doc_id": the id of one of this chat\'s documents. '
                             f"Nothing was changed.")
        doc = store.get(doc_id.strip())
        if doc is None or doc.chat_id != self.turn.chat_id:
            raise ValueError(self._no_such(doc_id.strip()))
        content, swap = tools.edit_of(args)

        def change(old: str, latest: store.Doc) -> str:
            if swap is None:
                assert content is not None
                return content
            return tools.replaced(old, swap[0], swap[1], latest.id, latest.version)

        try:
            revised = store.revise(doc.id, change, "model", self.turn.message_id(), self.turn.turn_id)
        except store.Unchanged as same:
            raise ValueError(f"{doc.id} already has exactly this text (version {same.version}); "
                             f"nothing was changed.") from None
        if revised is None:  # its chat was purged meanwhile
            raise ValueError(self._no_such(doc.id))
        self._updated(revised, self._call_id)
        how = "replaced the text found" if swap is not None else "new whole text"
        return f'Edited {revised.id} ("{revised.title}"): version {revised.version} ({how}).'

    def _no_such(self, doc_id: str) -> str:
        mine = store.in_chat(self.turn.chat_id)
        listed = ", ".join(f'{d.id} ("{d.title}")' for d in mine[:20])
        return (f"There is no document {doc_id} in this chat. "
                + (f"Its documents: {listed}." if listed else "It has no documents: create one with doc_create.")
                + " Nothing was changed.")

    def _updated(self, doc: store.Doc, call_id: str | None) -> None:
        extra = {"call_id": call_id} if call_id else {}
        self.turn.publish("doc_update", doc_id=doc.id, version=doc.version, author="model", **extra)
