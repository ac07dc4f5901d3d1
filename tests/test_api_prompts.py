"""The prompt library over HTTP against the real server (CONTRACT §12): create, list by name and
filter, change, delete; a clashing `/command` (409) and every refusal (422 naming the field, nothing
kept); `variables` read from the content and read-only; prompts carried by the full export and back
on import (a clash keeps the prompt here); and a backup holding them."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.chat_samples import export_json, export_zip, import_file
from tests.test_api_catalog import assert_invalid

FIELDS = {"id", "name", "command", "content", "variables", "created_at", "updated_at"}
CASES = json.loads((Path(__file__).parent / "fixtures" / "prompt-variables.json").read_text())["cases"]


def make(api, **body) -> dict:
    r = api.post("/api/prompts", body)
    assert r.status == 201, r
    assert set(r.body) == FIELDS
    return r.body


def listed(api, q: str | None = None) -> list[dict]:
    r = api.get("/api/prompts" + (f"?q={q}" if q is not None else ""))
    assert r.status == 200, r
    return r.body["items"]


def commands(api, q: str | None = None) -> list[str]:
    return [p["command"] for p in listed(api, q)]


def test_create_list_change_and_delete(api):
    assert listed(api) == []  # no seed prompts
    tr = make(api, name="  Translate  ", command="translate", content="Translate {{text}} into {{language}}.")
    assert tr["id"].startswith("pr_") and len(tr["id"]) == 19
    assert (tr["name"], tr["command"]) == ("Translate", "translate")
    assert tr["variables"] == ["text", "language"]
    assert tr["created_at"].endswith("Z") and tr["created_at"] == tr["updated_at"]
    make(api, name="bug report", command="bug", content="Steps:\n1. \nExpected:\nActual:")
    make(api, name="Answer briefly", command="brief", content="Answer in one sentence: ")
    # By name, whatever its case.
    assert commands(api) == ["brief", "bug", "translate"]
    assert api.get(f"/api/prompts/{tr['id']}").body == tr

    # The filter looks in the command, the name and the text; "/tr" as typed in the box works too.
    assert commands(api, "tr") == ["translate"]
    assert commands(api, "/tr") == ["translate"]
    assert commands(api, "BRIEF") == ["brief"]
    assert commands(api, "expected") == ["bug"]
    assert commands(api, "50%") == [] and commands(api, "_") == []  # LIKE's wildcards are plain text here
    assert commands(api, "") == ["brief", "bug", "translate"]
    r = api.get("/api/prompts?q=" + "x" * 201)
    assert_invalid(r, "q")

    r = api.patch(f"/api/prompts/{tr['id']}", {"content": "Put {{text}} in {{lang}}, keep {{text}}'s tone."})
    assert r.status == 200, r
    assert r.body["variables"] == ["text", "lang"] and r.body["command"] == "translate"
    assert r.body["created_at"] == tr["created_at"] and r.body["updated_at"] >= tr["updated_at"]
    r = api.patch(f"/api/prompts/{tr['id']}", {"command": "tr", "name": "Zeta"})
    assert r.status == 200 and (r.body["command"], r.body["name"]) == ("tr", "Zeta")
    assert api.patch(f"/api/prompts/{tr['id']}", {"command": "tr"}).status == 200  # its own command is no clash
    assert commands(api) == ["brief", "bug", "tr"]

    assert api.delete(f"/api/prompts/{tr['id']}").status == 204
    assert commands(api) == ["brief", "bug"]
    for method in ("get", "patch", "delete"):
        r = getattr(api, method)(f"/api/prompts/{tr['id']}", **({"body": {"name": "x"}} if method == "patch" else {}))
        assert r.status == 404 and r.body["error"]["code"] == "not_found", (method, r)
        assert "prompt" in r.body["error"]["message"]


def test_a_command_in_use_is_409_and_nothing_changes(api):
    first = make(api, name="Summarize", command="sum", content="Summarize this.")
    r = api.post("/api/prompts", {"name": "Other", "command": "sum", "content": "Other text."})
    assert r.status == 409 and r.body["error"]["code"] == "conflict", r
    message = r.body["error"]["message"]
    assert "/sum" in message and "“Summarize”" in message and message.endswith(".")
    assert r.body["error"]["fields"]["command"] == message
    second = make(api, name="Other", command="other", content="Other text.")
    r = api.patch(f"/api/prompts/{second['id']}", {"command": "sum", "name": "Renamed"})
    assert r.status == 409, r
    assert listed(api) == [second, first]  # the rename in the refused PATCH was not kept either


def test_each_bad_field_is_422_and_nothing_is_kept(api):
    good = {"name": "Fine", "command": "fine", "content": "Fine text."}
    bad = [
        ({"command": ""}, "command", None),
        ({"command": "Fix"}, "command", "lowercase"),
        ({"command": "fix grammar"}, "command", "lowercase"),
        ({"command": "fix_grammar"}, "command", "hyphens"),
        ({"command": "/fix"}, "command", "without its slash"),
        ({"command": "a" * 33}, "command", "at most 32"),
        ({"command": "naïve"}, "command", None),
        ({"command": 7}, "command", "string"),
        ({"name": ""}, "name", "empty"),
        ({"name": "   "}, "name", "empty"),
        ({"name": "n" * 101}, "name", "at most 100"),
        ({"name": None}, "name", "null"),
        ({"content": ""}, "content", "empty"),
        ({"content": " \n\t "}, "content", "empty"),
        ({"content": "c" * 20_001}, "content", "at most 20 000"),
        ({"content": " ".join(f"{{{{v{i}}}}}" for i in range(21))}, "content", "at most 20"),
        ({"variables": ["x"]}, "variables", "read-only"),
        ({"id": "pr_0"}, "id", "read-only"),
        ({"created_at": "2026-01-01T00:00:00Z"}, "created_at", "read-only"),
        ({"colour": "red"}, "colour", "Unknown field"),
    ]
    for change, field, says in bad:
        assert_invalid(api.post("/api/prompts", {**good, **change}), field, says=says)
    for missing in ("name", "command", "content"):
        body = {k: v for k, v in good.items() if k != missing}
        assert_invalid(api.post("/api/prompts", body), missing, says="required")
    r = api.post("/api/prompts", {"command": "BAD", "name": "", "variables": []})
    assert set(assert_invalid(r)) == {"command", "name", "content", "variables"}  # every problem at once
    assert listed(api) == []

    kept = make(api, **good)
    for change, field, says in bad:
        assert_invalid(api.patch(f"/api/prompts/{kept['id']}", {"content": "Changed {{x}}.", **change}), field,
                       says=says)
    assert listed(api) == [kept]
    assert make(api, name="Edge", command="a" * 32, content="c" * 20_000)["command"] == "a" * 32
    assert make(api, name="Twenty", command="twenty",
                content=" ".join(f"{{{{v{i}}}}}" for i in range(20)))["variables"] == [f"v{i}" for i in range(20)]


def test_variables_follow_the_shared_rule(api):
    for i, case in enumerate(CASES):
        p = make(api, name=f"Case {i}", command=f"case-{i}", content=case["content"])
        assert p["variables"] == case["variables"], case


def test_the_full_export_carries_prompts_and_an_import_brings_them_back(server, api, start_server):
    a = make(api, name="Translate", command="translate", content="Translate {{text}} into {{language}}.")
    b = make(api, name="Brief", command="brief", content="Answer briefly: <b>not markup</b> & {{q}}")
    chat = api.post("/api/chats", {"title": "A chat"}).body["id"]
    # One chat's own export carries only the chat.
    assert "prompts" not in export_json(api, chat)
    zipped = export_zip(api)
    doc = json.loads(zipped.read("numi-export.json"))
    assert doc["version"] == 2
    assert doc["prompts"] == [{k: p[k] for k in ("id", "name", "command", "content", "created_at", "updated_at")}
                              for p in (b, a)]

    other = start_server().api()
    mine = make(other, name="My translate", command="translate", content="My own words.")
    r = import_file(other, "numi-export.zip", api.get("/api/export").body)
    assert r.status == 201, r
    assert r.body["prompts"] == {"added": 1, "already": 0, "clashed": ["translate"]}
    assert len(r.body["chat_ids"]) == 1
    got = {p["command"]: p for p in listed(other)}
    assert got["translate"] == mine  # the prompt here is kept as it was
    brief = got["brief"]
    assert (brief["name"], brief["content"], brief["variables"]) == ("Brief", b["content"], ["q"])
    assert brief["created_at"] == b["created_at"] and brief["id"] != b["id"]
    # The same file again: nothing new, the prompt that came in is already here.
    r = import_file(other, "numi-export.zip", api.get("/api/export").body)
    assert r.status == 201 and r.body["prompts"] == {"added": 0, "already": 1, "clashed": ["translate"]}, r
    assert len(listed(other)) == 2

    # An export made before prompts existed (no list) imports as before; an answer says none came.
    older = export_json(api, chat)
    r = other.post("/api/import", older)
    assert r.status == 201 and r.body["prompts"] == {"added": 0, "already": 0, "clashed": []}, r

    # Prompts alone (an export with no chats) come in too.
    third = start_server().api()
    r = third.post("/api/import", {**doc, "chats": []})
    assert r.status == 201 and r.body["chat_ids"] == [] and r.body["prompts"]["added"] == 2, r
    assert commands(third) == ["brief", "translate"]


def test_a_bad_prompt_in_an_import_refuses_the_whole_file(api):
    chat = api.post("/api/chats", {"title": "Keep out"}).body["id"]
    doc = export_json(api, chat)
    api.delete(f"/api/chats/{chat}")
    before = api.get("/api/chats").body["items"]
    for prompts, where in [
        ([{"name": "x", "command": "Bad Command", "content": "text"}], "prompts[0].command"),
        ([{"name": "ok", "command": "ok", "content": "t"}, {"name": "", "command": "b", "content": "t"}],
         "prompts[1].name"),
        ([{"name": "x", "command": "x", "content": "c" * 20_001}], "prompts[0].content"),
        (["not an object"], "prompts[0]"),
    ]:
        r = api.post("/api/import", {**doc, "prompts": prompts})
        assert r.status == 422, r
        assert where in r.body["error"]["fields"] and "Nothing was imported" in r.body["error"]["message"], r
    r = api.post("/api/import", {**doc, "prompts": {"a": 1}})
    assert r.status == 422 and "not a list" in r.body["error"]["message"], r
    assert api.get("/api/chats").body["items"] == before and listed(api) == []


def test_a_backup_holds_the_prompts(server, api, start_server, tmp_path):
    p = make(api, name="Keep", command="keep", content="Keep {{this}}.")
    r = api.post("/api/backup", {"path": str(tmp_path / "b.db")})
    assert r.status == 201, r
    api.delete(f"/api/prompts/{p['id']}")
    # The backup, as a data dir's database, is the library as it was.
    data = tmp_path / "restored"
    data.mkdir()
    shutil.copyfile(tmp_path / "b.db", data / "numi.db")
    restored = start_server(data_dir=data).api()
    assert listed(restored) == [p]
