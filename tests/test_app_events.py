"""The app-wide event set on its own, over a real database: frames, ordering, a reader that fell behind."""
from __future__ import annotations

import threading

import pytest

from backend import app_events
from backend.app_events import RESYNC, AppEvents, Subscriber
from backend.store.db import db, now, open_database
from backend.store.models import Chat


@pytest.fixture
def database(tmp_path):
    open_database(str(tmp_path / "numi.db"))
    with db.connection_context():
        yield
    if not db.is_closed():
        db.close()


def test_frames_describe_the_chat_as_it_is_now(database):
    running = set()
    events = AppEvents(lambda chat_id: chat_id in running)
    sub = events.subscribe(first={"type": "ready"})
    chat = Chat.create(title="First")
    events.chat_changed(chat.id)
    running.add(chat.id)
    Chat.update(title="Renamed").where(Chat.id == chat.id).execute()
    events.chat_changed(chat.id)
    Chat.update(deleted_at=now()).where(Chat.id == chat.id).execute()
    events.chat_changed(chat.id)
    events.chat_changed("c_never_existed")
    ready, created, renamed, removed, unknown = sub.take()
    assert ready == {"type": "ready"}
    assert created["type"] == "chat_changed" and created["chat"]["title"] == "First"
    assert created["chat"]["running"] is False and created["chat"]["unread"] is False
    assert set(created["chat"]) == {"id", "title", "model_id", "folder_id", "pinned", "archived", "temporary",
                                    "created_at", "updated_at", "running", "awaiting_approval", "awaiting_answer",
                                    "unread", "mode"}
    assert (renamed["chat"]["title"], renamed["chat"]["running"]) == ("Renamed", True)
    assert removed == {"type": "chat_removed", "chat_id": chat.id}
    assert unknown == {"type": "chat_removed", "chat_id": "c_never_existed"}


def test_a_reader_that_falls_behind_gets_one_resync_and_others_lose_nothing(database, monkeypatch):
    monkeypatch.setattr(app_events, "QUEUE_CAPACITY", 5)
    events = AppEvents(lambda _id: False)
    stalled, reader = events.subscribe(), events.subscribe()
    chat = Chat.create(title="t")
    seen = []
    for i in range(12):
        Chat.update(title=f"t{i}").where(Chat.id == chat.id).execute()
        events.chat_changed(chat.id)  # returns at once although `stalled` never reads
        seen += [f["chat"]["title"] for f in reader.take()]
    assert seen == [f"t{i}" for i in range(12)]
    # Full at t5 (one resync instead of t0..t5), full again at t10 (one resync instead of
    # that resync and t6..t10), then t11 queued behind it.
    assert [f if f == RESYNC else f["chat"]["title"] for f in stalled.take()] == [RESYNC, "t11"]


def test_overflow_replaces_the_queue_with_resync():
    sub = Subscriber(capacity=3)
    for i in range(3):
        sub.put({"type": "chat_changed", "n": i})
    sub.put({"type": "chat_changed", "n": 3})
    assert sub.take() == [RESYNC]
    sub.put({"type": "chat_changed", "n": 4})
    assert sub.take() == [{"type": "chat_changed", "n": 4}]


def test_take_waits_for_a_frame_and_close_wakes_it():
    sub = Subscriber()
    got = []
    taker = threading.Thread(target=lambda: got.append(sub.take()))
    taker.start()
    sub.put({"type": "pong"})
    taker.join(5)
    assert got == [[{"type": "pong"}]]
    taker = threading.Thread(target=lambda: got.append(sub.take()))
    taker.start()
    sub.close()
    taker.join(5)
    assert got[-1] == [] and not taker.is_alive()
    sub.put({"type": "pong"})  # a closed subscriber keeps nothing
    assert sub.take() == []


def test_nothing_is_read_while_no_one_listens(database):
    calls = []
    events = AppEvents(lambda chat_id: calls.append(chat_id) or False)
    events.chat_changed("c_x")
    assert calls == []
    sub = events.subscribe()
    events.unsubscribe(sub)
    events.chat_changed("c_x")
    assert calls == [] and sub.closed
