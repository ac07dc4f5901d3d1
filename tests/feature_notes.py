"""A feature for the tests, plugged into every point of the engine and nothing else (docs/FEATURES.md).

Notes: a `note` tool that keeps a line for later turns (in a table its own migration makes),
announced as a `note_added` event and read back in the system text; a note that says
"private" asks on its card; "/notes" is a turn the feature runs itself; a `note_turn` command
adds a user message (quoted before it by the feature) and starts its turn; a settings
section; a route that lists a chat's notes.
"""
from __future__ import annotations

from dataclasses import replace

from backend.core.tools import Tool, ToolRegistry
from backend.core.types import Message, ToolCall, ToolSpec
from backend.store import history
from backend.store import settings as stored
from backend.store.db import db
from backend.turns.events import Event
from backend.turns.features import BeforeRequest, Feature, Offer, TurnHandle, TurnPart, TurnRun

NAME = "note"
SETTING = "notes"
DEFAULTS = {"enabled": True}
SPEC = ToolSpec(name=NAME, description="Keep a short note for later turns of this chat.",
                parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
seen: dict[str, list] = {"before_request": [], "approved": []}  # what the hooks were handed, for the tests


def note_tool(run=None) -> Tool:
    def unbound(args, cancel):
        raise ValueError("note runs only inside a chat's turn.")
    return Tool(SPEC, run or unbound, needs_approval=False, read_only=False)


def _create_table(database) -> None:
    database.execute_sql("CREATE TABLE test_note (chat_id TEXT NOT NULL, text TEXT NOT NULL)")


def notes(chat_id: str) -> list[str]:
    return [r[0] for r in db.execute_sql("SELECT text FROM test_note WHERE chat_id = ? ORDER BY rowid", (chat_id,))]


def _tools(offer: Offer) -> list[Tool]:
    enabled = stored.get_object(SETTING).get("enabled", True)
    return [note_tool()] if offer.model_calls_tools and enabled else []


def _system_text(chat, tool_names: list[str]) -> str | None:
    kept = notes(chat.id) if NAME in tool_names else []
    return "Notes so far: " + "; ".join(kept) if kept else None


class _TurnNotes(TurnPart):
    def __init__(self, turn: TurnHandle):
        self.turn = turn

    def bind_tools(self, tools: ToolRegistry) -> None:
        if tools.get(NAME) is not None:
            tools.add(note_tool(self._note))

    def _note(self, args: dict, cancel) -> str:
        text = str(args.get("text", ""))
        with db.atomic():
            db.execute_sql("INSERT INTO test_note (chat_id, text) VALUES (?, ?)", (self.turn.chat_id, text))
        self.turn.publish("note_added", text=text, message_id=self.turn.message_id())
        return f"Noted: {text}"

    def asks(self, call: ToolCall) -> dict | None:
        return {"description": "This note is private."} if call.name == NAME and "private" in call.arguments else None

    def approved(self, call: ToolCall, arguments: str | None, asked: dict | None) -> None:
        seen["approved"].append((call.id, asked))


def _before_request(turn: BeforeRequest):
    seen["before_request"].append((turn.chat.id, turn.plan.used))
    return None  # the plan as it is


def _runs_turn(turn: TurnRun):
    row = history.by_ids([turn.user_message_id]).get(turn.user_message_id) if turn.user_message_id else None
    if turn.continuing or row is None or row.content != "/notes":
        return None
    request = replace(turn.request, tools=(), system=turn.request.system + "\n\nList the notes.")
    return turn.answer(request, turn.cancel)


def _quote(content_parts) -> Message | None:
    text = content_parts.get("note_quote") if isinstance(content_parts, dict) else None
    return Message(role="assistant", content=f"(note) {text}") if isinstance(text, str) else None


def _note_turn(chat_id: str, request_id: str | None, check_idle, text: str):
    check_idle()
    with db.atomic():
        row = history.append_to_branch(chat_id, role="user", content=text, request_id=request_id or "note_turn",
                                       content_parts={"note_quote": text})
    return row, {}


def _routes(app) -> None:
    app.add_url_rule("/api/test-notes/<chat_id>", "test_notes", lambda chat_id: {"notes": notes(chat_id)})


FEATURE = Feature(
    name="notes",
    tools=_tools,
    catalog=lambda: [note_tool()],
    system_text=_system_text,
    quote=_quote,
    events=(Event("note_added", {"text": str, "message_id": int | None}, turn_id=str),),
    settings=(stored.Section(SETTING, DEFAULTS, lambda fields: fields.raw(SETTING, False, False), merge=True),),
    routes=_routes,
    migrations=(("table", _create_table),),
    bind=_TurnNotes,
    before_request=_before_request,
    runs_turn=_runs_turn,
    commands={"note_turn": _note_turn},
)
