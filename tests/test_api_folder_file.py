"""A folder as a file over HTTP, on real servers: exported on one machine (its settings, never
its chats), imported on another (a second server with its own data), with what this machine
lacks left out and said, a name already taken made free, and bad files refused with nothing made."""
from __future__ import annotations

import json

import pytest

from tests.test_api_catalog import assert_invalid, make_model, make_provider
from tests.test_api_folders import new_folder


def export(api, folder_id: str) -> dict:
    r = api.get(f"/api/folders/{folder_id}/export")
    assert r.status == 200, r
    assert r.headers["Content-Disposition"].startswith("attachment;")
    assert ".numi-folder.json" in r.headers["Content-Disposition"]
    return r.body


def import_(api, doc) -> dict:
    r = api.post("/api/folders/import", doc)
    assert r.status == 201, r
    return r.body


@pytest.fixture
def second(start_server):
    """Another machine: a server with a data dir of its own."""
    return start_server().api()


def base(api, tmp_path, name: str) -> str:
    folder = tmp_path / name.replace(" ", "_")
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nSome text.\n")
    r = api.post("/api/knowledge", {"name": name, "paths": [str(folder)]})
    assert r.status == 201, r
    return r.body["id"]


def test_a_folder_travels_to_another_machine_by_names_not_ids(api, second, tmp_path):
    provider = make_provider(api)["id"]
    alpha = make_model(api, provider, api_model="alpha-1", label="Alpha")
    specs, notes = base(api, tmp_path, "Specs"), base(api, tmp_path, "Team notes")
    work = new_folder(api, name="Support desk", model_id=alpha["id"], system_prompt="Answer as the support desk.",
                      params={"temperature": 0.2}, mode="plan", tools_off=["web_search"],
                      knowledge_ids=[specs, notes], memory=False)
    api.post("/api/chats", {"title": "A chat of mine", "folder_id": work["id"]})
    doc = export(api, work["id"])
    assert doc["format"] == "numi-folder" and doc["version"] == 1
    assert doc["folder"] == {"name": "Support desk", "system_prompt": "Answer as the support desk.",
                             "params": {"temperature": 0.2}, "mode": "plan", "tools_off": ["web_search"],
                             "model": {"api_model": "alpha-1", "label": "Alpha", "wire_api": "chat_completions"},
                             "knowledge_ids": [{"name": "Specs"}, {"name": "Team notes"}], "memory": False}
    assert "A chat of mine" not in json.dumps(doc)  # settings, never chats

    # The other machine has the model under its own id and one of the two bases (another case).
    there = make_model(second, make_provider(second)["id"], api_model="alpha-1", label="Alpha")
    (tmp_path / "there").mkdir()
    there_specs = base(second, tmp_path / "there", "SPECS")
    made = import_(second, doc)
    folder = made["folder"]
    assert (folder["name"], folder["model_id"], folder["system_prompt"], folder["params"], folder["mode"],
            folder["tools_off"], folder["knowledge_ids"], folder["memory"], folder["chat_count"]) == \
        ("Support desk", there["id"], "Answer as the support desk.", {"temperature": 0.2}, "plan",
         ["web_search"], [there_specs], False, 0)
    [note] = made["notes"]
    assert "Team notes" in note and "Settings → Knowledge" in note
    assert second.get(f"/api/folders/{folder['id']}").body == folder


def test_what_this_machine_lacks_is_left_out_and_said(api, second):
    doc = {"format": "numi-folder", "version": 1,
           "folder": {"name": "Writer", "model": {"api_model": "gone-model", "label": "Gone"},
                      "system_prompt": "Edit my prose.", "colour": "blue"}}
    made = import_(second, doc)
    assert made["folder"]["model_id"] is None and made["folder"]["system_prompt"] == "Edit my prose."
    unknown, model = made["notes"]
    assert "colour" in unknown
    assert "“Gone” (gone-model) is not in your catalog" in model and "default model" in model


def test_a_name_already_taken_gets_the_next_free_one(api):
    work = new_folder(api, name="Work")
    new_folder(api, name="work (2)")
    doc = export(api, work["id"])
    assert import_(api, doc)["folder"]["name"] == "Work (3)"
    assert import_(api, doc)["folder"]["name"] == "Work (4)"
    long = new_folder(api, name="L" * 100)
    assert import_(api, export(api, long["id"]))["folder"]["name"] == "L" * 96 + " (2)"


@pytest.mark.parametrize("doc, says", [
    ({"folder": {"name": "x"}}, "not a Numi folder file"),
    ({"format": "numi-export", "folder": {"name": "x"}}, "not a Numi folder file"),
    ({"format": "numi-folder", "version": 2, "folder": {"name": "x"}}, "newer Numi"),
    ({"format": "numi-folder", "version": "1", "folder": {"name": "x"}}, "version"),
    ({"format": "numi-folder", "version": 1, "folder": []}, "must be an object"),
    ({"format": "numi-folder", "version": 1, "folder": {"name": "  "}}, "no name"),
    ({"format": "numi-folder", "version": 1, "folder": {"name": "x", "model": "gpt"}}, "api_model"),
])
def test_a_file_that_is_not_a_folder_file_is_refused(api, doc, says):
    fields = assert_invalid(api.post("/api/folders/import", doc), "body", says=says)
    assert fields
    assert api.get("/api/folders").body["items"] == []


@pytest.mark.parametrize("folder, field, says", [
    ({"system_prompt": "x" * 8001}, "system_prompt", "8 000"),
    ({"mode": "wander"}, "mode", None),
    ({"tools_off": "web_search"}, "tools_off", "list of tool names"),
    ({"knowledge_ids": ["kb_1"]}, "knowledge_ids", "by name"),
    ({"memory": "off"}, "memory", "true or false"),
])
def test_a_folder_file_with_a_bad_setting_makes_nothing(api, folder, field, says):
    r = api.post("/api/folders/import", {"format": "numi-folder", "version": 1, "folder": {"name": "Bad", **folder}})
    assert_invalid(r, field, says=says)
    assert api.get("/api/folders").body["items"] == []


def test_an_unknown_folder_exports_nothing(api):
    r = api.get("/api/folders/f_missing/export")
    assert r.status == 404 and r.body["error"]["code"] == "not_found"
