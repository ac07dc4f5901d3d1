"""Writing a checked import: all of it or nothing for the person, without blocking anyone's saving.

Order:
0. Each chat of the file is matched to one imported before from the same source
   (`chat.source_id`, and each message's `source_id`): only its messages that are
   not here yet are written, under their parents; a chat with nothing new is
   left alone. The rest become new chats.
1. Every attachment's bytes are staged in files/.tmp and checked against their
   sha256 and size; the file rows to reuse and the models that exist are read.
2. The blobs move to their addresses.
3. Chats and messages are written hidden — `import_id` set, and deleted and
   temporary as well, so no chat list, trash, search, folder count or export
   shows them — in short transactions with pauses between them
   (backend/store/paced.py): replies keep committing their text and new chats
   are made while a large import runs. Every row is written whole, linked into
   its tree (its id was set aside when the import was planned). Messages for a
   chat already here are written to a hidden chat of their own.
   What features keep of a new chat (its documents) is written there too, by each feature
   (backend/store/chat_data.py).
4. One small transaction shows them: folders made where missing, the new file
   rows, each chat's `import_id`, deleted and temporary marks cleared, and new
   messages for a chat already here moved into it; and what the caller adds
   beside the chats (`also`: the export's prompts), so it comes in with them or not at all.
If anything fails, the hidden chats are removed (in short transactions too),
the blobs this import placed are removed and the staged ones discarded. A
process that dies mid-import leaves hidden chats that the next start removes
(housekeeping.purge_unfinished_imports); a blob it placed stays, unnamed.
"""
from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass
from typing import Any, Callable

import peewee
from peewee import Field, IntegrityError

from backend.store import chat_data, housekeeping, import_plan, message_images, paced
from backend.store.db import db, now
from backend.store.files import BlobWriter, FileStore, sniff
from backend.store.import_plan import Plan
from backend.store.import_read import ImportRefused, ParsedChat, message_files
from backend.store.models import Chat, File, Folder, Message, ModelEntry, new_id

log = logging.getLogger(__name__)
# What every peewee query runs in: sqlite3's errors raised as peewee's. Not in peewee's stubs.
_PEEWEE_ERRORS = peewee.__exception_wrapper__  # type: ignore[attr-defined]

_ROWS = 200  # messages per write between yields: a few milliseconds
_CHUNK = 500  # ids per IN (…): under the 999 variables older SQLite builds allow
_FILE_ROWS = 100  # file rows per INSERT, 6 variables each: under 999 too


def _stage(store: FileStore, messages: list[dict], zip_source, limit: int, staged: dict) -> None:
    """Fill `staged`: sha256 -> (BlobWriter, or None when the blob is here already; mime).
    It is the caller's, so what was staged before a failure is still discarded."""
    for m in messages:
        for a in message_files(m):
            if a.sha256 in staged:
                continue
            entry = f"files/{a.sha256}"
            if a.data is not None:
                chunks = (a.data,)
            elif zip_source is not None and entry in zip_source.entries:
                chunks = zip_source.chunks(entry)
            elif store.path(a.sha256).is_file():
                staged[a.sha256] = (None, _local_mime(store, a))
                continue
            else:
                raise ImportRefused(f"The bytes of the attachment {a.name!r} are not in the export "
                                    f"(no data and no files/{a.sha256[:12]}…). Nothing was imported.")
            blob = store.writer(max(limit, a.size))
            staged[a.sha256] = (blob, None)
            for chunk in chunks:
                blob.write(chunk)
            if blob.sha256 != a.sha256 or blob.size != a.size:
                raise ImportRefused(f"The bytes of the attachment {a.name!r} do not match its sha256 or "
                                    f"size: the export is damaged or was changed. Nothing was imported.")
            blob.file.flush()
            staged[a.sha256] = (blob, sniff(bytes(blob.head), a.name, complete=blob.size <= len(blob.head)))


def _local_mime(store: FileStore, a) -> str:
    with open(store.path(a.sha256), "rb") as f:
        head = f.read(64 * 1024)
    return sniff(head, a.name, complete=a.size <= len(head))


def _drawn(image: dict, files: _Files) -> dict:
    """An imported image as the message's content_parts keep it (backend/store/message_images.py)."""
    item = {k: image[k] for k in ("prompt", "width", "height", "model", "backend")}
    item["file_id"] = files.id_for(image["file"])
    if image["thumbnail"] is not None:
        item["thumbnail_file_id"] = files.id_for(image["thumbnail"])
    return item


class _Files:
    """File ids for (sha256, name): an existing row's, else a new id whose row is written
    when the chats are shown (a hidden message may name an id that has no row yet)."""

    def __init__(self, staged: dict):
        self.staged = staged
        self.ids: dict[tuple[str, str], str] = {}
        self.new_rows: list[dict] = []

    def id_for(self, a) -> str:
        key = (a.sha256, a.name)
        if key not in self.ids:
            row = File.get_or_none((File.sha256 == a.sha256) & (File.name == a.name))
            if row is not None:
                self.ids[key] = row.id
            else:
                self.ids[key] = new_id("file")
                self.new_rows.append({"id": self.ids[key], "sha256": a.sha256, "name": a.name,
                                      "mime": self.staged[a.sha256][1], "size": a.size,
                                      "created_at": a.created_at or now()})
        return self.ids[key]


# One import at a time: two at once could each find a chat missing and both make it.
_ONE_AT_A_TIME = threading.Lock()


@dataclass
class Outcome:
    created: list[str]  # the new chats, in the file's order
    already: int  # chats of the file that were here already (or earlier in the same file)
    updated: list[str]  # chats already here that gained messages
    switch: dict[str, int]  # chat id -> the message its active branch now runs on to
    also: Any = None  # what `also` answered


def write_import(store: FileStore, chats: list[ParsedChat], zip_source=None, limit: int = 0,
                 also: Callable[[], Any] | None = None) -> Outcome:
    """Create the new chats (new ids) and add the new messages of chats imported before;
    `also()` runs in the transaction that shows them (its answer is `Outcome.also`)."""
    if not chats:
        raise ImportRefused("The file holds no chats to import.")
    with _ONE_AT_A_TIME:
        plans, already = import_plan.plan(chats)
        return _write(store, plans, already, zip_source, limit, also)


def _write(store: FileStore, plans: list[Plan], already: int, zip_source, limit: int,
           also: Callable[[], Any] | None = None) -> Outcome:
    staged: dict[str, tuple[BlobWriter | None, str | None]] = {}
    placed: list[str] = []
    import_id = secrets.token_hex(8)
    written = False
    messages = [m for p in plans for m in p.new]
    try:
        _stage(store, messages, zip_source, limit, staged)
        files = _Files(staged)
        for m in messages:
            m["file_ids"] = [files.id_for(a) for a in m["attachments"]]
            m["drawn"] = [_drawn(image, files) for image in m.get("images") or ()]
        known = {m.id for m in ModelEntry.select(ModelEntry.id)}  # the catalog: a few hundred at most
        for sha, (blob, _mime) in staged.items():
            if blob is not None and not store.path(sha).is_file():
                store.commit(blob)
                placed.append(sha)
        written = True
        made: list[str] = []
        try:
            paced.run(_write_hidden(plans, import_id, known, made))
        except IntegrityError:
            if Chat.select().where(Chat.import_id == import_id).count() < len(made):
                raise _removed_meanwhile() from None
            raise
        switch, also_did = _show(plans, import_id, files.new_rows, also)
        return Outcome(created=[p.write_id for p in plans if p.target is None], already=already,
                       updated=[p.target for p in plans if p.target and p.new], switch=switch, also=also_did)
    except BaseException:
        if written:
            _remove_hidden(import_id)
        _remove_placed(store, placed)
        raise
    finally:
        for blob, _mime in staged.values():
            if blob is not None:
                blob.discard()


# Clean-ups after a failure: the import's own error is the one to answer, so theirs are only
# logged (the next start removes hidden chats; a blob left behind is only unused space).

def _remove_hidden(import_id: str) -> None:
    try:
        housekeeping.purge_chats_paced([c.id for c in Chat.select(Chat.id).where(Chat.import_id == import_id)])
    except Exception:
        log.exception("removing the hidden chats of a failed import failed")


def _remove_placed(store: FileStore, placed: list[str]) -> None:
    try:
        for sha in placed:
            # Unless an upload of the same bytes made a row for them meanwhile, no row names them.
            if not File.select().where(File.sha256 == sha).exists():
                store.path(sha).unlink(missing_ok=True)
    except Exception:
        log.exception("removing the files of a failed import failed")


def _write_hidden(plans: list[Plan], import_id: str, known_models: set, made: list):
    """The new chats and the new messages as hidden rows, each hidden chat's id added to
    `made`; yields after each small write (paced.run)."""
    hidden_at = now()
    for p in plans:
        if not p.write_id:
            continue
        chat = p.chat
        created = chat.created_at or now()
        if p.target is None:
            Chat.insert(id=p.write_id, title=chat.title, source_id=chat.source_id,
                        model_id=chat.model_id if chat.model_id in known_models else None,
                        system_prompt=chat.system_prompt, params=chat.params, tools_off=chat.tools_off,
                        pinned=chat.pinned,
                        archived=chat.archived, created_at=created, updated_at=chat.updated_at or created,
                        import_id=import_id, deleted_at=hidden_at, temporary=True).execute()
        else:
            Chat.insert(id=p.write_id, created_at=hidden_at, updated_at=hidden_at,
                        import_id=import_id, deleted_at=hidden_at, temporary=True).execute()
        made.append(p.write_id)
        yield
        for i in range(0, len(p.new), _ROWS):
            rows = [_message_row(m, p, created) for m in p.new[i:i + _ROWS]]
            with _PEEWEE_ERRORS:
                db.cursor().executemany(_INSERT_MESSAGE, rows)
            yield
        if p.target is None:
            Chat.update(active_leaf_id=p.row_id(chat.active)).where(Chat.id == p.write_id).execute()
            yield from _features(p)


def _features(p: Plan):
    """What features keep of a new chat (its documents), written by each (backend/store/chat_data.py).
    A chat here already keeps its own: an import adds messages to it, nothing else."""
    parts = chat_data.parts()
    for name, value in p.chat.features.items():
        data = parts.get(name)
        if data is None:
            continue  # unregistered since the file was read
        steps = data.write(p.write_id, value, lambda old: p.ids.get(str(old)))
        if steps is not None:
            yield from steps
        yield


# One prepared INSERT run over many rows: building a peewee query per row took most of an
# import's time. The columns and their conversions come from the model.
_MESSAGE_FIELDS: list[Field] = [Message.id, Message.chat, Message.parent_id, Message.depth, Message.active_child_id,
                   Message.line_id, Message.line_exit, Message.role, Message.content, Message.content_parts,
                   Message.reasoning_content,
                   Message.reasoning_details, Message.tool_calls, Message.tool_call_id, Message.tool_error,
                   Message.citation_sources, Message.status, Message.model_id, Message.usage, Message.error,
                   Message.created_at, Message.source_id]
_INSERT_MESSAGE = (f"INSERT INTO message ({', '.join(f.column_name for f in _MESSAGE_FIELDS)}) "
                   f"VALUES ({', '.join('?' for _ in _MESSAGE_FIELDS)})")


def _message_row(m: dict, p: Plan, chat_created: float) -> tuple:
    source = m["source_id"]
    link = p.links[source]
    values = {**m, "id": p.ids[source], "chat": p.write_id, "parent_id": link.parent, "depth": link.depth,
              "active_child_id": link.child, "line_id": link.line, "line_exit": link.exit,
              "created_at": m["created_at"] or chat_created,
              "content_parts": _content_parts(m)}
    return tuple(f.db_value(values[f.name]) for f in _MESSAGE_FIELDS)


def _content_parts(m: dict) -> dict | None:
    parts: dict = {}
    if m["file_ids"]:
        parts["attachments"] = m["file_ids"]
    if m.get("drawn"):
        parts[message_images.KEY] = m["drawn"]
    return parts or None


def _show(plans: list[Plan], import_id: str, file_rows: list[dict],
          also: Callable[[], Any] | None = None) -> tuple[dict[str, int], Any]:
    """The one short transaction that makes the import appear whole; the chats whose active
    branch should now run on into new messages (see _extends), and what `also()` answered."""
    by_folder: dict[str, list[str]] = {}
    for p in plans:
        if p.target is None and p.chat.folder:
            by_folder.setdefault(p.chat.folder, []).append(p.write_id)
    hidden = [p.write_id for p in plans if p.write_id]
    switch = {}
    with db.atomic():
        if Chat.select().where(Chat.import_id == import_id).count() != len(hidden):
            raise _removed_meanwhile()
        for i in range(0, len(file_rows), _FILE_ROWS):
            File.insert_many(file_rows[i:i + _FILE_ROWS]).execute()
        for name, chat_ids in by_folder.items():
            folder_id = _folder_id(name)
            for i in range(0, len(chat_ids), _CHUNK):
                Chat.update(folder=folder_id).where(Chat.id.in_(chat_ids[i:i + _CHUNK])).execute()
        for p in plans:
            if p.target is not None and p.new:
                leaf = _add_to(p)
                if leaf is not None:
                    switch[p.target] = leaf
        Chat.update(import_id=None, deleted_at=None, temporary=False).where(Chat.import_id == import_id).execute()
        also_did = also() if also is not None else None
    return switch, also_did


def _add_to(p: Plan) -> int | None:
    """Move the new messages into the chat they belong to; the message its active branch
    should run on to, if any."""
    row = Chat.get_or_none(Chat.id == p.target)
    if row is None:  # purged while the import ran
        raise _removed_meanwhile()
    Message.update(chat=p.target).where(Message.chat == p.write_id).execute()
    for parent, child in p.adopt:  # a leaf gains its first child (in a line of the child's own)
        Message.update(active_child_id=child, line_exit=True).where((Message.id == parent)
                                                                    & Message.active_child_id.is_null()).execute()
    Chat.delete().where(Chat.id == p.write_id).execute()
    updated = max(row.updated_at, p.chat.updated_at or 0)
    Chat.update(updated_at=updated).where(Chat.id == p.target).execute()
    return _extends(p, row.active_leaf_id)


def _extends(p: Plan, leaf: int | None) -> int | None:
    """The file's active leaf, when the chat's active branch leads to it: it ends on a
    message of the file's active branch (or the chat was empty). A branch the person moved
    elsewhere, or continued with messages of their own, stays where it is."""
    target = p.row_id(p.chat.active)
    if target is None or target == leaf:
        return None
    if leaf is None:
        return target
    source = Message.select(Message.source_id).where(Message.id == leaf).scalar()
    return target if source is not None and source in p.active_path() else None


def _removed_meanwhile() -> ImportRefused:
    # Hidden chats are deleted ones, and emptying the trash removes those too: not all of it.
    return ImportRefused("Some of the chats being imported were removed before the import finished "
                         "(was the trash emptied?). Nothing was imported; import the file again.",
                         status=409, code="conflict")


def _folder_id(name: str) -> str:
    """A top-level folder of that name, made if there is none (the export names folders, not ids)."""
    folder = Folder.get_or_none((Folder.name == name) & Folder.parent.is_null())
    return (folder or Folder.create(name=name)).id
