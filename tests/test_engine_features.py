"""A feature plugs into the engine without editing it: tests/feature_notes.py uses every point
(backend/turns/features.py), in process (tests/engine.py), and each one takes effect."""
from __future__ import annotations

import pytest
from flask import Flask

from backend.app import Config, create_app
from backend.store import settings
from backend.store.db import db
from backend.turns import events as event_table
from backend.turns import features
from tests import feature_notes
from tests.engine import Engine


@pytest.fixture
def engine(tmp_path):
    features.register(feature_notes.FEATURE)  # before the database opens: its migration runs there
    for hooked in feature_notes.seen.values():
        hooked.clear()
    e = Engine(tmp_path)
    yield e
    e.close()
    features.unregister(feature_notes.FEATURE.name)


def turn(engine, chat: str, request_id: str, content: str) -> list:
    """Send `content` and wait for its turn's end; the events the chat published since."""
    events = engine.events(chat)
    engine.turns.send(chat, request_id, content, [])
    events.until("turn_end")
    return events.seen


def test_a_feature_adds_a_tool_an_event_a_table_and_a_part_of_the_system_text(engine):
    chat = engine.chat()
    engine.model.calls("note", {"text": "buy milk"})
    engine.model.says("Noted.")
    seen = turn(engine, chat, "r1", "remember to buy milk")
    # Its tool is offered and bound to the turn, which publishes its event (held to its definition).
    assert "note" in [t.name for t in engine.model.requests[0].tools]
    added = next(e for e in seen if e["type"] == "note_added")
    assert added["text"] == "buy milk" and isinstance(added["message_id"], int)
    # Its migration made its table, once, and the tool wrote there.
    assert feature_notes.notes(chat) == ["buy milk"]
    assert db.execute_sql("SELECT count(*) FROM named_migration WHERE name = 'notes.table'").fetchone() == (1,)
    # The next request's system text carries its part; the meter and the inspector plan the same request.
    engine.model.says("Milk, yes.")
    turn(engine, chat, "r2", "what was it?")
    assert "Notes so far: buy milk" in engine.model.requests[-1].system
    # It saw each turn's plan before the first request.
    assert [c for c, _ in feature_notes.seen["before_request"]] == [chat, chat]


def test_a_feature_can_make_a_call_ask_and_hears_the_answer(engine):
    chat = engine.chat()
    events = engine.events(chat)
    engine.model.calls("note", {"text": "private pin 1234"}, "c1")
    engine.model.says("Kept.")
    engine.turns.send(chat, "r1", "note my pin", [])
    card = events.until("approval_required")
    assert card["description"] == "This note is private." and card["can_always"] is False
    engine.turns.approve(chat, card["approval_id"], "allow")
    events.until("note_added")
    events.until("turn_end")
    assert feature_notes.seen["approved"] == [("c1", {"description": "This note is private."})]


def test_a_feature_can_run_a_turn_itself(engine):
    chat = engine.chat()
    engine.model.says("No notes yet.")
    turn(engine, chat, "r1", "/notes")
    request = engine.model.requests[-1]
    assert request.tools == () and request.system.endswith("List the notes.")
    assert engine.messages(chat)[-1]["content"] == "No notes yet."


def test_a_feature_command_starts_a_turn_after_its_quote(engine):
    chat = engine.chat()
    engine.model.says("Hi.")
    turn(engine, chat, "r1", "hi")  # a request opens with a user message: the quote comes after one
    events = engine.events(chat)
    engine.model.says("Hello to you.")
    engine.turns.feature_turn(chat, "note_turn", "r7", text="hello")
    assert events.until("accepted")["request_id"] == "r7"
    events.until("turn_end")
    quote, user = engine.model.requests[-1].messages[-2:]
    assert (quote.role, quote.content) == ("assistant", "(note) hello") and (user.role, user.content) == ("user", "hello")


def test_a_feature_adds_a_settings_section_and_routes_and_leaves_with_them(engine, tmp_path):
    assert settings.find("notes") is not None and settings.find("notes").value() == {"enabled": True}
    app = Flask(__name__)
    feature_notes.FEATURE.routes(app)
    chat = engine.chat()
    assert app.test_client().get(f"/api/test-notes/{chat}").get_json() == {"notes": []}
    # The app adds every registered feature's routes.
    (tmp_path / "app").mkdir()
    served = create_app(Config(data_dir=tmp_path / "app"))
    assert "/api/test-notes/<chat_id>" in {rule.rule for rule in served.url_map.iter_rules()}
    served.extensions["numi"].services.tool_pool.shutdown()
    # Turned off in its own section, its tool is no longer offered.
    settings.put("notes", {"enabled": False})
    engine.model.says("ok")
    turn(engine, chat, "r1", "hi")
    assert "note" not in [t.name for t in engine.model.requests[-1].tools]
    features.unregister("notes")
    assert settings.find("notes") is None and "note_added" not in event_table.CHAT_EVENTS


def test_an_event_name_is_defined_once():
    with pytest.raises(ValueError, match="defined already"):
        event_table.add(event_table.Event("turn_end"))
