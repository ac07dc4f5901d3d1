"""The bounds that keep search fast on a huge history (backend/store/search.py), on a real
SQLite database made by the migrations, with the thresholds turned down so a few dozen
messages reach them: a query matching many messages is ranked among its newest matches,
and a phrase in too many messages to weigh cheaply still has to match but is not weighed."""
from __future__ import annotations

import pytest
from peewee import SqliteDatabase

from backend.store import search
from backend.store.migrations import migrate


@pytest.fixture
def db(tmp_path):
    database = SqliteDatabase(str(tmp_path / "numi.db"))
    database.connect()
    migrate(database)
    database.execute_sql("INSERT INTO chat (id, title, created_at, updated_at) VALUES ('c_1', 'One', 0, 0)")
    database.execute_sql("INSERT INTO chat (id, title, folder_id, created_at, updated_at) "
                         "VALUES ('c_2', 'Two', NULL, 0, 0)")
    yield database
    database.close()


def add(db, texts: list[str], chat: str = "c_1", role: str = "user") -> list[int]:
    ids = []
    for i, text in enumerate(texts):
        cur = db.execute_sql("INSERT INTO message (chat_id, role, content, created_at) VALUES (?, ?, ?, ?)",
                             [chat, role, text, float(i)])
        ids.append(cur.lastrowid)
    return ids


def found(db, q: str, limit: int = 50, **filters) -> list[int]:
    return [i["message_id"] for i in search.search(db, search.parse(q), limit, search.Filters(**filters))]


def test_best_match_first_when_nothing_is_bounded(db):
    ids = add(db, ["zebra " + "filler " * 30, "zebra zebra zebra", "zebra and a horse"])
    assert found(db, "zebra") == [ids[1], ids[2], ids[0]]


def test_many_matches_are_ranked_among_the_newest(db, monkeypatch):
    monkeypatch.setattr(search, "CANDIDATES", 5)
    best_but_old = add(db, ["zebra zebra zebra zebra"])[0]
    ids = add(db, ["zebra " + "filler " * (20 - i) for i in range(10)])
    result = found(db, "zebra")
    assert best_but_old not in result and set(result) == set(ids[-5:])
    # Among those five, bm25 still orders: the shortest message (the newest) first.
    assert result == list(reversed(ids[-5:]))


def test_a_phrase_in_too_many_messages_must_match_but_is_not_weighed(db, monkeypatch):
    monkeypatch.setattr(search, "WEIGH_MAX", 10)
    monkeypatch.setattr(search, "WINDOW", 30)
    add(db, [f"the filler number {i}" for i in range(30)])
    many_the = add(db, ["the the the the the zebra"])[0]
    many_zebra = add(db, ["the zebra zebra zebra"])[0]
    no_the = add(db, ["zebra zebra zebra zebra alone"])[0]
    # "the" is in every message: it still has to match, but zebra alone decides the order.
    assert found(db, "the zebra") == [many_zebra, many_the]
    assert no_the in found(db, "zebra")
    # Only common words: nothing to weigh, so the newest matches come first.
    newest_first = found(db, "the", limit=5)
    assert newest_first == sorted(newest_first, reverse=True) and newest_first[0] == many_zebra


def test_filters_apply_before_the_candidate_bound(db, monkeypatch):
    monkeypatch.setattr(search, "CANDIDATES", 3)
    early = add(db, ["zebra in chat two"], chat="c_2")[0]
    add(db, ["zebra in chat one"] * 10)
    assert early not in found(db, "zebra")
    db.execute_sql("INSERT INTO folder (id, name, created_at) VALUES ('f_1', 'F', 0)")
    db.execute_sql("UPDATE chat SET folder_id = 'f_1' WHERE id = 'c_2'")
    assert found(db, "zebra", folder_id="f_1") == [early]


def test_hidden_chats_do_not_use_up_the_page(db):
    visible = add(db, ["zebra here"])[0]
    add(db, ["zebra " * 5] * 30, chat="c_2")  # better matches, all in a deleted chat
    db.execute_sql("UPDATE chat SET deleted_at = 1 WHERE id = 'c_2'")
    assert found(db, "zebra", limit=1) == [visible]
