"""Documents over HTTP (CONTRACT §9) against the real server: a chat's list, one document at a version, the
person's PATCH (a version authored "person", doc_update on the chat's socket, 409 on a stale base, 422, 404),
the diff route, the request guard on every route, a purged chat taking its documents along, and export and
import keeping every version."""
from __future__ import annotations

import json
import sqlite3

import pytest

from tests.chat_samples import export_json, export_zip
from tests.test_api_security import raw
from tests.test_documents_protocol import create, document, run, streamed, tooled  # noqa: F401 (tooled: a fixture)


def three_versions(setup) -> tuple[str, str]:
    """A chat whose document has versions 1 (model), 2 (model, find/replace) and 3 (person); (chat, doc)."""
    chat = setup.chat(title="Docs")
    sock = setup.socket(chat)
    doc_id = create(setup, sock, "r1", "c1", title="Plan", language="markdown", content="# Plan\n\n1. one\n2. two\n")
    run(setup, sock, "r2", streamed("c2", "doc_edit", {"doc_id": doc_id, "find": "2. two", "replace": "2. TWO"}))
    r = setup.api.patch(f"/api/documents/{doc_id}", {"content": "# Plan\n\n1. one\n2. TWO\n3. three\n",
                                                     "base_version": 2})
    assert r.status == 200, r
    sock.close()
    return chat, doc_id


def rows(setup, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{setup.server.data_dir / 'numi.db'}?mode=ro", uri=True) as con:
        return list(con.execute(sql))


# --- reading -------------------------------------------------------------------------------------

def test_a_document_its_versions_and_the_chats_list(tooled):
    setup = tooled
    chat, doc_id = three_versions(setup)
    doc = document(setup, doc_id)
    assert doc["content"] == "# Plan\n\n1. one\n2. TWO\n3. three\n"
    assert (doc["version"], doc["latest_version"], doc["chat_id"]) == (3, 3, chat)
    assert [(v["version"], v["author"]) for v in doc["versions"]] == [(1, "model"), (2, "model"), (3, "person")]
    assert doc["versions"][2]["message_id"] is None and isinstance(doc["versions"][0]["message_id"], int)
    assert all(v["created_at"].endswith("Z") for v in doc["versions"])
    assert {"id", "chat_id", "title", "language", "content", "version", "versions"} <= doc.keys()
    old = document(setup, doc_id, 1)
    assert old["content"] == "# Plan\n\n1. one\n2. two\n" and old["version"] == 1 and old["latest_version"] == 3
    assert old["versions"] == doc["versions"]

    (listed,) = setup.api.get(f"/api/chats/{chat}/documents").body["items"]
    assert listed == {"id": doc_id, "chat_id": chat, "title": "Plan", "language": "markdown", "extension": ".md",
                      "version": 3, "size": len(doc["content"]), "created_at": doc["created_at"],
                      "updated_at": doc["updated_at"]}
    assert setup.api.get(f"/api/chats/{setup.chat(title='empty')}/documents").body == {"items": []}


def test_reading_refusals(tooled):
    setup = tooled
    chat, doc_id = three_versions(setup)
    api = setup.api
    for bad in ("0", "-1", "abc", "1.5", "%C2%B2", "%201", "99999999999999999999"):
        r = api.get(f"/api/documents/{doc_id}?version={bad}")
        assert r.status == 422 and "version" in r.body["error"]["fields"], (bad, r)
    r = api.get(f"/api/documents/{doc_id}?version=4")
    assert r.status == 404 and "versions are 1 to 3" in r.body["error"]["message"]
    assert api.get("/api/documents/doc_0000000000000000").status == 404
    assert api.get("/api/chats/c_nope/documents").status == 404


# --- the person's edit ---------------------------------------------------------------------------

def test_a_persons_edit_is_a_version_every_window_hears_of(tooled):
    setup = tooled
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    doc_id = create(setup, sock, "r1", "c1", content="model's")
    other = setup.socket(chat)  # another window of the chat
    r = setup.api.patch(f"/api/documents/{doc_id}", {"content": "person's", "base_version": 1})
    assert r.status == 200 and r.body["version"] == 2 and r.body["content"] == "person's"
    assert r.body["versions"][-1]["author"] == "person"
    for window in (sock, other):
        update = window.until("doc_update", doc_id=doc_id, version=2)
        assert update["author"] == "person" and update["turn_id"] is None and "call_id" not in update

    # The same text again (a PATCH sent twice) changes nothing, whatever its base.
    again = setup.api.patch(f"/api/documents/{doc_id}", {"content": "person's", "base_version": 1})
    assert again.status == 200 and again.body["version"] == 2 and len(again.body["versions"]) == 2


def test_a_stale_base_is_409_with_the_latest_version_and_keeping_both_works(tooled):
    setup = tooled
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    doc_id = create(setup, sock, "r1", "c1", content="v1")
    run(setup, sock, "r2", streamed("c2", "doc_edit", {"doc_id": doc_id, "content": "the model's v2"}))
    # The panel still had version 1 open when the model wrote version 2.
    r = setup.api.patch(f"/api/documents/{doc_id}", {"content": "my edit of v1", "base_version": 1})
    assert r.status == 409, r
    error = r.body["error"]
    assert error["code"] == "conflict" and error["latest_version"] == 2
    assert "version 2 is the latest" in error["message"] and error["message"].endswith(".")
    assert document(setup, doc_id)["content"] == "the model's v2" and document(setup, doc_id)["version"] == 2
    # Keep both: save again on top of the latest; the model's stays among the versions.
    r = setup.api.patch(f"/api/documents/{doc_id}", {"content": "my edit of v1", "base_version": 2})
    assert r.status == 200 and r.body["version"] == 3
    assert document(setup, doc_id, 2)["content"] == "the model's v2"


def test_bad_edits_are_422_or_404_and_change_nothing(tooled):
    setup = tooled
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    doc_id = create(setup, sock, "r1", "c1", content="kept")
    api = setup.api
    for body, field in [({}, "content"), ({"content": "x"}, "base_version"), ({"base_version": 1}, "content"),
                        ({"content": 5, "base_version": 1}, "content"),
                        ({"content": None, "base_version": 1}, "content"),
                        ({"content": "x", "base_version": "1"}, "base_version"),
                        ({"content": "x", "base_version": 0}, "base_version"),
                        ({"content": "x", "base_version": True}, "base_version"),
                        ({"content": "x", "base_version": 1.5}, "base_version"),
                        ({"content": "x", "base_version": None}, "base_version"),
                        ({"content": "x", "base_version": 1, "title": "new"}, "title"),
                        ({"content": "x", "base_version": 1, "colour": "red"}, "colour"),
                        ({"content": "é" * 524_289, "base_version": 1}, "content")]:
        r = api.patch(f"/api/documents/{doc_id}", body)
        assert r.status == 422 and field in r.body["error"]["fields"], (body, r)
    r = api.patch(f"/api/documents/{doc_id}", {"content": "é" * 524_289, "base_version": 1})
    assert "at most 1 MB" in r.body["error"]["fields"]["content"]
    assert api.patch(f"/api/documents/{doc_id}", {"content": "é" * 524_288, "base_version": 1}).status == 200
    assert api.patch("/api/documents/doc_0000000000000000", {"content": "x", "base_version": 1}).status == 404
    r = api.request("PATCH", f"/api/documents/{doc_id}", raw=b'{"content": "\\ud800", "base_version": 2}',
                    headers={"Content-Type": "application/json"})
    assert r.status == 422  # a lone surrogate is no text to keep
    assert [v["version"] for v in document(setup, doc_id)["versions"]] == [1, 2]


# --- the diff ------------------------------------------------------------------------------------

def test_a_diff_between_two_versions_is_a_unified_diff_the_diff_view_reads(tooled):
    setup = tooled
    chat, doc_id = three_versions(setup)
    api = setup.api
    r = api.get(f"/api/documents/{doc_id}/diff?from=1&to=3")
    assert r.status == 200, r
    body = r.body
    assert (body["doc_id"], body["from"], body["to"], body["added"], body["removed"]) == (doc_id, 1, 3, 2, 1)
    assert body["diff"] == ("--- a/Plan\tversion 1\n+++ b/Plan\tversion 3\n@@ -1,4 +1,5 @@\n # Plan\n \n 1. one\n"
                            "-2. two\n+2. TWO\n+3. three\n")
    # Backwards, by default the latest against the one before it, and from nothing (version 0).
    assert api.get(f"/api/documents/{doc_id}/diff?from=3&to=1").body["removed"] == 2
    latest = api.get(f"/api/documents/{doc_id}/diff").body
    assert (latest["from"], latest["to"], latest["added"], latest["removed"]) == (2, 3, 1, 0)
    created = api.get(f"/api/documents/{doc_id}/diff?from=0&to=1").body
    assert created["diff"].startswith("--- /dev/null\n+++ b/Plan\tversion 1\n@@ -0,0 +1,4 @@\n+# Plan\n")
    same = api.get(f"/api/documents/{doc_id}/diff?from=2&to=2").body
    assert same["diff"] == "Version 2 and version 2 have the same text." and same["added"] == 0
    for query, status in [("from=1&to=4", 404), ("from=9", 404), ("from=x", 422), ("to=0", 422),
                          ("from=-1", 422)]:
        r = api.get(f"/api/documents/{doc_id}/diff?{query}")
        assert r.status == status, (query, r)
    assert api.get("/api/documents/doc_0000000000000000/diff").status == 404


# --- the request guard ---------------------------------------------------------------------------

def test_every_documents_route_needs_the_token_the_host_and_for_a_change_the_origin(tooled):
    setup = tooled
    chat, doc_id = three_versions(setup)
    server = setup.server
    token = {"Authorization": f"Bearer {server.token}"}
    routes = [("GET", f"/api/chats/{chat}/documents"), ("GET", f"/api/documents/{doc_id}"),
              ("GET", f"/api/documents/{doc_id}/diff"), ("PATCH", f"/api/documents/{doc_id}")]
    body = json.dumps({"content": "pwned", "base_version": 3}).encode()
    for method, path in routes:
        sent = body if method == "PATCH" else None
        json_type = {"Content-Type": "application/json"} if sent else {}
        assert raw(server, method, path, json_type, sent)[0] == 401, (method, path)
        assert raw(server, method, path, {**token, **json_type}, sent, host="evil.example:80")[0] == 403
        cookie = {"Cookie": server.session_cookie(), "Sec-Fetch-Site": "same-site", **json_type}
        assert raw(server, method, path, cookie, sent)[0] == 403, (method, path)
    patch = f"/api/documents/{doc_id}"
    foreign = {**token, "Content-Type": "application/json", "Origin": "http://evil.example"}
    assert raw(server, "PATCH", patch, foreign, body)[0] == 403
    assert raw(server, "PATCH", patch, {**token, "Content-Type": "text/plain"}, body)[0] == 415
    assert document(setup, doc_id)["content"] != "pwned" and document(setup, doc_id)["version"] == 3


# --- a purged chat -------------------------------------------------------------------------------

def test_the_trash_keeps_a_chats_documents_and_purging_it_removes_them(tooled):
    setup = tooled
    chat, doc_id = three_versions(setup)
    assert setup.api.delete(f"/api/chats/{chat}").status == 204
    assert document(setup, doc_id)["version"] == 3
    assert setup.api.delete(f"/api/chats/{chat}?purge=1").status == 204
    assert setup.api.get(f"/api/documents/{doc_id}").status == 404
    assert rows(setup, "SELECT COUNT(*) FROM document") == [(0,)]
    assert rows(setup, "SELECT COUNT(*) FROM document_version") == [(0,)]


# --- export and import ---------------------------------------------------------------------------

def test_export_and_import_keep_every_version(tooled, start_server):
    from tests.conftest import Setup

    setup = tooled
    chat, doc_id = three_versions(setup)
    exported = export_json(setup.api, chat)
    (carried,) = exported["chats"][0]["features"]["documents"]
    assert carried["id"] == doc_id and [v["author"] for v in carried["versions"]] == ["model", "model", "person"]
    assert carried["versions"][0]["content"] == "# Plan\n\n1. one\n2. two\n"
    # The zip of everything carries them too.
    zipped = json.loads(export_zip(setup.api).read("numi-export.json"))
    assert zipped["chats"][0]["features"]["documents"] == exported["chats"][0]["features"]["documents"]

    # Imported into another data dir: the same id, every version, each linked to its new message.
    other = Setup(start_server(), setup.fake)
    r = other.api.post("/api/import", exported)
    assert r.status == 201, r
    (new_chat,) = r.body["chat_ids"]
    (listed,) = other.api.get(f"/api/chats/{new_chat}/documents").body["items"]
    assert listed["id"] == doc_id and listed["version"] == 3
    doc = other.api.get(f"/api/documents/{doc_id}").body
    original = document(setup, doc_id)
    assert doc["content"] == original["content"] and doc["chat_id"] == new_chat
    assert [(v["version"], v["author"], v["created_at"]) for v in doc["versions"]] == \
        [(v["version"], v["author"], v["created_at"]) for v in original["versions"]]
    for n in (1, 2):
        assert other.api.get(f"/api/documents/{doc_id}?version={n}").body["content"] == \
            document(setup, doc_id, n)["content"]
    messages = other.api.get(f"/api/chats/{new_chat}/messages?limit=200").body["items"]
    made_by = doc["versions"][0]["message_id"]
    assert any(m["id"] == made_by and m["tool_calls"] and m["tool_calls"][0]["id"] == "c1" for m in messages)

    # Imported here again (the chat is here): the copy gets a new document id, the original keeps its own.
    r = setup.api.post("/api/import", exported)
    assert r.status == 201, r
    (copy,) = r.body["chat_ids"]
    (copied,) = setup.api.get(f"/api/chats/{copy}/documents").body["items"]
    assert copied["id"] != doc_id and copied["version"] == 3
    assert document(setup, doc_id)["chat_id"] == chat
    # And the copy exports as it was imported.
    again = export_json(setup.api, copy)["chats"][0]["features"]["documents"][0]
    assert [v["content"] for v in again["versions"]] == [v["content"] for v in carried["versions"]]


@pytest.mark.parametrize("change, said", [
    (lambda d: d.update(versions=[]), "versions"),
    (lambda d: d["versions"][1].update(version=5), "numbered 1, 2, 3"),
    (lambda d: d["versions"][0].update(author="robot"), "author"),
    (lambda d: d["versions"][0].update(content=7), "content"),
    (lambda d: d["versions"][0].update(content="é" * 524_289), "at most 1 MB"),
    (lambda d: d.update(title=""), "title"),
    (lambda d: d.update(id="../etc"), "id"),
    (lambda d: d.update(created_at="yesterday"), "ISO 8601"),
    (lambda d: d["versions"][0].update(message_id="12"), "message_id"),
])
def test_an_import_with_a_bad_document_is_refused_whole(tooled, change, said):
    setup = tooled
    chat, doc_id = three_versions(setup)
    exported = export_json(setup.api, chat)
    change(exported["chats"][0]["features"]["documents"][0])
    before = setup.api.get("/api/chats?limit=200").body["items"]
    r = setup.api.post("/api/import", exported)
    assert r.status == 422, r
    fields = r.body["error"]["fields"]
    assert list(fields) == ["chats[0].features.documents"] and said in fields["chats[0].features.documents"]
    assert "Nothing was imported" in r.body["error"]["message"]
    assert setup.api.get("/api/chats?limit=200").body["items"] == before
    assert rows(setup, "SELECT COUNT(*) FROM document") == [(1,)]


def test_an_export_without_documents_has_no_features_and_a_newer_feature_is_ignored(tooled):
    setup = tooled
    chat = setup.chat(title="plain")
    exported = export_json(setup.api, chat)
    assert "features" not in exported["chats"][0]
    exported["chats"][0]["features"] = {"from_a_later_numi": {"x": 1}}
    r = setup.api.post("/api/import", exported)
    assert r.status == 201, r
    r = setup.api.post("/api/import", {**exported, "chats": [{**exported["chats"][0], "features": []}]})
    assert r.status == 422 and "chats[0].features" in r.body["error"]["fields"]
