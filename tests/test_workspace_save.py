"""The person's "Save to workspace" (backend/api/workspace_files.py) over the real server: a file is
written inside the chat's workspace and nowhere else, by the file tools' own confinement; replacing
one asks first; every refusal is a sentence and writes nothing."""
from __future__ import annotations

import os

import pytest


@pytest.fixture
def ws(setup, tmp_path):
    setup.workspace = tmp_path / "ws"
    setup.workspace.mkdir()
    setup.outside = tmp_path / "outside.txt"
    setup.chat_id = setup.chat(title="save")
    r = setup.api.patch(f"/api/chats/{setup.chat_id}", {"workspace": str(setup.workspace)})
    assert r.status == 200, r
    return setup


def save(setup, body, chat_id=None):
    return setup.api.post(f"/api/chats/{chat_id or setup.chat_id}/workspace/files", body)


def test_a_text_is_written_inside_the_workspace_and_replacing_it_asks_first(ws):
    r = save(ws, {"path": "src/fib.py", "content": "def fib(n):\n    return n\n"})
    assert r.status == 200, r
    assert r.body == {"path": "src/fib.py", "created": True, "size": 25}
    target = ws.workspace / "src" / "fib.py"
    assert target.read_text() == "def fib(n):\n    return n\n"

    again = save(ws, {"path": "src/fib.py", "content": "changed"})
    assert again.status == 409 and again.body["error"]["code"] == "exists", again
    assert again.body["error"]["message"] == "src/fib.py already exists in the workspace. Replace it, or save " \
                                             "under another name."
    assert target.read_text() == "def fib(n):\n    return n\n"  # nothing written

    replaced = save(ws, {"path": "src/fib.py", "content": "changed", "overwrite": True})
    assert replaced.status == 200 and replaced.body["created"] is False, replaced
    assert target.read_text() == "changed"


def test_paths_outside_the_workspace_or_protected_are_refused_and_nothing_is_written(ws, tmp_path):
    (ws.workspace / ".git").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (ws.workspace / "out").symlink_to(tmp_path / "elsewhere")
    cases = {"../outside.txt": "contains '..'", str(ws.outside): "is absolute", "out/x.txt": "symbolic link",
             ".git/config": "is protected", ".envrc": "is protected"}
    for path, words in cases.items():
        r = save(ws, {"path": path, "content": "x"})
        assert r.status == 422 and words in r.body["error"]["fields"]["path"], (path, r.body)
        assert words in r.body["error"]["message"]
    assert not ws.outside.exists()
    assert not list((tmp_path / "elsewhere").iterdir())
    assert sorted(os.listdir(ws.workspace)) == [".git", "out"]
    assert not list((ws.workspace / ".git").iterdir())


def test_bad_bodies_and_chats_without_a_workspace_are_refused(ws):
    for body, field in (({"content": "x"}, "path"), ({"path": "a.txt"}, "content"), ({"path": "", "content": "x"}, "path"),
                        ({"path": "a.txt", "content": 3}, "content"), ({"path": "a.txt", "content": "x", "overwrite": "yes"},
                                                                       "overwrite"),
                        ({"path": "a.txt", "content": "x", "mode": 1}, "mode")):
        r = save(ws, body)
        assert r.status == 422 and field in r.body["error"]["fields"], (body, r.body)
    big = save(ws, {"path": "big.txt", "content": "é" * (1024 * 1024 + 1)})  # 2 MB + 2 bytes of UTF-8
    assert big.status == 422 and "over the 2.0 MB limit" in big.body["error"]["message"], big.body
    assert os.listdir(ws.workspace) == []

    bare = ws.chat(title="no workspace")
    r = save(ws, {"path": "a.txt", "content": "x"}, chat_id=bare)
    assert r.status == 409 and r.body["error"]["code"] == "no_workspace", r
    assert r.body["error"]["message"] == "This chat has no workspace folder. Choose one in Chat settings, then save again."
    r = save(ws, {"path": "a.txt", "content": "x"}, chat_id="c_0000000000000000")
    assert r.status == 404, r

    ws.workspace.rmdir()
    r = save(ws, {"path": "a.txt", "content": "x"})
    assert r.status == 409 and r.body["error"]["code"] == "workspace_missing", r
