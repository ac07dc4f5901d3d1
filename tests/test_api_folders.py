"""Folders over HTTP, on a real server: the routes, their refusals, what new chats inherit
from a folder (copied at creation, the chat's own values winning), moving chats, and a
deleted folder's chats staying — in no folder."""
from __future__ import annotations

import pytest

from backend.store.history import link_in_order_sql
from tests.numi_client import AppSocket
from tests.test_api_catalog import assert_invalid, make_model, make_provider
from tests.test_api_chats import ISO, ids, new_chat, sql

FOLDER_FIELDS = {"id", "name", "model_id", "system_prompt", "params", "mode", "tools_off", "chat_count",
                 "created_at", "knowledge_ids", "memory"}  # the knowledge and memory features' (CONTRACT §8)


def new_folder(api, **fields):
    r = api.post("/api/folders", {"name": "Work", **fields})
    assert r.status == 201, r
    return r.body


@pytest.fixture
def models(api):
    provider = make_provider(api)["id"]
    return make_model(api, provider, api_model="alpha", label="Alpha"), \
        make_model(api, provider, api_model="beta", label="Beta")


# -- the routes -------------------------------------------------------------------

def test_create_list_get_and_shape(api, models):
    alpha, _ = models
    assert api.get("/api/folders").body == {"items": []}
    work = new_folder(api, name="  Work  ", model_id=alpha["id"], system_prompt="Be brief.",
                      params={"temperature": 0.3, "reasoning_effort": "low"})
    assert set(work) == FOLDER_FIELDS and ISO.match(work["created_at"])
    assert (work["name"], work["model_id"], work["system_prompt"], work["params"], work["chat_count"]) == \
        ("Work", alpha["id"], "Be brief.", {"temperature": 0.3, "reasoning_effort": "low"}, 0)
    bare = new_folder(api, name="archive stuff")
    assert (bare["model_id"], bare["system_prompt"], bare["params"]) == (None, "", {})
    # Listed by name, whatever the case.
    assert [f["name"] for f in api.get("/api/folders").body["items"]] == ["archive stuff", "Work"]
    assert api.get(f"/api/folders/{work['id']}").body == work
    got = api.get("/api/folders/f_missing")
    assert got.status == 404 and got.body["error"]["code"] == "not_found"


def test_patch_renames_and_changes_defaults(api, models):
    alpha, beta = models
    folder = new_folder(api, model_id=alpha["id"], params={"temperature": 1, "top_p": 0.5})
    path = f"/api/folders/{folder['id']}"
    r = api.patch(path, {"name": "Clients", "model_id": beta["id"], "system_prompt": "Formal.",
                         "params": {"top_p": None, "max_tokens": 500}})
    assert r.status == 200, r
    assert (r.body["name"], r.body["model_id"], r.body["system_prompt"], r.body["params"]) == \
        ("Clients", beta["id"], "Formal.", {"temperature": 1, "max_tokens": 500})
    r = api.patch(path, {"model_id": None, "system_prompt": None, "params": None})
    assert (r.body["name"], r.body["model_id"], r.body["system_prompt"], r.body["params"]) == \
        ("Clients", None, "", {})
    assert api.get(path).body == r.body
    assert api.patch("/api/folders/f_missing", {"name": "x"}).status == 404


@pytest.mark.parametrize("body, field, says", [
    ({}, "name", "required"),
    ({"name": ""}, "name", "empty"),
    ({"name": "   "}, "name", "empty"),
    ({"name": "x" * 101}, "name", "100"),
    ({"name": None}, "name", "null"),
    ({"name": 7}, "name", "string"),
    ({"name": "ok", "model_id": "m_missing"}, "model_id", "No model"),
    ({"name": "ok", "system_prompt": "s" * 8001}, "system_prompt", "8 000"),
    ({"name": "ok", "params": {"temperature": 3}}, "params.temperature", "0 to 2"),
    ({"name": "ok", "params": {"reasoning_effort": "max"}}, "params.reasoning_effort", "off"),
    ({"name": "ok", "params": {"seed": 1}}, "params.seed", "Unknown"),
    ({"name": "ok", "params": [1]}, "params", "object"),
    ({"name": "ok", "parent_id": None}, "parent_id", "Unknown"),
    ({"name": "ok", "chat_count": 3}, "chat_count", "read-only"),
])
def test_create_refusals(api, body, field, says):
    assert_invalid(api.post("/api/folders", body), field, says=says)
    assert api.get("/api/folders").body["items"] == []


def test_names_are_unique_whatever_the_case_and_a_refused_patch_changes_nothing(api):
    work = new_folder(api, name="Work", system_prompt="keep")
    home = new_folder(api, name="Home")
    assert_invalid(api.post("/api/folders", {"name": "work"}), "name", says="already a folder")
    fields = assert_invalid(api.patch(f"/api/folders/{home['id']}", {"name": " WORK ", "system_prompt": "x",
                                                                      "params": {"top_p": 2}}),
                            "name", "params.top_p")
    assert "“WORK”" in fields["name"]
    assert api.get(f"/api/folders/{home['id']}").body == home
    # Renaming a folder to its own name in another case is not a clash with itself.
    assert api.patch(f"/api/folders/{work['id']}", {"name": "WORK"}).body["name"] == "WORK"
    assert api.patch(f"/api/folders/{work['id']}", {"name": "x" * 100}).status == 200


def test_refused_bodies(api):
    folder = new_folder(api)
    path = f"/api/folders/{folder['id']}"
    assert api.request("POST", "/api/folders", raw=b"[1]").status == 422
    assert api.request("POST", "/api/folders", raw=b"{nope").status == 400
    assert api.request("PATCH", path, raw=b'{"name": "x"}', content_type="text/plain").status == 415
    assert api.request("DELETE", path, headers={"Origin": "http://evil.example"}).status == 403
    assert api.get(path).body == folder


# -- what a new chat takes from its folder ------------------------------------------

def test_a_new_chat_copies_the_folder_defaults(api, models):
    alpha, beta = models
    api.patch("/api/settings", {"default_model_id": beta["id"]})
    folder = new_folder(api, model_id=alpha["id"], system_prompt="Answer in French.",
                        params={"temperature": 0.2, "reasoning_effort": "high"})
    chat = new_chat(api, folder_id=folder["id"])
    # The folder's prompt is not copied: it is read at each request, before the chat's own (CONTRACT §12).
    assert (chat["folder_id"], chat["model_id"], chat["system_prompt"], chat["params"]) == \
        (folder["id"], alpha["id"], "", {"temperature": 0.2, "reasoning_effort": "high"})
    assert api.get(f"/api/chats/{chat['id']}").body == chat
    # null counts as not given for the model.
    chat = new_chat(api, folder_id=folder["id"], model_id=None, system_prompt=None)
    assert (chat["model_id"], chat["system_prompt"]) == (alpha["id"], "")
    # Outside the folder: the app's default model, no prompt, no params.
    plain = new_chat(api)
    assert (plain["model_id"], plain["system_prompt"], plain["params"]) == (beta["id"], "", {})


def test_a_chat_s_own_values_win_param_by_param(api, models):
    alpha, beta = models
    folder = new_folder(api, model_id=alpha["id"], system_prompt="Answer in French.",
                        params={"temperature": 0.2, "reasoning_effort": "high", "top_p": 0.9})
    chat = new_chat(api, folder_id=folder["id"], model_id=beta["id"], system_prompt="",
                    params={"temperature": 1.5, "reasoning_effort": None, "max_tokens": 50})
    # An empty prompt is a value of its own; a param set to null drops the folder's.
    assert (chat["model_id"], chat["system_prompt"], chat["params"]) == \
        (beta["id"], "", {"temperature": 1.5, "top_p": 0.9, "max_tokens": 50})
    # params: null starts from none at all.
    assert new_chat(api, folder_id=folder["id"], params=None)["params"] == {}
    # A refused chat is not created, folder or not.
    assert_invalid(api.post("/api/chats", {"folder_id": folder["id"], "params": {"temperature": -1}}),
                   "params.temperature")
    assert ids(api.get(f"/api/chats?folder_id={folder['id']}").body["items"]) == [
        c["id"] for c in api.get("/api/chats").body["items"]]


def test_defaults_are_copied_once_at_creation_and_the_prompt_never(api, models):
    alpha, beta = models
    folder = new_folder(api, model_id=alpha["id"], system_prompt="Old prompt.", params={"temperature": 0.2})
    before = new_chat(api, folder_id=folder["id"])
    api.patch(f"/api/folders/{folder['id']}", {"model_id": beta["id"], "system_prompt": "New prompt.",
                                                "params": {"temperature": 1.0}})
    # Changing the folder leaves its chats as they were: what they copied is theirs.
    assert api.get(f"/api/chats/{before['id']}").body == before
    after = new_chat(api, folder_id=folder["id"])
    assert (after["model_id"], after["system_prompt"], after["params"]) == \
        (beta["id"], "", {"temperature": 1.0})
    # Moving a chat into a folder files it; its settings stay its own.
    loose = new_chat(api, system_prompt="Mine.")
    moved = api.patch(f"/api/chats/{loose['id']}", {"folder_id": folder["id"]}).body
    assert (moved["folder_id"], moved["model_id"], moved["system_prompt"], moved["params"]) == \
        (folder["id"], None, "Mine.", {})


def test_a_folder_model_removed_from_the_catalog_is_not_inherited(api, models):
    alpha, beta = models
    api.patch("/api/settings", {"default_model_id": beta["id"]})
    folder = new_folder(api, model_id=alpha["id"], system_prompt="Still here.")
    assert api.delete(f"/api/models/{alpha['id']}").status in (200, 204)
    chat = new_chat(api, folder_id=folder["id"])
    assert (chat["model_id"], chat["system_prompt"]) == (beta["id"], "")


# -- moving chats, counting them, deleting a folder -----------------------------------

def test_move_a_chat_between_folders(api, server):
    work, home = new_folder(api, name="Work"), new_folder(api, name="Home")
    a, b = new_chat(api, title="a"), new_chat(api, title="b")
    order = ids(api.get("/api/chats").body["items"])
    r = api.patch(f"/api/chats/{a['id']}", {"folder_id": work["id"]})
    assert r.status == 200 and r.body["folder_id"] == work["id"]
    assert ids(api.get(f"/api/chats?folder_id={work['id']}").body["items"]) == [a["id"]]
    assert ids(api.get("/api/chats").body["items"]) == order  # filing is not activity
    api.patch(f"/api/chats/{a['id']}", {"folder_id": home["id"]})
    assert api.get(f"/api/chats?folder_id={work['id']}").body["items"] == []
    assert ids(api.get(f"/api/chats?folder_id={home['id']}").body["items"]) == [a["id"]]
    # An unknown folder is refused with a sentence, and nothing moves.
    fields = assert_invalid(api.patch(f"/api/chats/{b['id']}", {"folder_id": "f_missing"}), "folder_id")
    assert "No folder" in fields["folder_id"]
    assert api.get(f"/api/chats/{b['id']}").body["folder_id"] is None
    assert api.patch(f"/api/chats/{a['id']}", {"folder_id": None}).body["folder_id"] is None


def test_chat_count_leaves_out_deleted_and_temporary_chats(api):
    folder = new_folder(api)
    for _ in range(2):
        new_chat(api, folder_id=folder["id"])
    archived = new_chat(api, folder_id=folder["id"])
    api.patch(f"/api/chats/{archived['id']}", {"archived": True})
    gone = new_chat(api, folder_id=folder["id"])
    api.delete(f"/api/chats/{gone['id']}")
    new_chat(api, folder_id=folder["id"], temporary=True)
    assert api.get(f"/api/folders/{folder['id']}").body["chat_count"] == 3
    assert api.get("/api/folders").body["items"][0]["chat_count"] == 3


def test_deleting_a_folder_keeps_its_chats_in_no_folder(api, server, models):
    alpha, _ = models
    folder = new_folder(api, model_id=alpha["id"], system_prompt="Folder prompt.")
    other = new_folder(api, name="Other")
    kept = [new_chat(api, folder_id=folder["id"], title=f"kept {i}") for i in range(2)]
    trashed = new_chat(api, folder_id=folder["id"], title="trashed")
    api.delete(f"/api/chats/{trashed['id']}")
    elsewhere = new_chat(api, folder_id=other["id"])
    sql(server, "INSERT INTO message (chat_id, role, content, created_at) VALUES (?, 'user', 'hello', 0)",
        (kept[0]["id"],))
    for statement, args in link_in_order_sql(kept[0]["id"]):
        sql(server, statement, args)
    order = ids(api.get("/api/chats").body["items"])
    app = AppSocket(server)

    r = api.delete(f"/api/folders/{folder['id']}")
    assert r.status == 200 and r.body == {"id": folder["id"], "moved_chats": 2}
    assert api.get(f"/api/folders/{folder['id']}").status == 404
    assert api.delete(f"/api/folders/{folder['id']}").status == 404
    # The chats are all there, in no folder, in the same order, with what they copied.
    assert ids(api.get("/api/chats").body["items"]) == order
    for chat in kept:
        got = api.get(f"/api/chats/{chat['id']}").body
        assert (got["folder_id"], got["model_id"], got["system_prompt"]) == (None, alpha["id"], "Folder prompt.")
    assert [m["content"] for m in api.get(f"/api/chats/{kept[0]['id']}/messages").body["items"]] == ["hello"]
    assert api.get(f"/api/chats/{elsewhere['id']}").body["folder_id"] == other["id"]
    # A chat from the trash comes back in no folder.
    assert api.post(f"/api/chats/{trashed['id']}/restore").body["folder_id"] is None
    # Open windows hear of each moved chat and of the folders.
    for chat in kept:
        app.chat(chat["id"], folder_id=None)
    app.until("folders_changed")
    app.close()


def test_a_deleted_folders_long_prompt_joins_a_long_chat_prompt_whole(api):
    # Both at their limit: the chat keeps every word of what its requests sent (2 × 8 000 and
    # the blank line), past the limit a PATCH of the prompt keeps to; its other fields still change.
    folder = new_folder(api, system_prompt="F" * 8000)
    chat = new_chat(api, folder_id=folder["id"], system_prompt="C" * 8000)
    assert api.delete(f"/api/folders/{folder['id']}").status == 200
    got = api.get(f"/api/chats/{chat['id']}").body
    assert got["system_prompt"] == "F" * 8000 + "\n\n" + "C" * 8000
    assert api.patch(f"/api/chats/{chat['id']}", {"title": "Still mine"}).body["system_prompt"] == got["system_prompt"]
    assert_invalid(api.patch(f"/api/chats/{chat['id']}", {"system_prompt": got["system_prompt"]}), "system_prompt")


def test_folder_changes_reach_open_windows(api, server):
    app = AppSocket(server)
    folder = new_folder(api)
    app.until("folders_changed")
    api.patch(f"/api/folders/{folder['id']}", {"name": "Renamed"})
    app.until("folders_changed")
    # A refused change says nothing: nothing changed.
    assert api.patch(f"/api/folders/{folder['id']}", {"name": ""}).status == 422
    chat = new_chat(api)
    app.chat(chat["id"])
    assert [e["type"] for e in app.events].count("folders_changed") == 2
    app.close()
