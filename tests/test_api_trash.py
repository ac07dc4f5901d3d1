"""The trash and temporary chats, on real server processes: listing and emptying the
trash, the start-up purge of trash past its days, temporary chats kept out of every
list, removed on a clean exit (SIGTERM) and — when a crash left them — at a later
start once idle for a day, and kept for good on request.

Old times are written with sqlite3 while the server is stopped, then it starts."""
from __future__ import annotations

import time

import pytest

from tests.numi_client import AppSocket
from tests.test_api_catalog import assert_invalid
from tests.test_api_chats import ISO, LIST_FIELDS, add_message, ids, new_chat, sql

DAY = 86_400


def trash(api, query: str = "") -> dict:
    r = api.get("/api/trash" + (f"?{query}" if query else ""))
    assert r.status == 200, r
    return r.body


def rows(server, table: str, chat_id: str) -> int:
    column = "id" if table == "chat" else "chat_id"
    return sql(server, f"SELECT count(*) FROM {table} WHERE {column} = ?", (chat_id,))[0][0]


# -- the trash ----------------------------------------------------------------------

def test_trash_lists_deleted_chats_newest_deletion_first(api, server):
    a, b, c = (new_chat(api, title=t) for t in "abc")
    kept = new_chat(api, title="not deleted")
    temp = new_chat(api, title="temporary", temporary=True)
    for chat in (a, b, c, temp):
        assert api.delete(f"/api/chats/{chat['id']}").status == 204
    sql(server, "UPDATE chat SET deleted_at = ? WHERE id = ?", (1000.0, a["id"]))
    sql(server, "UPDATE chat SET deleted_at = ? WHERE id = ?", (3000.0, b["id"]))
    sql(server, "UPDATE chat SET deleted_at = ? WHERE id = ?", (2000.0, c["id"]))
    body = trash(api)
    assert ids(body["items"]) == [b["id"], c["id"], a["id"]]
    assert body["next_cursor"] is None and body["retention_days"] == 30
    first = body["items"][0]
    assert set(first) == LIST_FIELDS | {"deleted_at"}
    assert ISO.match(first["deleted_at"]) and first["deleted_at"].startswith("1970-01-01T00:50:00")
    assert (first["title"], first["temporary"]) == ("b", False)
    # The chat list is unchanged by the trash; a restored chat leaves it.
    assert ids(api.get("/api/chats").body["items"]) == [kept["id"]]
    assert api.post(f"/api/chats/{c['id']}/restore").status == 200
    assert ids(trash(api)["items"]) == [b["id"], a["id"]]


def test_trash_pages(api, server):
    chats = [new_chat(api, title=str(i)) for i in range(5)]
    for chat in chats:
        api.delete(f"/api/chats/{chat['id']}")
    # Equal deletion times on purpose: the id breaks ties, so nothing is skipped or repeated.
    sql(server, "UPDATE chat SET deleted_at = 500")
    expected = ids(trash(api, "limit=200")["items"])
    seen, cursor = [], None
    while True:
        page = trash(api, "limit=2" + (f"&cursor={cursor}" if cursor else ""))
        assert len(page["items"]) <= 2
        seen += ids(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == expected and sorted(seen) == sorted(ids(chats))
    for query, field in (("limit=0", "limit"), ("limit=201", "limit"), ("cursor=garbage", "cursor")):
        assert_invalid(api.get(f"/api/trash?{query}"), field)


def test_empty_trash_purges_every_deleted_chat_and_nothing_else(api, server):
    gone = [new_chat(api, title=f"gone {i}") for i in range(3)]
    temp = new_chat(api, temporary=True)
    kept = new_chat(api, title="kept")
    for chat in gone + [temp]:
        add_message(server, chat["id"], content="bye")
        api.delete(f"/api/chats/{chat['id']}")
    mid = add_message(server, kept["id"], content="stay")
    r = api.delete("/api/trash")
    assert r.status == 200 and r.body == {"purged": 4}
    assert trash(api)["items"] == []
    for chat in gone + [temp]:
        assert (rows(server, "chat", chat["id"]), rows(server, "message", chat["id"])) == (0, 0)
        assert api.post(f"/api/chats/{chat['id']}/restore").status == 404
    assert ids(api.get("/api/chats").body["items"]) == [kept["id"]]
    assert ids(api.get(f"/api/chats/{kept['id']}/messages").body["items"]) == [mid]
    assert api.delete("/api/trash").body == {"purged": 0}
    # Guarded like every other change.
    assert api.request("DELETE", "/api/trash", headers={"Origin": "http://evil.example"}).status == 403
    assert server.api(token=None).delete("/api/trash").status == 401


def test_empty_trash_stops_a_reply_still_running_in_a_deleted_chat(setup):
    from tests.fakeprovider import script as S

    chat = setup.chat(title="busy")
    setup.fake.enqueue([S.text("partial "), S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    sock.until("content")
    setup.fake.wait_hanging()
    assert setup.api.delete(f"/api/chats/{chat}").status == 204
    r = setup.api.delete("/api/trash")
    assert r.status == 200 and r.body == {"purged": 1}
    assert sock.until("turn_end")["status"] == "cancelled"
    assert (rows(setup.server, "chat", chat), rows(setup.server, "message", chat)) == (0, 0)


@pytest.mark.parametrize("env, days_kept, days_purged", [
    ({}, [0, 29.9], [30.1, 400]),
    ({"NUMI_TRASH_DAYS": "2"}, [0, 1.9], [2.1, 30]),
    ({"NUMI_TRASH_DAYS": "0"}, [0, 400, 4000], []),
])
def test_start_up_purges_trash_past_its_days_only(start_server, env, days_kept, days_purged):
    server = start_server(env)
    api = server.api()
    live = new_chat(api, title="live")
    add_message(server, live["id"])
    deleted = {}
    for days in days_kept + days_purged:
        chat = new_chat(api, title=f"{days} days")
        add_message(server, chat["id"])
        api.delete(f"/api/chats/{chat['id']}")
        deleted[days] = chat["id"]
    assert server.terminate() < 10
    now = time.time()
    for days, chat_id in deleted.items():
        sql(server, "UPDATE chat SET deleted_at = ? WHERE id = ?", (now - days * DAY, chat_id))
    # Old activity is no reason to go: only the time in the trash counts.
    sql(server, "UPDATE chat SET updated_at = ? WHERE id = ?", (now - 1000 * DAY, live["id"]))

    server = start_server(env, data_dir=server.data_dir)
    api = server.api()
    assert sorted(ids(trash(api)["items"])) == sorted(deleted[d] for d in days_kept)
    for days in days_purged:
        assert (rows(server, "chat", deleted[days]), rows(server, "message", deleted[days])) == (0, 0)
    for days in days_kept:
        assert rows(server, "message", deleted[days]) == 1
    assert ids(api.get("/api/chats").body["items"]) == [live["id"]]
    assert trash(api)["retention_days"] == {"2": 2, "0": None}.get(env.get("NUMI_TRASH_DAYS"), 30)


def test_a_trash_days_value_that_is_not_a_number_keeps_the_default(start_server):
    server = start_server({"NUMI_TRASH_DAYS": "a month"})
    assert trash(server.api())["retention_days"] == 30


# -- temporary chats ----------------------------------------------------------------

def test_temporary_chats_are_in_no_list(api):
    folder = api.post("/api/folders", {"name": "Work"}).body
    temp = new_chat(api, title="secret", temporary=True, folder_id=folder["id"])
    assert temp["temporary"] is True
    saved = new_chat(api, title="saved", folder_id=folder["id"])
    assert ids(api.get("/api/chats").body["items"]) == [saved["id"]]
    assert ids(api.get(f"/api/chats?folder_id={folder['id']}").body["items"]) == [saved["id"]]
    api.patch(f"/api/chats/{temp['id']}", {"archived": True})
    assert api.get("/api/chats?archived=1").body["items"] == []
    assert api.get(f"/api/folders/{folder['id']}").body["chat_count"] == 1
    # It is there for whoever has its id (the window that made it).
    assert api.get(f"/api/chats/{temp['id']}").body["title"] == "secret"
    assert api.get(f"/api/chats/{temp['id']}/messages").status == 200


def test_keep_makes_a_temporary_chat_a_saved_one(api, server):
    temp = new_chat(api, title="worth keeping", temporary=True)
    path = f"/api/chats/{temp['id']}"
    app = AppSocket(server)
    # Saying again that it is temporary is no change, and allowed.
    assert api.patch(path, {"temporary": True}).body["temporary"] is True
    r = api.patch(path, {"temporary": False})
    assert r.status == 200 and r.body["temporary"] is False
    assert ids(api.get("/api/chats").body["items"]) == [temp["id"]]
    # Keeping is filing, not activity; open windows add it to their lists.
    assert r.body["updated_at"] == temp["updated_at"]
    app.chat(temp["id"], temporary=False)
    app.close()
    # Back the other way is refused: it would be deleted at exit.
    fields = assert_invalid(api.patch(path, {"temporary": True}), "temporary")
    assert "cannot become temporary" in fields["temporary"]
    assert api.get(path).body["temporary"] is False


def test_temporary_chats_are_removed_on_a_clean_exit(start_server):
    server = start_server()
    api = server.api()
    temp = new_chat(api, title="scratch", temporary=True)
    kept_temp = new_chat(api, title="kept", temporary=True)
    api.patch(f"/api/chats/{kept_temp['id']}", {"temporary": False})
    deleted_temp = new_chat(api, temporary=True)
    api.delete(f"/api/chats/{deleted_temp['id']}")
    saved = new_chat(api, title="saved")
    for chat in (temp, saved):
        add_message(server, chat["id"], content="hello")
    assert server.terminate() < 10
    for chat in (temp, deleted_temp):
        assert (rows(server, "chat", chat["id"]), rows(server, "message", chat["id"])) == (0, 0)
    assert rows(server, "message", saved["id"]) == 1
    server = start_server(data_dir=server.data_dir)
    assert sorted(ids(server.api().get("/api/chats").body["items"])) == sorted([saved["id"], kept_temp["id"]])


def test_a_temporary_chat_with_a_running_reply_is_removed_on_exit(setup):
    from tests.fakeprovider import script as S

    chat = setup.chat(title="busy", temporary=True)
    setup.fake.enqueue([S.text("partial "), S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    sock.until("content")
    setup.fake.wait_hanging()
    # The reply is stopped first (as Stop does), then the chat goes with everything in it.
    assert setup.server.terminate() < 10
    assert (rows(setup.server, "chat", chat), rows(setup.server, "message", chat)) == (0, 0)


def test_temporary_chats_a_crash_left_go_once_idle_for_a_day(start_server):
    server = start_server()
    api = server.api()
    recent = new_chat(api, title="recent", temporary=True)
    stale = new_chat(api, title="stale", temporary=True)
    saved = new_chat(api, title="saved")
    for chat in (recent, stale, saved):
        add_message(server, chat["id"])
    server.kill9()  # no clean exit: the temporary chats are still there
    assert rows(server, "chat", recent["id"]) == rows(server, "chat", stale["id"]) == 1
    now = time.time()
    sql(server, "UPDATE chat SET updated_at = ? WHERE id = ?", (now - 25 * 3600, stale["id"]))
    sql(server, "UPDATE chat SET updated_at = ? WHERE id = ?", (now - 23 * 3600, recent["id"]))
    sql(server, "UPDATE chat SET updated_at = ? WHERE id = ?", (now - 400 * DAY, saved["id"]))

    server = start_server(data_dir=server.data_dir)
    api = server.api()
    assert (rows(server, "chat", stale["id"]), rows(server, "message", stale["id"])) == (0, 0)
    # Touched within the day: a reload after the crash still reopens it, temporary still.
    got = api.get(f"/api/chats/{recent['id']}").body
    assert (got["title"], got["temporary"]) == ("recent", True)
    assert ids(api.get("/api/chats").body["items"]) == [saved["id"]]
    assert server.terminate() < 10
    assert rows(server, "chat", recent["id"]) == 0
