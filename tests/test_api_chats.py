"""Chats and messages over HTTP: every route, limit and refusal, pagination, delete/restore/purge."""
from __future__ import annotations

import json
import re
import sqlite3
import time

import pytest

from backend.store.history import link_in_order_sql
from tests.test_api_catalog import assert_invalid, make_model, make_provider

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
LIST_FIELDS = {"id", "title", "model_id", "folder_id", "pinned", "archived", "temporary",
               "created_at", "updated_at", "running", "awaiting_approval", "awaiting_answer", "unread", "mode"}
MESSAGE_FIELDS = {"id", "chat_id", "role", "content", "reasoning", "tool_calls", "tool_call_id", "status",
                  "model_id", "usage", "error", "attachments", "created_at", "plan"}


def sql(server, statement: str, params=()):
    """Write straight to the server's database, as the turn engine would (WAL lets both in)."""
    conn = sqlite3.connect(server.data_dir / "numi.db", timeout=10)
    try:
        with conn:
            rows = conn.execute(statement, params).fetchall()
        return rows
    finally:
        conn.close()


def add_message(server, chat_id, role="user", content="hi", **cols):
    cols = {"chat_id": chat_id, "role": role, "content": content, "created_at": time.time(), **cols}
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    conn = sqlite3.connect(server.data_dir / "numi.db", timeout=10)
    with conn:
        cur = conn.execute(f"INSERT INTO message ({names}) VALUES ({marks})", list(cols.values()))
        for statement, args in link_in_order_sql(chat_id):  # the rows above form one branch
            conn.execute(statement, args)
    conn.close()
    return cur.lastrowid


def ids(items):
    return [c["id"] for c in items]


def new_chat(api, **fields):
    r = api.post("/api/chats", fields)
    assert r.status == 201, r
    return r.body


# -- create / get ---------------------------------------------------------------

def test_create_defaults_and_shape(api):
    chat = new_chat(api)
    assert LIST_FIELDS | {"system_prompt", "params"} <= set(chat)
    assert (chat["title"], chat["model_id"], chat["folder_id"], chat["pinned"], chat["archived"],
            chat["temporary"], chat["running"], chat["unread"], chat["system_prompt"], chat["params"]) == \
        ("", None, None, False, False, False, False, False, "", {})
    assert ISO.match(chat["created_at"]) and ISO.match(chat["updated_at"])
    assert api.get(f"/api/chats/{chat['id']}").body == chat
    listed = api.get("/api/chats").body
    assert listed["next_cursor"] is None and set(listed["items"][0]) >= LIST_FIELDS
    assert api.get("/api/chats/c_missing").status == 404
    assert api.get("/api/chats/c_missing").body["error"]["code"] == "not_found"


def test_create_with_every_field(api, server):
    model = make_model(api, make_provider(api)["id"])
    sql(server, "INSERT INTO folder (id, name, created_at) VALUES ('f_1', 'Work', 0)")
    chat = new_chat(api, title="Plans", model_id=model["id"], folder_id="f_1", system_prompt="Be brief.",
                    params={"temperature": 0.3, "reasoning_effort": "low"}, temporary=False)
    assert (chat["title"], chat["model_id"], chat["folder_id"], chat["system_prompt"], chat["params"]) == \
        ("Plans", model["id"], "f_1", "Be brief.", {"temperature": 0.3, "reasoning_effort": "low"})


@pytest.mark.parametrize("body, field", [
    ({"title": "x" * 301}, "title"),
    ({"title": 3}, "title"),
    ({"system_prompt": "x" * 8001}, "system_prompt"),
    ({"model_id": "m_missing"}, "model_id"),
    ({"folder_id": "f_missing"}, "folder_id"),
    ({"params": {"temperature": 9}}, "params.temperature"),
    ({"temporary": "yes"}, "temporary"),
    ({"pinned": True}, "pinned"),
    ({"colour": "red"}, "colour"),
])
def test_create_refusals(api, body, field):
    assert_invalid(api.post("/api/chats", body), field)
    assert api.get("/api/chats").body["items"] == []


def test_create_at_the_limits(api):
    chat = new_chat(api, title="t" * 300, system_prompt="s" * 8000)
    assert len(chat["title"]) == 300 and len(chat["system_prompt"]) == 8000


# -- patch ----------------------------------------------------------------------

GOOD_PARAMS = [("temperature", 0), ("temperature", 2), ("temperature", 0.7), ("top_p", 0), ("top_p", 1),
               ("max_tokens", 1), ("max_tokens", 1_000_000), ("reasoning_effort", "off"),
               ("reasoning_effort", "low"), ("reasoning_effort", "medium"), ("reasoning_effort", "high")]
BAD_PARAMS = [("temperature", -0.01), ("temperature", 2.01), ("temperature", "1"), ("temperature", True),
              ("top_p", -1), ("top_p", 1.01), ("max_tokens", 0), ("max_tokens", 1_000_001),
              ("max_tokens", 1.5), ("max_tokens", "10"), ("reasoning_effort", "extreme"),
              ("reasoning_effort", True), ("seed", 1), ("stop", ["x"])]


def test_patch_params_within_limits(api):
    chat = new_chat(api)
    for name, value in GOOD_PARAMS:
        r = api.patch(f"/api/chats/{chat['id']}", {"params": {name: value}})
        assert r.status == 200 and r.body["params"][name] == value, (name, value, r)


def test_patch_params_outside_limits(api):
    chat = new_chat(api, params={"temperature": 1})
    for name, value in BAD_PARAMS:
        assert_invalid(api.patch(f"/api/chats/{chat['id']}", {"params": {name: value}}), f"params.{name}")
    assert api.get(f"/api/chats/{chat['id']}").body["params"] == {"temperature": 1}


def test_patch_params_merge_and_null_clears(api):
    chat = new_chat(api, params={"temperature": 1, "top_p": 0.9})
    r = api.patch(f"/api/chats/{chat['id']}", {"params": {"temperature": None, "max_tokens": 100}})
    assert r.body["params"] == {"top_p": 0.9, "max_tokens": 100}
    r = api.patch(f"/api/chats/{chat['id']}", {"params": None})
    assert r.body["params"] == {}
    assert_invalid(api.patch(f"/api/chats/{chat['id']}", {"params": [1]}), "params")


def test_patch_fields_and_limits(api, server):
    model = make_model(api, make_provider(api)["id"])
    sql(server, "INSERT INTO folder (id, name, created_at) VALUES ('f_1', 'Work', 0)")
    chat = new_chat(api)
    path = f"/api/chats/{chat['id']}"
    r = api.patch(path, {"title": "t" * 300, "system_prompt": "s" * 8000, "model_id": model["id"],
                         "folder_id": "f_1", "pinned": True, "archived": True, "unread": True})
    assert r.status == 200
    got = r.body
    assert (len(got["title"]), len(got["system_prompt"]), got["model_id"], got["folder_id"],
            got["pinned"], got["archived"], got["unread"]) == (300, 8000, model["id"], "f_1", True, True, True)
    fields = assert_invalid(api.patch(path, {"title": "t" * 301, "system_prompt": "s" * 8001,
                                             "model_id": "m_missing", "folder_id": "f_missing",
                                             "pinned": "yes", "nickname": "x", "id": "c_other"}),
                            "title", "system_prompt", "model_id", "folder_id", "pinned", "nickname", "id")
    assert "300" in fields["title"] and "8 000" in fields["system_prompt"]
    assert api.get(path).body == got  # a refused PATCH changes nothing at all
    cleared = api.patch(path, {"model_id": None, "folder_id": None, "system_prompt": None}).body
    assert (cleared["model_id"], cleared["folder_id"], cleared["system_prompt"]) == (None, None, "")
    assert api.patch("/api/chats/c_missing", {"title": "x"}).status == 404


def test_patch_activity_moves_a_chat_up_but_filing_does_not(api):
    a, b = new_chat(api, title="a"), new_chat(api, title="b")
    assert ids(api.get("/api/chats").body["items"]) == [b["id"], a["id"]]
    api.patch(f"/api/chats/{a['id']}", {"pinned": True, "unread": True})
    assert ids(api.get("/api/chats").body["items"]) == [b["id"], a["id"]]
    api.patch(f"/api/chats/{a['id']}", {"title": "renamed"})
    assert ids(api.get("/api/chats").body["items"]) == [a["id"], b["id"]]


# -- list -----------------------------------------------------------------------

def test_list_filters(api, server):
    sql(server, "INSERT INTO folder (id, name, created_at) VALUES ('f_1', 'Work', 0)")
    plain = new_chat(api)
    filed = new_chat(api, folder_id="f_1")
    archived = new_chat(api)
    api.patch(f"/api/chats/{archived['id']}", {"archived": True})
    new_chat(api, temporary=True)
    deleted = new_chat(api)
    api.delete(f"/api/chats/{deleted['id']}")
    assert ids(api.get("/api/chats").body["items"]) == [filed["id"], plain["id"]]
    assert ids(api.get("/api/chats?archived=1").body["items"]) == [archived["id"]]
    assert ids(api.get("/api/chats?archived=false").body["items"]) == [filed["id"], plain["id"]]
    assert ids(api.get("/api/chats?folder_id=f_1").body["items"]) == [filed["id"]]
    assert api.get("/api/chats?folder_id=f_other").body["items"] == []


def test_list_pagination_with_ties(api, server):
    chats = [new_chat(api, title=str(i)) for i in range(5)]
    # Equal timestamps on purpose: the id breaks ties, so no chat is skipped or repeated.
    sql(server, "UPDATE chat SET updated_at = 1000 WHERE title IN ('1', '2', '3')")
    expected = ids(api.get("/api/chats?limit=200").body["items"])
    assert sorted(expected) == sorted(ids(chats))
    seen, cursor = [], None
    while True:
        r = api.get("/api/chats?limit=2" + (f"&cursor={cursor}" if cursor else ""))
        assert r.status == 200 and len(r.body["items"]) <= 2
        seen += ids(r.body["items"])
        cursor = r.body["next_cursor"]
        if cursor is None:
            break
    assert seen == expected
    assert expected[:2] == [chats[4]["id"], chats[0]["id"]]


@pytest.mark.parametrize("query, field", [("limit=0", "limit"), ("limit=201", "limit"), ("limit=ten", "limit"),
                                          ("cursor=garbage", "cursor"), ("cursor=WzEsMl0", "cursor"),
                                          ("archived=maybe", "archived")])
def test_list_refusals(api, query, field):
    assert_invalid(api.get(f"/api/chats?{query}"), field)


def test_list_limit_bounds(api):
    for _ in range(3):
        new_chat(api)
    assert len(api.get("/api/chats?limit=1").body["items"]) == 1
    assert len(api.get("/api/chats?limit=200").body["items"]) == 3


# -- delete / restore / purge ---------------------------------------------------

def test_soft_delete_and_restore(api, server):
    chat = new_chat(api, title="keep me")
    mid = add_message(server, chat["id"], content="remember this")
    assert api.delete(f"/api/chats/{chat['id']}").status == 204
    assert api.get("/api/chats").body["items"] == []
    assert api.get(f"/api/chats/{chat['id']}").status == 404
    assert api.get(f"/api/chats/{chat['id']}/messages").status == 404
    assert api.patch(f"/api/chats/{chat['id']}", {"title": "x"}).status == 404
    assert api.delete(f"/api/chats/{chat['id']}").status == 204  # already in the trash: fine
    r = api.post(f"/api/chats/{chat['id']}/restore")
    assert r.status == 200 and r.body["title"] == "keep me"
    assert ids(api.get("/api/chats").body["items"]) == [chat["id"]]
    assert ids(api.get(f"/api/chats/{chat['id']}/messages").body["items"]) == [mid]
    assert api.post(f"/api/chats/{chat['id']}/restore").status == 200
    assert api.post("/api/chats/c_missing/restore").status == 404
    assert api.delete("/api/chats/c_missing").status == 404


@pytest.mark.parametrize("soft_first", [False, True])
def test_purge(api, server, soft_first):
    chat, other = new_chat(api), new_chat(api)
    add_message(server, chat["id"])
    kept = add_message(server, other["id"])
    if soft_first:
        api.delete(f"/api/chats/{chat['id']}")
    assert api.delete(f"/api/chats/{chat['id']}?purge=1").status == 204
    assert api.post(f"/api/chats/{chat['id']}/restore").status == 404
    assert api.delete(f"/api/chats/{chat['id']}?purge=1").status == 404
    assert sql(server, "SELECT count(*) FROM message WHERE chat_id = ?", (chat["id"],)) == [(0,)]
    assert ids(api.get(f"/api/chats/{other['id']}/messages").body["items"]) == [kept]


# -- messages -------------------------------------------------------------------

def test_message_shape(api, server):
    chat = new_chat(api)
    calls = [{"id": "call_1", "name": "search", "arguments": '{"q": "x"}'}]
    mid = add_message(server, chat["id"], role="assistant", content="Here.", reasoning_content="thinking",
                      tool_calls_json=json.dumps(calls), status="error", model_id="m_1",
                      usage_json='{"input_tokens": 3, "output_tokens": 5}', request_id="r1",
                      error='{"code": "provider_error", "message": "Local said 500."}')
    tool = add_message(server, chat["id"], role="tool", content="result", tool_call_id="call_1")
    items = api.get(f"/api/chats/{chat['id']}/messages").body["items"]
    assert MESSAGE_FIELDS <= set(items[0])
    m = items[0]
    assert (m["id"], m["chat_id"], m["role"], m["content"], m["reasoning"], m["status"], m["model_id"]) == \
        (mid, chat["id"], "assistant", "Here.", "thinking", "error", "m_1")
    assert m["tool_calls"] == calls and m["tool_call_id"] is None
    assert m["usage"] == {"input_tokens": 3, "output_tokens": 5}
    assert m["error"] == {"code": "provider_error", "message": "Local said 500."}
    assert m["attachments"] == [] and ISO.match(m["created_at"]) and m["request_id"] == "r1"
    t = items[1]
    assert (t["id"], t["tool_calls"], t["tool_call_id"], t["usage"], t["error"], t["status"]) == \
        (tool, [], "call_1", None, None, "complete")


def test_message_pages(api, server):
    chat = new_chat(api)
    mids = [add_message(server, chat["id"], content=str(i)) for i in range(5)]
    add_message(server, chat["id"], content="gone", deleted_at=time.time())
    path = f"/api/chats/{chat['id']}/messages"
    r = api.get(path).body
    assert ids(r["items"]) == mids and r["has_more"] is False
    r = api.get(path + "?limit=2").body
    assert ids(r["items"]) == mids[3:] and r["has_more"] is True
    r = api.get(path + f"?limit=2&before={mids[3]}").body
    assert ids(r["items"]) == mids[1:3] and r["has_more"] is True
    r = api.get(path + f"?limit=2&before={mids[1]}").body
    assert ids(r["items"]) == mids[:1] and r["has_more"] is False
    for query, field in (("limit=0", "limit"), ("limit=201", "limit"), ("before=abc", "before")):
        assert_invalid(api.get(f"{path}?{query}"), field)


def test_saved_messages_survive_refused_requests(api, server):
    chat = new_chat(api, title="safe")
    mids = [add_message(server, chat["id"], content=f"m{i}") for i in range(3)]
    path = f"/api/chats/{chat['id']}"
    before = api.get(path + "/messages").body
    refused = [
        api.patch(path, {"title": "x" * 301}),
        api.patch(path, {"params": {"temperature": 5}}),
        api.request("PATCH", path, raw=b"{not json"),
        api.request("PATCH", path, raw=b'{"title": "x"}', content_type="text/plain"),
        api.request("DELETE", path, headers={"Origin": "http://evil.example"}),
        server.api(token="wrong").delete(path + "?purge=1"),
        api.request("DELETE", path + "?purge=maybe"),
    ]
    assert [r.status for r in refused] == [422, 422, 400, 415, 403, 401, 422]
    assert api.get(path + "/messages").body == before
    assert ids(before["items"]) == mids
    assert api.get(path).body["title"] == "safe"


# -- a chat whose turn runs (the fake provider holds the reply open) ---------------

def _start_hanging_turn(setup) -> tuple[str, object]:
    from tests.fakeprovider import script as S

    chat = setup.chat(title="busy")
    setup.fake.enqueue([S.text("partial "), S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    sock.until("content")
    setup.fake.wait_hanging()
    return chat, sock


def test_running_flag(setup):
    chat, sock = _start_hanging_turn(setup)
    assert setup.api.get(f"/api/chats/{chat}").body["running"] is True
    assert setup.api.get("/api/chats").body["items"][0]["running"] is True
    sock.send(type="stop")
    sock.until("turn_end")
    assert setup.api.get(f"/api/chats/{chat}").body["running"] is False


def test_deleting_a_running_chat_stops_its_turn_first(setup):
    chat, sock = _start_hanging_turn(setup)
    assert setup.api.delete(f"/api/chats/{chat}").status == 204
    assert sock.until("turn_end")["status"] == "cancelled"
    assert setup.api.post(f"/api/chats/{chat}/restore").status == 200
    last = setup.messages(chat)[-1]
    assert (last["role"], last["status"], last["content"]) == ("assistant", "cancelled", "partial ")


def test_purging_a_running_chat(setup):
    chat, sock = _start_hanging_turn(setup)
    assert setup.api.delete(f"/api/chats/{chat}?purge=1").status == 204
    assert setup.api.get(f"/api/chats/{chat}").status == 404
    assert sql(setup.server, "SELECT count(*) FROM message WHERE chat_id = ?", (chat,)) == [(0,)]
