"""CONTRACT §1: the data dir and every folder in it 0700, every file 0600, whatever the umask.

The real server starts under umask 022 on a data dir an earlier run left readable; then a turn,
an upload, a backup and log lines each create files. What Numi writes into a chat's workspace
keeps the person's umask.
"""
from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from backend.server import write_private_json
from tests.conftest import Setup
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def not_private(root: Path) -> list[tuple[str, str]]:
    """Every path under root (root included) whose mode is not 0700 (folders) / 0600 (files)."""
    wrong = []
    for path in [root, *root.rglob("*")]:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            continue
        want = 0o700 if stat.S_ISDIR(st.st_mode) else 0o600
        if stat.S_IMODE(st.st_mode) != want:
            wrong.append((str(path.relative_to(root)), oct(stat.S_IMODE(st.st_mode))))
    return wrong


@pytest.fixture
def umask_022():
    old = os.umask(0o022)  # the server process inherits it
    yield
    os.umask(old)


def readable_data_dir(root: Path, outside: Path) -> None:
    """What an earlier version left: 0755 folders, 0644 files (and links out that must not be followed)."""
    root.mkdir(mode=0o755)
    with sqlite3.connect(root / "numi.db") as db:  # a real, empty database
        db.execute("PRAGMA user_version = 0")
    for folder in ("files/ab", "logs", "backups"):
        (root / folder).mkdir(parents=True, mode=0o755)
    (root / "files" / "ab" / ("ab" + "0" * 62)).write_bytes(b"an old attachment")
    (root / "logs" / "numi.log").write_text("an old log line\n")
    (root / "backups" / "numi-old.db").write_bytes(b"")
    (root / "notes.txt").write_text("left here by hand\n")
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (root / "link-out").symlink_to(outside)
    (root / "link-to-folder").symlink_to(outside.parent, target_is_directory=True)


def test_start_fixes_the_data_dir_and_new_files_are_private(umask_022, start_server, fake, tmp_path):
    (tmp_path / "elsewhere").mkdir(mode=0o755)
    outside = tmp_path / "elsewhere" / "outside.txt"
    outside.write_text("not Numi's")
    outside.chmod(0o644)
    (tmp_path / "elsewhere").chmod(0o755)
    data = tmp_path / "data"
    readable_data_dir(data, outside)
    setup = Setup(start_server(data_dir=data), fake)
    assert not_private(data) == []
    assert (mode(outside), mode(outside.parent)) == (0o644, 0o755)  # a link is never followed

    # A turn (WAL, -shm, catalog.toml rewritten by the provider and model setup), an upload,
    # a backup, and a warning in the log.
    chat = setup.chat(title="private")
    setup.fake.enqueue([S.text("Hello.")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hi")
    assert sock.until("turn_end")["status"] == "completed"
    assert setup.api.upload("a.bin", os.urandom(4096)).status == 201
    r = setup.api.post("/api/backup", {})
    assert r.status == 201, r
    refused = setup.api.request("GET", "/api/chats", headers={"Authorization": "", "Sec-Fetch-Site": "cross-site",
                                                               "Cookie": setup.server.session_cookie()})
    assert refused.status == 403  # logged as a warning
    made = {p.relative_to(data).as_posix() for p in data.rglob("*")}
    assert {"numi.db-wal", "numi.db-shm", "catalog.toml", "server.json", "logs/numi.log"} <= made, made
    assert Path(r.body["path"]).parent == data / "backups" and Path(r.body["path"]).exists()
    assert len(list((data / "files").rglob("*"))) > 3  # the new attachment, in a new folder
    assert "another web page" in (data / "logs" / "numi.log").read_text()
    assert not_private(data) == []


def test_workspace_files_keep_the_persons_umask(umask_022, start_server, fake, tmp_path):
    setup = Setup(start_server({"NUMI_TOOL_PLUGINS": "tests.tool_plugin"}), fake)
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    workspace = tmp_path / "ws"
    workspace.mkdir()
    chat = setup.chat(title="ws", workspace=str(workspace))
    for tool in ("write_file", "shell"):
        assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": tool, "policy": "allow"}).status == 200
    setup.fake.enqueue([S.tool_call(0, "w", "write_file", json.dumps({"path": "by-tool.txt", "content": "x"})),
                        S.tool_call(1, "s", "shell", json.dumps({"command": "mkdir sub && echo y > sub/by-shell"}))],
                       [S.text("done")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="write")
    assert sock.until("turn_end")["status"] == "completed"
    assert all(e["ok"] for e in sock.of("tool_end")), sock.of("tool_end")
    assert (mode(workspace / "by-tool.txt"), mode(workspace / "sub"), mode(workspace / "sub" / "by-shell")) == \
        (0o644, 0o755, 0o644)
    assert not_private(setup.server.data_dir) == []


def test_private_json_replaces_a_readable_leftover(tmp_path):
    target = tmp_path / "server.json"
    leftover = tmp_path / "server.json.tmp"  # a crash between write and rename
    leftover.write_text("old")
    leftover.chmod(0o644)
    write_private_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1} and mode(target) == 0o600


def test_a_data_dir_that_is_the_home_folder_is_left_as_it_is(tmp_path, monkeypatch):
    from backend.private_files import fix_modes

    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "tool").write_text("#!/bin/sh\n")
    (home / "bin" / "tool").chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    for data_dir in (home, tmp_path):
        assert fix_modes(data_dir) == 0
    assert mode(home / "bin" / "tool") == 0o755
    assert fix_modes(home / "bin") == 2  # a folder of its own is Numi's
    assert (mode(home / "bin"), mode(home / "bin" / "tool")) == (0o700, 0o600)
