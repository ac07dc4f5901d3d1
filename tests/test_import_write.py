"""Writing an import in short transactions: hidden until one last small one shows it, and gone
again whatever stops it (a failure midway, the trash emptied meanwhile, a crash before the end)."""
from __future__ import annotations

import base64
import hashlib

import peewee
import pytest

from backend.store import history, housekeeping, lines, paced
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
    ids = write_import(store, parsed()).created
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


def test_rows_written_meanwhile_never_take_the_ids_set_aside_for_the_import(store, monkeypatch):
    mine = Chat.get(Chat.title == "Mine")
    meanwhile = []

    def someone_writes(seconds):  # a reply saved between two of the import's transactions
        meanwhile.append(Message.create(chat=mine, role="assistant", content="saved meanwhile").id)

    monkeypatch.setattr(paced.time, "sleep", someone_writes)
    ids = write_import(store, parsed(chats=2, per_chat=450)).created
    assert meanwhile
    for chat_id in ids:
        rows = list(Message.select().where(Message.chat == chat_id).order_by(Message.id))
        assert [r.content.split()[1] for r in rows] == [str(i) for i in range(450)]
        # Written whole: each under the one before it, which remembers it as its active child.
        assert [r.parent_id for r in rows] == [None] + [r.id for r in rows[:-1]]
        assert [r.active_child_id for r in rows] == [r.id for r in rows[1:]] + [None]
        assert [r.depth for r in rows] == list(range(450))
        assert Chat.get_by_id(chat_id).active_leaf_id == rows[-1].id
    assert Message.select().where(Message.chat == mine).count() == len(meanwhile)


def _tree_doc(extra: list[dict] | None = None, leaf: int = 6) -> dict:
    """One chat: 1 → 2 → 3 and 1 → 4 (a version) → 5, 2 → 6 (another); a message listed
    before its parent (7 under 8, as a queued message is exported) hangs under 3."""
    def m(i, parent, role="user"):
        return {"id": i, "parent_id": parent, "role": role, "content": f"m{i}", "created_at": "2026-01-01T00:00:01Z"}
    msgs = [m(1, None), m(2, 1, "assistant"), m(3, 2), m(4, 1, "assistant"), m(5, 4), m(6, 2),
            m(7, 8, "assistant"), m(8, 3, "assistant")] + (extra or [])
    return {"format": "numi-export", "version": 2, "chats": [
        {"id": "c_src", "title": "Tree", "created_at": "2026-01-01T00:00:00Z", "active_leaf_id": leaf,
         "messages": msgs}]}


def _walks_agree(chat_id: str) -> None:
    """The line walks (backend/store/lines.py) give what plain parent and active-child walks give."""
    rows = {m.id: m for m in Message.select().where(Message.chat == chat_id)}
    leaf = history.active_leaf(chat_id)
    naive, at = [], leaf
    while at is not None:
        naive.append(at)
        at = rows[at].parent_id
    assert history.path_ids(leaf) == naive[::-1]
    for row_id in rows:
        below = row_id
        while rows[below].active_child_id is not None:
            below = rows[below].active_child_id
        assert lines.leaf_under(row_id) == below


def test_a_tree_is_written_whole_with_its_lines(store):
    [chat_id] = write_import(store, rd.parse_numi(_tree_doc())).created
    text = {m.id: m.content for m in Message.select()}
    assert [text[i] for i in history.path_ids(history.active_leaf(chat_id))] == ["m1", "m2", "m6"]
    _walks_agree(chat_id)
    before = {m.id: (m.line_id, m.line_exit) for m in Message.select()}
    lines.relink(chat_id)  # what a bulk relink draws is what was written
    assert {m.id: (m.line_id, m.line_exit) for m in Message.select()} == before
    # The same chat again, grown under a leaf of the active branch and under an older version:
    # the active branch follows on; the walks still hold.
    more = [{"id": 9, "parent_id": 6, "role": "assistant", "content": "m9", "created_at": "2026-01-01T00:00:02Z"},
            {"id": 10, "parent_id": 4, "role": "user", "content": "m10", "created_at": "2026-01-01T00:00:02Z"}]
    outcome = write_import(store, rd.parse_numi(_tree_doc(more, leaf=9)))
    assert (outcome.created, outcome.already, outcome.updated) == ([], 1, [chat_id])
    assert outcome.switch == {chat_id: Message.get(Message.content == "m9").id}
    history.switch(chat_id, outcome.switch[chat_id])
    _walks_agree(chat_id)
    assert [text.get(i) or "m9" for i in history.path_ids(history.active_leaf(chat_id))] == ["m1", "m2", "m6", "m9"]
    history.switch(chat_id, Message.get(Message.content == "m4").id)
    _walks_agree(chat_id)
    assert history.leaf_under(Message.get(Message.content == "m4").id) == Message.get(Message.content == "m5").id


def test_a_chat_purged_while_new_messages_for_it_are_written_refuses_the_import(store, monkeypatch):
    [chat_id] = write_import(store, rd.parse_numi(_tree_doc())).created
    count = Message.select().count()

    def purge_it(seconds):  # the person empties the trash with the chat in it, mid-import
        housekeeping.purge_chats([chat_id])

    monkeypatch.setattr(paced.time, "sleep", purge_it)
    grown = _tree_doc([{"id": 9 + i, "parent_id": 6, "role": "user", "content": f"n{i}",
                        "created_at": "2026-01-01T00:00:02Z"} for i in range(500)])
    with pytest.raises(rd.ImportRefused) as refused:
        write_import(store, rd.parse_numi(grown))
    assert refused.value.status == 409
    assert Chat.select().where(Chat.import_id.is_null(False)).count() == 0  # its hidden rows are gone
    assert Message.select().count() == 0 < count and [c.title for c in Chat.select()] == ["Mine"]
