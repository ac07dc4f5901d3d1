"""The backend side of the shared event fixtures (tests/fixtures/events).

The same files drive the browser's reducer (tests/js/reducer.test.mjs). Here
they are held to what the server sends: every event is one of its type as
backend/turns/events.py defines it (the fields, their types and values); and where the
events form a turn, the backend's own fold (`TurnView`, what a `snapshot`
shows) reaches the text the fixture expects the client to show. A fixture that
drifts from the server, or a server fold that drifts from the client's, fails.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.turns.events import CHAT_EVENTS, problems
from backend.turns.hub import TurnView
from backend.ws import coalesce

FIXTURES = sorted((Path(__file__).parent / "fixtures" / "events").glob("*.json"))
# Codes the fixtures may use: the ones docs/PROTOCOL.md lists, so no fixture invents one.
ERROR_CODES = {"bad_request", "not_found", "busy", "queue_full", "shutting_down", "db_busy", "cancelled", "limit",
               "no_model", "provider_disabled", "context_too_long", "auth", "rate_limited", "unreachable",
               "timeout", "bad_response", "provider_error", "internal", "loop_detected"}
# Types no fixture plays: `steered` has its own story (tests/js/steer.test.mjs); the tree's
# events wait for the reducer to handle them.
NOT_IN_FIXTURES = {"pong", "steered", "branched", "active_changed"}


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def ids(paths):
    return [p.stem for p in paths]


def test_the_fixture_set_covers_the_protocol():
    assert len(FIXTURES) >= 12
    seen = {e["type"] for p in FIXTURES for e in load(p)["events"]}
    wanted = CHAT_EVENTS.keys() - NOT_IN_FIXTURES
    assert wanted <= seen, f"no fixture has {sorted(wanted - seen)}"


@pytest.mark.parametrize("path", FIXTURES, ids=ids(FIXTURES))
def test_events_have_the_servers_shape(path):
    fixture = load(path)
    assert {"name", "events", "expect"} <= fixture.keys()
    first_seen: dict[tuple, dict] = {}
    for event in fixture["events"]:
        kind = event.get("type")
        assert not problems(event), problems(event)
        if kind != "pong":
            assert event["event_id"] >= 0 and event["epoch"]
        if kind == "error":
            assert event["code"] in ERROR_CODES
        if kind == "snapshot":
            assert event["event_id"] == event["last_event_id"]
        if kind == "accepted":
            assert 1 <= len(event["request_id"]) <= 64
        if kind in ("pong", "snapshot"):
            continue
        key = (event["epoch"], event["event_id"])
        if key in first_seen:
            # A replay repeats events as they were: the client may drop it by its id alone.
            assert event == first_seen[key], f"event {key} replayed with different content"
        else:
            assert not any(e == event["epoch"] and i >= event["event_id"] for e, i in first_seen), \
                f"event {key} is new but not above the ids before it"
            first_seen[key] = event


def server_fold(events: list[dict], merge: bool = False) -> TurnView | None:
    """Fold the fixture as the hub does: each event once, the last turn of the last epoch.

    With `merge`, runs of deltas are first merged the way the socket writer may send them.
    """
    epoch = events[-1]["epoch"]
    unique, seen = [], set()
    for event in events:
        if event.get("epoch") != epoch or event["type"] == "pong":
            continue
        if event["type"] != "snapshot" and event["event_id"] in seen:
            continue  # the hub published it once; the fixture shows a replay
        seen.add(event["event_id"])
        unique.append(event)
    if merge:
        unique = coalesce(unique)
    view = None
    for event in unique:
        if event["type"] == "turn_start":
            view = TurnView(event["turn_id"], event["event_id"], event.get("compare"))
        elif event["type"] == "snapshot" and event["turn_id"] is not None:
            # A snapshot stands for the events before it: the view it was made from.
            view = TurnView(event["turn_id"], 1)
            view.reply.message_id = event["message_id"]
            view.reply.content, view.reply.reasoning = [event["content"]], [event["reasoning"]]
            view.status = event["status"]
            continue
        if view is not None and event.get("turn_id") == view.turn_id:
            view.apply(event)
    return view


TURN_FIXTURES = [p for p in FIXTURES if server_fold(load(p)["events"]) is not None]


@pytest.mark.parametrize("path", TURN_FIXTURES, ids=ids(TURN_FIXTURES))
def test_the_server_fold_reaches_the_expected_message(path):
    fixture = load(path)
    view = server_fold(fixture["events"])
    expected = {m["id"]: m for m in fixture["expect"].get("messages", []) if "id" in m}
    # A compare's replies are its columns' (web/js/compare.js), not the branch's: each column's last step.
    for entry in fixture["expect"].get("compares", {}).values():
        for column in entry["columns"]:
            expected[column["steps"][-1]["id"]] = {**column["steps"][-1], "status": column["status"]}
    for reply in view.replies.values():  # a compare's: each column's last message
        assert reply.message_id in expected, f"the turn's last message {reply.message_id} is not in expect"
        message = expected[reply.message_id]
        assert "content" in message, "expect must give the last message's content"
        assert "".join(reply.content) == message["content"]
        if "reasoning" in message:
            assert "".join(reply.reasoning) == message["reasoning"]
    # TurnView's end statuses are the message statuses, but for limit (the reply ended in error);
    # a compare's turn ends once for all its columns, each with its own status.
    ended = {"limit": "error"}.get(view.status, view.status)
    if "status" in message and view.compare is None:
        assert ended == message["status"]


@pytest.mark.parametrize("path", TURN_FIXTURES, ids=ids(TURN_FIXTURES))
def test_merging_deltas_on_the_way_out_keeps_the_fold(path):
    """ws.coalesce may merge any run of deltas; the text a client builds must not change."""
    events = load(path)["events"]
    plain, merged = server_fold(events), server_fold(events, merge=True)
    def texts(view):
        return [(r.message_id, "".join(r.content), "".join(r.reasoning)) for r in view.replies.values()]

    assert texts(merged) == texts(plain)
