"""Backups: POST /api/backup and `numi backup` (also mid-stream), `numi restore`, the daily rotation."""
import hashlib
import os
import sqlite3
import time

import pytest

from tests.fakeprovider import script as S
from tests.test_cli import run_cli


def titles_in(db_path) -> list[str]:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return sorted(r[0] for r in conn.execute("SELECT title FROM chat"))
    finally:
        conn.close()


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_backup_now_writes_a_consistent_copy_in_the_default_place(server, api):
    api.post("/api/chats", {"title": "Keep me"})
    r = api.post("/api/backup")
    assert r.status == 201, r
    path = server.data_dir / "backups" / os.path.basename(r.body["path"])
    assert r.body["path"] == str(path) and path.name.startswith("numi-") and "auto" not in path.name
    assert r.body["size"] == path.stat().st_size and r.body["created_at"].endswith("Z")
    assert titles_in(path) == ["Keep me"]
    assert not os.path.exists(str(path) + "-wal")  # one self-contained file


def test_backup_path_must_be_absolute_in_a_writable_folder(server, api, tmp_path):
    cases = [("relative.db", "absolute"), (str(tmp_path / "no" / "such" / "x.db"), "does not exist"),
             (str(tmp_path), "already exists"), (42, "absolute path")]
    for path, words in cases:
        r = api.post("/api/backup", {"path": path})
        assert r.status == 422 and words in r.body["error"]["fields"]["path"], (path, r)
    r = api.post("/api/backup", {"path": str(tmp_path / "b.db"), "extra": 1})
    assert r.status == 422 and "extra" in r.body["error"]["fields"]
    assert not (tmp_path / "b.db").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_backup_into_a_read_only_folder_is_refused(api, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o500)
    r = api.post("/api/backup", {"path": str(folder / "b.db")})
    assert r.status == 422 and "cannot write" in r.body["error"]["fields"]["path"]


def test_backup_while_a_reply_streams_is_consistent(setup, tmp_path):
    chat = setup.chat(title="Streaming")
    setup.fake.enqueue([S.text("partial words "), S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="talk a lot")
    sock.until("content")
    setup.fake.wait_hanging()
    dest = tmp_path / "mid-stream.db"
    r = setup.api.post("/api/backup", {"path": str(dest)})
    assert r.status == 201, r
    assert titles_in(dest) == ["Streaming"]
    conn = sqlite3.connect(dest)
    roles = [row[0] for row in conn.execute("SELECT role FROM message ORDER BY id")]
    conn.close()
    assert roles[0] == "user"  # committed before the model was called
    sock.send(type="stop")
    assert sock.until("turn_end")["status"] == "cancelled"
    # The CLI asks the running server for the copy.
    out = run_cli("backup", str(tmp_path / "cli.db"), "--data-dir", str(setup.server.data_dir))
    assert out.returncode == 0 and "by the running Numi" in out.stdout, out
    assert titles_in(tmp_path / "cli.db") == ["Streaming"]
    out = run_cli("--data-dir", str(setup.server.data_dir), "backup", str(tmp_path / "cli.db"))
    assert out.returncode == 2 and "already exists" in out.stderr


def test_restore_refuses_while_numi_runs(server, tmp_path):
    backup = tmp_path / "b.db"
    assert server.api().post("/api/backup", {"path": str(backup)}).status == 201
    before = sha(server.data_dir / "numi.db")
    out = run_cli("restore", str(backup), "--data-dir", str(server.data_dir))
    assert out.returncode == 2 and "Quit it first" in out.stderr
    assert sha(server.data_dir / "numi.db") == before


def test_cli_backup_and_restore_with_numi_stopped(server, tmp_path):
    data = server.data_dir
    server.api().post("/api/chats", {"title": "Before"})
    server.terminate()
    out = run_cli("backup", str(tmp_path / "b.db"), "--data-dir", str(data))
    assert out.returncode == 0 and "Backed up to" in out.stdout and "running" not in out.stdout, out
    server.start()
    server.api().post("/api/chats", {"title": "After"})
    server.terminate()
    out = run_cli("restore", str(tmp_path / "b.db"), "--data-dir", str(data))
    assert out.returncode == 0, out
    [kept] = [p for p in data.iterdir() if p.name.startswith("numi.db.before-restore-")]
    assert titles_in(kept) == ["After", "Before"]
    assert titles_in(data / "numi.db") == ["Before"]
    server.start()
    assert [c["title"] for c in server.api().get("/api/chats").body["items"]] == ["Before"]


def test_restore_refuses_a_damaged_or_foreign_file(server, tmp_path):
    good = tmp_path / "good.db"
    for i in range(30):  # enough pages that damage lands inside the tables
        server.api().post("/api/chats", {"title": f"chat {i} " + "x" * 200})
    assert server.api().post("/api/backup", {"path": str(good)}).status == 201
    server.terminate()
    raw = good.read_bytes()
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(raw[: len(raw) // 2 + 100])
    garbled = tmp_path / "garbled.db"
    garbled.write_bytes(raw[:4096] + bytes(b ^ 0x5A for b in raw[4096:8192]) + raw[8192:])
    header = tmp_path / "header.db"
    header.write_bytes(b"not sqlite at all" + raw[17:])
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    newer = tmp_path / "newer.db"
    newer.write_bytes(raw)
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    before = sha(server.data_dir / "numi.db")
    cases = [(truncated, ""), (garbled, ""), (header, "not a readable SQLite database"),
             (foreign, "not one of Numi's"), (newer, "newer Numi"), (tmp_path / "missing.db", "no file")]
    for path, words in cases:
        out = run_cli("restore", str(path), "--data-dir", str(server.data_dir))
        assert out.returncode == 2 and out.stderr.startswith("Not restored:") and words in out.stderr, (path, out)
    assert sha(server.data_dir / "numi.db") == before
    assert not [p for p in server.data_dir.iterdir() if "before-restore" in p.name]


def test_daily_backups_rotate_to_the_newest_seven(start_server, tmp_path):
    data = tmp_path / "rot"
    folder = data / "backups"
    folder.mkdir(parents=True)
    old = [folder / f"numi-auto-2020010{d}-030000.db" for d in range(1, 9)]
    for path in old:
        path.write_bytes(b"an old backup")
    manual = folder / "numi-20200101-000000.db"
    manual.write_bytes(b"the person's own")
    start_server(data_dir=data)
    # The start-up backup runs on its own thread: wait (bounded) for its result on disk.
    deadline = time.monotonic() + 20
    while True:
        autos = sorted(p.name for p in folder.iterdir() if p.name.startswith("numi-auto-"))
        if len(autos) == 7 and not autos[-1].startswith("numi-auto-2020"):
            break
        assert time.monotonic() < deadline, autos
        time.sleep(0.05)
    assert autos[:6] == [p.name for p in old[2:]]  # the two oldest went
    assert manual.exists()
    titles_in(folder / autos[-1])


def test_no_automatic_backup_when_disabled(start_server, tmp_path):
    server = start_server({"NUMI_AUTO_BACKUP": "0"})
    r = server.api().post("/api/backup")
    assert r.status == 201
    assert [p.name for p in (server.data_dir / "backups").iterdir()] == [os.path.basename(r.body["path"])]
