"""POST /api/import: Numi's own export (lossless round trip), ChatGPT's, and refusing hostile files."""
import base64
import hashlib
import io
import json
import random
import stat
import zipfile

from tests.chat_samples import (
    NOTES,
    PICTURE,
    comparable,
    data_dir_files,
    export_json,
    export_zip,
    import_file,
    rich_chat,
)


def chat_ids(api) -> list[str]:
    return sorted(c["id"] for c in api.get("/api/chats?limit=200").body["items"])


def test_json_round_trip_is_lossless(setup):
    chat = rich_chat(setup)
    first = export_json(setup.api, chat)
    r = setup.api.post("/api/import", first)
    assert r.status == 201, r
    [new_id] = r.body["chat_ids"]
    assert new_id != chat and sorted([chat, new_id]) == chat_ids(setup.api)
    again = export_json(setup.api, new_id)
    assert comparable(again) == comparable(first)


def test_zip_round_trip_into_a_fresh_data_dir_carries_the_bytes(setup, start_server):
    rich_chat(setup)
    setup.chat(title="Empty one", params={"top_p": 0.3})
    r = setup.api.get("/api/export")
    first = json.loads(zipfile.ZipFile(io.BytesIO(r.body)).read("numi-export.json"))
    other = start_server()
    api = other.api()
    r = import_file(api, "numi-export.zip", r.body)
    assert r.status == 201, r
    assert len(r.body["chat_ids"]) == 2
    again = json.loads(export_zip(api).read("numi-export.json"))
    # The fresh catalog has no such model: the chat's model is left for the person to choose.
    for chat in first["chats"]:
        chat["model_id"] = None
    assert comparable(again) == comparable(first)
    msg = next(m for c in again["chats"] for m in c["messages"] if m["attachments"])
    got = {}
    for a in msg["attachments"]:
        files = api.get(f"/api/chats/{_chat_of(api, a)}/messages").body["items"][0]["attachments"]
        got = {f["name"]: api.get(f"/api/files/{f['id']}").body for f in files}
    assert got == {"picture.png": PICTURE, "notes.md": NOTES}


def _chat_of(api, _attachment) -> str:
    return next(c["id"] for c in api.get("/api/chats").body["items"] if c["title"].startswith("Plans"))


def test_a_json_export_file_uploaded_as_multipart_imports(setup, start_server):
    chat = rich_chat(setup)
    raw = json.dumps(export_json(setup.api, chat), indent=1).encode()
    other = start_server().api()
    r = import_file(other, "chat.json", raw)
    assert r.status == 201, r
    [new_id] = r.body["chat_ids"]
    msgs = other.get(f"/api/chats/{new_id}/messages").body["items"]
    pic = msgs[0]["attachments"][0]
    assert pic["mime"] == "image/png" and other.get(f"/api/files/{pic['id']}").body == PICTURE


def chatgpt_conversation():
    """A conversation as ChatGPT exports it: a tree; the person edited their first message."""
    def node(nid, parent, children, role=None, parts=None, t=None, **extra):
        message = None
        if role:
            content = extra.pop("content", {"content_type": "text", "parts": parts or []})
            message = {"id": nid, "author": {"role": role}, "create_time": t, "content": content,
                       "metadata": extra.pop("metadata", {}), "recipient": extra.pop("recipient", "all")}
        return nid, {"id": nid, "message": message, "parent": parent, "children": children}

    mapping = dict([
        node("root", None, ["sys"]),
        node("sys", "root", ["u1", "u1b"], "system", [""], metadata={"is_visually_hidden_from_conversation": True}),
        node("u1", "sys", ["a1"], "user", ["First try"], 1700000010.5),
        node("a1", "u1", [], "assistant", ["Old answer"], 1700000011),
        node("u1b", "sys", ["th"], "user", ["Edited question"], 1700000020.25),
        node("th", "u1b", ["code"], "assistant", None, 1700000021,
             content={"content_type": "thoughts", "thoughts": [{"summary": "s", "content": "Thinking hard."}]}),
        node("code", "th", ["out"], "assistant", None, 1700000022, recipient="python",
             content={"content_type": "code", "text": "print(1)"}),
        node("out", "code", ["a2"], "tool", None, 1700000023,
             content={"content_type": "execution_output", "text": "1"}),
        node("a2", "out", ["u3"], "assistant", ["The answer", {"asset_pointer": "file-x"}], 1700000024),
        node("u3", "a2", [], "user", ["Thanks"], 1700000030),
    ])
    return {"title": "From ChatGPT", "create_time": 1700000000.0, "update_time": 1700000030.0,
            "mapping": mapping, "current_node": "u3"}


def test_chatgpt_export_follows_the_current_branch(server, api):
    convs = [chatgpt_conversation()]
    r = api.post("/api/import", convs)
    assert r.status == 201, r
    [chat] = r.body["chat_ids"]
    info = api.get(f"/api/chats/{chat}").body
    assert info["title"] == "From ChatGPT" and info["created_at"] == "2023-11-14T22:13:20.000Z"
    msgs = api.get(f"/api/chats/{chat}/messages").body["items"]
    assert [(m["role"], m["content"]) for m in msgs] == [
        ("user", "Edited question"), ("assistant", "The answer"), ("user", "Thanks")]
    assert msgs[1]["reasoning"] == "Thinking hard." and msgs[0]["created_at"] == "2023-11-14T22:13:40.250Z"
    assert all(m["status"] == "complete" for m in msgs)
    # The same conversations.json inside ChatGPT's zip.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("chat.html", "<html></html>")
        zf.writestr("conversations.json", json.dumps(convs))
    r = import_file(api, "chatgpt-export.zip", buf.getvalue())
    assert r.status == 201, r
    assert len(chat_ids(api)) == 2


# -- refusing what is not an export, and hostile files -------------------------------------

def _zip(entries, *, symlink=None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return buf.getvalue()


def _doc(chats):
    return {"format": "numi-export", "version": 1, "chats": chats}


def _chat_with_file(data: bytes, sha: str | None = None, size: int | None = None):
    return {"title": "t", "created_at": "2026-01-01T00:00:00.000Z", "messages": [{
        "role": "user", "content": "see file", "status": "complete", "created_at": "2026-01-01T00:00:01.000Z",
        "attachments": [{"name": "a.txt", "mime": "text/plain", "size": len(data) if size is None else size,
                         "sha256": sha or hashlib.sha256(data).hexdigest()}]}]}


def _lying_size_zip() -> bytes:
    """A valid zip whose one entry declares 10 bytes but inflates to 100 000."""
    data = bytearray(_zip([("numi-export.json", b" " * 100_000)]))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).infolist()[0]
    real = info.file_size.to_bytes(4, "little")
    fake = (10).to_bytes(4, "little")
    # The size sits in the local header (offset 22) and the central directory entry (offset 24).
    data[info.header_offset + 22:info.header_offset + 26] = fake
    central = bytes(data).rindex(b"PK\x01\x02")
    assert data[central + 24:central + 28] == real
    data[central + 24:central + 28] = fake
    return bytes(data)


def test_hostile_and_malformed_files_are_refused_and_change_nothing(server, api):
    good = b"good bytes " * 10
    bad = b"tampered bytes"
    cases = {
        "not json": ("x.json", b"{not json", 422, "neither a zip nor valid JSON"),
        "other json": ("x.json", b'{"hello": 1}', 422, "not an export Numi knows"),
        "other format": ("x.json", b'{"format": "other-app", "version": 1}', 422, "not a Numi export"),
        "newer version": ("x.json", json.dumps({**_doc([]), "version": 3}).encode(), 422, "newer Numi"),
        "no chats": ("x.json", json.dumps(_doc([])).encode(), 422, "no chats"),
        "bad role": ("x.json", json.dumps(_doc([{"title": "t", "created_at": "2026-01-01T00:00:00Z",
                                                 "messages": [{"role": "wizard", "created_at": "2026-01-01T00:00:00Z"}]}])
                                          ).encode(), 422, "chats[0].messages[0].role"),
        "too many tools off": ("x.json", json.dumps(_doc([{"title": "t", "created_at": "2026-01-01T00:00:00Z",
                                                           "tools_off": [f"t{i}" for i in range(501)], "messages": []}])
                                                    ).encode(), 422, "chats[0].tools_off"),
        "a tool off that is not a name": ("x.json", json.dumps(_doc([{"title": "t", "created_at": "2026-01-01T00:00:00Z",
                                                                      "tools_off": [""], "messages": []}])
                                                               ).encode(), 422, "chats[0].tools_off"),
        "dot-dot entry": ("x.zip", _zip([("numi-export.json", "{}"), ("../evil", "x")]), 422, "outside"),
        "absolute entry": ("x.zip", _zip([("/tmp/evil", "x")]), 422, "outside"),
        "backslash entry": ("x.zip", _zip([("..\\evil", "x")]), 422, "outside"),
        "symlink entry": ("x.zip", _zip([("numi-export.json", "{}")], symlink="files/link"), 422, "symbolic link"),
        "zip bomb": ("x.zip", _zip([("numi-export.json", b"\0" * (20 << 20))]), 422, "zip bomb"),
        "lying sizes": ("x.zip", _lying_size_zip(), 422, "numi-export.json"),
        "too many entries": ("x.zip", _zip([(f"e{i}", b"") for i in range(10_001)]), 422, "at most 10000"),
        "no document": ("x.zip", _zip([("readme.txt", "hi")]), 422, "neither numi-export.json"),
        "not a zip": ("x.zip", b"PK\x03\x04 garbage", 422, "cannot be read"),
        # The first file is fine and new; the second's bytes are not what its sha256 says:
        # neither is kept, and no chat is made.
        "sha mismatch": ("x.zip", _zip([
            ("numi-export.json", json.dumps(_doc([_chat_with_file(good),
                                                  _chat_with_file(bad, sha=hashlib.sha256(b"x").hexdigest())]))),
            (f"files/{hashlib.sha256(good).hexdigest()}", good),
            (f"files/{hashlib.sha256(b'x').hexdigest()}", bad)]), 422, "do not match"),
        "size mismatch": ("x.json", json.dumps(_doc([_with_data(_chat_with_file(good, size=3),
                                                                base64.b64encode(good).decode())])).encode(),
                          422, "do not match"),
        "missing bytes": ("x.json", json.dumps(_doc([_chat_with_file(good)])).encode(), 422, "not in the export"),
        "bad base64": ("x.json", json.dumps(_doc([_with_data(_chat_with_file(good), "%%%")])).encode(), 422, "base64"),
    }
    for label, (name, data, status, words) in cases.items():
        r = import_file(api, name, data)
        assert r.status == status, (label, r)
        assert words in r.body["error"]["message"] + json.dumps(r.body["error"].get("fields", {})), (label, r)
        assert chat_ids(api) == [] and data_dir_files(server) == [], label
    # The same refusals for a JSON body.
    r = api.post("/api/import", {"format": "numi-export", "version": "one", "chats": []})
    assert r.status == 422 and "version" in r.body["error"]["message"]
    r = api.post("/api/import", _doc([_with_data(_chat_with_file(good), base64.b64encode(bad).decode())]))
    assert r.status == 422 and "do not match" in r.body["error"]["message"]
    assert chat_ids(api) == [] and data_dir_files(server) == []
    assert api.get("/api/folders").status == 200


def _with_data(chat, data):
    chat["messages"][0]["attachments"][0]["data"] = data
    return chat


def test_an_import_over_the_limit_is_413_and_changes_nothing(start_server):
    server = start_server({"NUMI_MAX_IMPORT_MB": "0.01"})  # about 10 KB
    api = server.api()
    big = json.dumps(_doc([{"title": "t", "created_at": "2026-01-01T00:00:00Z",
                            "messages": [{"role": "user", "content": "x" * 20_000,
                                          "created_at": "2026-01-01T00:00:00Z"}]}])).encode()
    for r in (api.request("POST", "/api/import", raw=big), import_file(api, "big.json", big)):
        assert r.status == 413, r
        assert "NUMI_MAX_IMPORT_MB" in r.body["error"]["message"]
    assert chat_ids(api) == [] and data_dir_files(server) == []
    small = json.dumps(_doc([{"title": "small", "created_at": "2026-01-01T00:00:00Z", "messages": []}])).encode()
    assert import_file(api, "small.json", small).status == 201


# -- real-size zips: binary bytes stream through the multipart reader -----------------------------

def _zip_with_files(sizes: list[int], seed: int) -> tuple[bytes, dict]:
    """A Numi export zip with one chat whose message carries random (incompressible) files."""
    rnd = random.Random(seed)
    blobs = {f"file{i}.bin": rnd.randbytes(size) for i, size in enumerate(sizes)}
    chat = {"title": "With files", "created_at": "2026-01-01T00:00:00.000Z", "messages": [{
        "role": "user", "content": "see files", "created_at": "2026-01-01T00:00:01.000Z",
        "attachments": [{"name": name, "mime": "application/octet-stream", "size": len(data),
                         "sha256": hashlib.sha256(data).hexdigest()} for name, data in blobs.items()]}]}
    entries = [("numi-export.json", json.dumps(_doc([chat])))]
    entries += [(f"files/{hashlib.sha256(d).hexdigest()}", d) for d in blobs.values()]
    return _zip(entries), blobs


def test_zip_imports_of_real_sizes(server, api):
    for sizes, seed in (([1 << 20], 1), ([4 << 20, 4 << 20, 4 << 20], 2)):
        data, blobs = _zip_with_files(sizes, seed)
        assert len(data) > sum(sizes)  # random bytes do not deflate: the upload is that big
        r = import_file(api, "numi-export.zip", data)
        assert r.status == 201, r
        [chat] = r.body["chat_ids"]
        [msg] = api.get(f"/api/chats/{chat}/messages").body["items"]
        got = {f["name"]: api.get(f"/api/files/{f['id']}").body for f in msg["attachments"]}
        assert got == blobs
    assert [p for p in data_dir_files(server) if p.startswith(".tmp")] == []
