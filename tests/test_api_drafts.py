"""Drafts over HTTP and the socket, on a real server: a chat's unsent text and attachments are
kept per chat (across a restart), validated, dropped on send, on clear and with the chat."""
from __future__ import annotations

from tests.numi_client import ServerProcess, Socket
from tests.test_api_catalog import assert_invalid
from tests.test_api_chats import new_chat

EMPTY = {"text": "", "file_ids": [], "files": [], "updated_at": None}


def test_put_get_per_chat_and_across_a_restart(tmp_path):
    data = tmp_path / "data"
    server = ServerProcess(data).start()
    try:
        api = server.api()
        a, b = new_chat(api)["id"], new_chat(api)["id"]
        assert api.get(f"/api/chats/{a}/draft").body == EMPTY
        file_id = api.upload("notes.txt", b"some notes", content_type="text/plain").body["id"]
        r = api.put(f"/api/chats/{a}/draft", {"text": "Half a thought", "file_ids": [file_id]})
        assert r.status == 200 and (r.body["text"], r.body["file_ids"]) == ("Half a thought", [file_id])
        assert r.body["updated_at"].endswith("Z")
        assert api.put(f"/api/chats/{b}/draft", {"text": "Other"}).body["file_ids"] == []
    finally:
        server.stop()
    again = ServerProcess(data).start()
    try:
        api = again.api()
        assert (api.get(f"/api/chats/{a}/draft").body["text"], api.get(f"/api/chats/{a}/draft").body["file_ids"]) \
            == ("Half a thought", [file_id])
        assert api.get(f"/api/chats/{b}/draft").body["text"] == "Other"
        # Cleared: an empty draft, or DELETE.
        assert api.put(f"/api/chats/{b}/draft", {"text": "", "file_ids": []}).body == EMPTY
        assert api.delete(f"/api/chats/{a}/draft").status == 204
        assert api.get(f"/api/chats/{a}/draft").body == EMPTY
    finally:
        again.stop()


def test_a_draft_names_its_files(api):
    """The draft carries its files' names, types and sizes, in order: what the message box shows."""
    chat = new_chat(api)["id"]
    notes = api.upload("notes.txt", b"some notes", content_type="text/plain").body
    data = api.upload("data.csv", b"a,b\n1,2\n", content_type="text/csv").body
    body = api.put(f"/api/chats/{chat}/draft", {"text": "", "file_ids": [data["id"], notes["id"]]}).body
    assert [(f["id"], f["name"], f["size"]) for f in body["files"]] == [(data["id"], "data.csv", 8),
                                                                      (notes["id"], "notes.txt", 10)]
    got = api.get(f"/api/chats/{chat}/draft").body
    assert got["files"] == body["files"] and got["files"][1]["mime"].startswith("text/plain")


def test_refusals(api):
    chat = new_chat(api)["id"]
    assert api.get("/api/chats/nope/draft").status == 404
    assert api.put("/api/chats/nope/draft", {"text": "x"}).status == 404
    assert_invalid(api.put(f"/api/chats/{chat}/draft", {"text": "x" * 200_001}), "text")
    assert_invalid(api.put(f"/api/chats/{chat}/draft", {"text": "x", "file_ids": ["file_missing"]}), "file_ids")
    assert_invalid(api.put(f"/api/chats/{chat}/draft", {"text": "x", "file_ids": "f"}), "file_ids")
    assert_invalid(api.put(f"/api/chats/{chat}/draft", {"file_ids": []}), "text")
    assert_invalid(api.put(f"/api/chats/{chat}/draft", {"text": "x", "colour": 1}), "colour")
    assert api.get(f"/api/chats/{chat}/draft").body == EMPTY


def test_dropped_with_the_chat(api):
    kept, purged = new_chat(api)["id"], new_chat(api)["id"]
    for chat in (kept, purged):
        api.put(f"/api/chats/{chat}/draft", {"text": "unsent"})
    assert api.delete(f"/api/chats/{kept}").status == 204
    assert api.get(f"/api/chats/{kept}/draft").status == 404  # a deleted chat has none to show
    assert api.post(f"/api/chats/{kept}/restore").status == 200
    assert api.get(f"/api/chats/{kept}/draft").body == EMPTY
    assert api.delete(f"/api/chats/{purged}?purge=1").status == 204
    assert api.get(f"/api/chats/{purged}/draft").status == 404


def test_sending_drops_the_draft(setup):
    chat = setup.chat()
    setup.api.put(f"/api/chats/{chat}/draft", {"text": "Hello there"})
    from tests.fakeprovider import script as S
    setup.fake.enqueue(S.reply("Hi."))
    sock = Socket(setup.server, chat)
    try:
        sock.send(type="send", request_id="r1", content="Hello there")
        sock.until("accepted")
        assert setup.api.get(f"/api/chats/{chat}/draft").body == EMPTY
        sock.until("turn_end")
    finally:
        sock.close()
