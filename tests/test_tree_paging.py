"""GET /api/chats/{id}/tree (CONTRACT §5) is paged: a chat of any size answers at most
TREE_PAGE_MAX nodes at a time with `truncated` and `next_cursor`, and a normal chat is whole,
in the shape the contract gives — over the real server."""
from __future__ import annotations

import json
import sqlite3
import time

from backend.api.messages import PREVIEW_CHARS, TREE_PAGE_MAX
from backend.store.history import link_in_order_sql
from tests.test_api_chats import add_message

ITEM_FIELDS = {"id", "parent_id", "role", "status", "model_id", "created_at", "preview"}


def long_chat(server, chat_id: str, n: int) -> None:
    """`n` messages in one branch, written straight into the server's database (WAL lets both in)."""
    conn = sqlite3.connect(server.data_dir / "numi.db", timeout=10)
    try:
        with conn:
            conn.executemany("INSERT INTO message (chat_id, role, content, created_at) VALUES (?, ?, ?, ?)",
                             [(chat_id, "user" if i % 2 == 0 else "assistant", f"message {i} " + "words " * 40,
                               time.time()) for i in range(n)])
            for statement, args in link_in_order_sql(chat_id):
                conn.execute(statement, args)
    finally:
        conn.close()


def test_a_normal_chat_is_whole_in_the_contracts_shape(api, server):
    chat = api.post("/api/chats", {"title": "t"}).body["id"]
    for i, role in enumerate(("user", "assistant", "user", "assistant")):
        add_message(server, chat, role=role, content=f"turn {i} " + "x" * 300)
    body = api.get(f"/api/chats/{chat}/tree").body
    assert set(body) == {"items", "active_leaf_id", "truncated", "next_cursor"}
    assert body["truncated"] is False and body["next_cursor"] is None
    items = body["items"]
    assert [set(i) for i in items] == [ITEM_FIELDS] * 4
    assert [i["role"] for i in items] == ["user", "assistant", "user", "assistant"]
    assert [i["parent_id"] for i in items] == [None] + [i["id"] for i in items[:-1]]
    assert items[2]["preview"] == ("turn 2 " + "x" * 300)[:PREVIEW_CHARS]
    assert body["active_leaf_id"] == items[-1]["id"]


def test_a_chat_past_the_cap_answers_within_it_and_pages_on(api, server):
    chat = api.post("/api/chats", {"title": "huge"}).body["id"]
    long_chat(server, chat, TREE_PAGE_MAX + 1)
    r = api.get(f"/api/chats/{chat}/tree")
    assert r.status == 200
    first = r.body
    assert len(first["items"]) == TREE_PAGE_MAX and first["truncated"] is True
    assert len(json.dumps(first)) < 2_000_000
    assert first["next_cursor"] == str(first["items"][-1]["id"])
    rest = api.get(f"/api/chats/{chat}/tree?cursor={first['next_cursor']}").body
    assert len(rest["items"]) == 1 and rest["truncated"] is False and rest["next_cursor"] is None
    assert rest["items"][0]["parent_id"] == first["items"][-1]["id"]
    assert rest["active_leaf_id"] == first["active_leaf_id"] == rest["items"][0]["id"]


def test_a_smaller_page_walks_the_whole_tree_once(api, server):
    chat = api.post("/api/chats", {"title": "t"}).body["id"]
    long_chat(server, chat, 7)
    whole = api.get(f"/api/chats/{chat}/tree").body["items"]
    seen, cursor, pages = [], "", 0
    while True:
        page = api.get(f"/api/chats/{chat}/tree?limit=3" + (f"&cursor={cursor}" if cursor else "")).body
        seen += page["items"]
        pages += 1
        if not page["truncated"]:
            break
        cursor = page["next_cursor"]
    assert seen == whole and pages == 3


def test_a_bad_page_request_says_what_to_send(api):
    chat = api.post("/api/chats", {"title": "t"}).body["id"]
    for query, field in (("cursor=abc", "cursor"), ("cursor=-1", "cursor"), ("limit=0", "limit"),
                         (f"limit={TREE_PAGE_MAX + 1}", "limit")):
        r = api.get(f"/api/chats/{chat}/tree?{query}")
        assert r.status == 422 and field in r.body["error"]["fields"], (query, r)
    assert api.get(f"/api/chats/{chat}/tree?cursor=12").body["items"] == []
    assert api.get("/api/chats/c_nope/tree").status == 404
