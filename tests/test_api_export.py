"""GET /api/chats/{id}/export (json, md) and GET /api/export (the zip), against the real server."""
import base64
import hashlib
import json

from backend.store.export_format import to_markdown
from tests.chat_samples import NOTES, PICTURE, export_json, export_zip, rich_chat


def test_json_export_carries_the_whole_chat(setup):
    chat = rich_chat(setup)
    r = setup.api.get(f"/api/chats/{chat}/export?format=json")
    assert r.status == 200
    assert r.headers["Content-Type"].startswith("application/json")
    disposition = r.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="Plans-unicode-x-' + chat + '.json"')
    doc = r.body
    assert (doc["format"], doc["version"]) == ("numi-export", 2) and doc["exported_at"].endswith("Z")
    [c] = doc["chats"]
    assert c["id"] == chat and c["title"] == "Plans: ünïcode / ../<x>"
    assert c["system_prompt"] == "Be brief." and c["params"] == {"temperature": 0.5}
    assert c["model_id"] == setup.model["id"] and c["created_at"].endswith("Z")
    msgs = c["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]
    # One branch: each message under the one before it, the last one active.
    ids = [m["id"] for m in msgs]
    assert [m["parent_id"] for m in msgs] == [None] + ids[:-1] and c["active_leaf_id"] == ids[-1]
    user, asks, tool, answer = msgs
    assert user["content"] == "Shout abc, please." and user["status"] == "complete"
    assert [(a["name"], a["size"]) for a in user["attachments"]] == [("picture.png", len(PICTURE)),
                                                                      ("notes.md", len(NOTES))]
    for a, data in zip(user["attachments"], (PICTURE, NOTES)):
        assert base64.b64decode(a["data"]) == data and a["sha256"] == hashlib.sha256(data).hexdigest()
    assert asks["reasoning"] == "Let me shout it."
    assert asks["tool_calls"] == [{"id": "call_a", "name": "upper", "arguments": '{"text": "abc"}'}]
    assert asks["model_id"] == setup.model["id"] and asks["usage"]["input_tokens"] == 5
    assert (tool["tool_call_id"], tool["content"], tool["tool_error"]) == ("call_a", "ABC", False)
    assert answer["content"] == "Loud: ABC" and answer["reasoning"] == "Done thinking."
    assert all(m["created_at"].endswith("Z") and m["error"] is None for m in msgs)
    assert "request_id" not in user and "chat_id" not in user


def test_markdown_export_is_readable(setup):
    chat = rich_chat(setup)
    r = setup.api.get(f"/api/chats/{chat}/export?format=md")
    assert r.status == 200 and r.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert r.headers["Content-Disposition"].startswith('attachment; filename="Plans-unicode-x-')
    md = r.body.decode()
    assert md.startswith("# Plans: ünïcode / ../<x>\n")
    assert "## You · " in md and "## Tool result · " in md
    # The model by its catalog label, in the chat's line and heading each reply it wrote.
    assert "model Fake — exported from Numi" in md and setup.model["id"] not in md
    assert md.count("\n## Fake · ") == 2 and "## Assistant" not in md
    assert "<details><summary>Reasoning</summary>\n\nLet me shout it.\n\n</details>" in md
    assert "**Tool call** `upper` (`call_a`)\n\n```json\n{\"text\": \"abc\"}\n```" in md
    assert "- Attachment: picture.png (image/png" in md and "Loud: ABC" in md


def test_markdown_export_lists_sources_as_plain_text():
    chat = {"title": "t", "created_at": "2026-12-01T10:00:00Z", "active_leaf_id": 1, "messages": [
        {"id": 1, "parent_id": None, "role": "assistant", "content": "Said [1][2][3].", "status": "complete",
         "created_at": "2026-12-01T10:00:00Z", "citation_sources": [
             {"n": 1, "title": "**Bold** <img src=x> [link](javascript:x)", "url": "https://a.example/p?q=1"},
             {"n": 2, "title": "", "url": "javascript:alert(1)"},
             {"n": 3, "title": "Spaced\n  out", "url": "https://b.example/has space"},
             {"title": "no number"}, "junk"]}]}
    md = to_markdown(chat)
    assert ("**Sources**\n\n"
            "- [1] \\*\\*Bold\\*\\* \\<img src=x\\> \\[link\\]\\(javascript:x\\) — <https://a.example/p?q=1>\n"
            "- [2] Source 2\n"
            "- [3] Spaced out\n") in md
    assert "no number" not in md and "javascript:alert" not in md


def test_markdown_export_names_a_removed_model_by_its_id(setup):
    chat = rich_chat(setup)
    model_id = setup.model["id"]
    assert setup.api.delete(f"/api/models/{model_id}").status == 204
    md = setup.api.get(f"/api/chats/{chat}/export?format=md").body.decode()
    assert md.count(f"\n## `{model_id}` · ") == 2
    zipped = export_zip(setup.api).read(f"chats/Plans-unicode-x-{chat}.md").decode()
    assert zipped == md


def test_export_refuses_bad_format_and_unknown_or_deleted_chats(setup):
    chat = setup.chat(title="x")
    r = setup.api.get(f"/api/chats/{chat}/export?format=xml")
    assert r.status == 422 and "format" in r.body["error"]["fields"]
    assert setup.api.get("/api/chats/c_nope/export").status == 404
    assert setup.api.delete(f"/api/chats/{chat}").status == 204
    assert setup.api.get(f"/api/chats/{chat}/export?format=md").status == 404


def test_bulk_zip_has_every_saved_chat_markdown_and_files(setup):
    rich = rich_chat(setup)
    plain = setup.chat(title="Second")
    temporary = setup.chat(title="Temp", temporary=True)
    deleted = setup.chat(title="Gone")
    setup.api.delete(f"/api/chats/{deleted}")
    zf = export_zip(setup.api)
    names = set(zf.namelist())
    doc = json.loads(zf.read("numi-export.json"))
    assert (doc["format"], doc["version"]) == ("numi-export", 2)
    assert sorted(c["id"] for c in doc["chats"]) == sorted([rich, plain])
    assert f"chats/Plans-unicode-x-{rich}.md" in names and f"chats/Second-{plain}.md" in names
    assert not any(temporary in n or deleted in n for n in names)
    for data in (PICTURE, NOTES):
        assert zf.read(f"files/{hashlib.sha256(data).hexdigest()}") == data
    # In the zip the bytes travel beside the JSON, once each, not inline.
    attachments = [a for c in doc["chats"] for m in c["messages"] for a in m["attachments"]]
    assert attachments and all("data" not in a for a in attachments)
    assert all(n == "numi-export.json" or n.startswith(("chats/", "files/")) for n in names)


def test_no_key_or_secret_is_ever_exported(setup):
    key = "sk-" + "live-SECRET-7c1f0e2d9b"  # built, so no key-like literal sits in the tree
    assert setup.api.put(f"/api/providers/{setup.provider['id']}/key", {"api_key": key}).status == 204
    chat = rich_chat(setup)
    blobs = [setup.api.get(f"/api/chats/{chat}/export?format={f}").body for f in ("md",)]
    blobs.append(json.dumps(export_json(setup.api, chat)).encode())
    zf = export_zip(setup.api)
    blobs += [zf.read(n) for n in zf.namelist()]
    blobs.append(setup.api.get("/api/export").body)
    for blob in blobs:
        for secret in (key.encode(), b"sk-test-not-real", setup.server.token.encode()):
            assert secret not in blob
