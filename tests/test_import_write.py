"""Writing an import in short transactions: hidden until one last small one shows it, and gone
again whatever stops it (a failure midway, the trash emptied meanwhile, a crash before the end)."""
from __future__ import annotations

import base64
import hashlib

import peewee
import pytest

from backend.store import housekeeping, paced
from backend.store import import_read as rd
from backend.store.db import db, open_database
from backend.store.files import FileStore
from backend.store.import_write import write_import
from backend.store.models import Chat, File, Message

BYTES = b"attached bytes\n"


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(paced, "HOLD_S", 0)  # a transaction per step, so every step can be watched
    open_database(str(tmp_path / "numi.db"))
    with db.connection_context():
        Chat.create(title="Mine")
        yield FileStore(tmp_path / "files")
    db.close()


def parsed(chats: int = 3, per_chat: int = 600) -> list[rd.ParsedChat]:
    """Chats long enough to take several transactions; the first message carries a new file."""
    attachment = {"name": "a.txt", "size": len(BYTES), "sha256": hashlib.sha256(BYTES).hexdigest(),
                  "data": base64.b64encode(BYTES).decode()}
    doc = {"format": "numi-export", "version": 1, "chats": [
        {"title": f"Imported {c}", "created_at": "2026-01-01T00:00:00Z", "folder": "From elsewhere", "messages": [
            {"role": "user", "content": f"message {i} " + "text " * 20, "created_at": "2026-01-01T00:00:01Z",
             "attachments": [attachment] if i == 0 else []} for i in range(per_chat)]}
        for c in range(chats)]}
    return rd.parse_numi(doc)


def blobs(store) -> list:
    return [p for p in store.root.glob("??/*")] if store.root.is_dir() else []


def nothing_imported(store) -> None:
    assert [c.title for c in Chat.select()] == ["Mine"]  # hidden rows included
    assert Message.select().count() == 0 and File.select().count() == 0
    assert blobs(store) == [] and list(store.tmp.glob("*")) == []


def test_the_import_is_hidden_until_its_last_transaction(store, monkeypatch):
    seen = []

    def pause(seconds):  # between two of the import's transactions: what would anyone see now?
        seen.append((Chat.select().where(Chat.deleted_at.is_null()).count(),
                     Chat.select().where(Chat.import_id.is_null(False)).count()))

    monkeypatch.setattr(paced.time, "sleep", pause)
    ids = write_import(store, parsed())
    assert len(seen) >= 3 * 4 and all(visible == 1 for visible, _hidden in seen), seen
    assert seen[-1][1] == 3  # all three were written, hidden
    shown = list(Chat.select().where(Chat.id.in_(ids)))
    assert all(c.deleted_at is None and not c.temporary and c.import_id is None for c in shown)
    assert {c.folder.name for c in shown} == {"From elsewhere"}
    assert Message.select().count() == 3 * 600 and File.select().count() == 1 and len(blobs(store)) == 1


def test_a_write_that_fails_midway_leaves_nothing(store):
    chats = parsed()
    chats[2].messages[500]["role"] = None  # the database refuses it, long after the first commits
    with pytest.raises(peewee.IntegrityError):
        write_import(store, chats)
    nothing_imported(store)


def test_chats_removed_while_hidden_refuse_the_whole_import(store, monkeypatch):
    def empty_the_trash(seconds):  # as DELETE /api/trash does, between two transactions
        housekeeping.purge_chats([c.id for c in Chat.select().where(Chat.deleted_at.is_null(False))])

    monkeypatch.setattr(paced.time, "sleep", empty_the_trash)
    with pytest.raises(rd.ImportRefused) as refused:
        write_import(store, parsed())
    assert refused.value.status == 409 and "Nothing was imported" in refused.value.message
    nothing_imported(store)


def test_the_next_start_removes_what_an_unfinished_import_left(store):
    hidden = Chat.create(title="Half", import_id="abc", deleted_at=1.0, temporary=True)
    Message.insert_many([{"chat": hidden.id, "role": "user", "content": f"m{i}"} for i in range(1200)]).execute()
    housekeeping.at_start()
    assert [c.title for c in Chat.select()] == ["Mine"] and Message.select().count() == 0
