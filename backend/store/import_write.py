"""Writing a checked import: all of it in one transaction, or nothing.

Order: every attachment's bytes are staged in files/.tmp and verified against
their sha256 and size first; only then does one transaction create the folders,
chats, file rows and messages, and move the staged blobs into place. If
anything fails, the transaction rolls back, blobs this import placed are
removed again, and staged ones are discarded.
"""
from __future__ import annotations

from backend.store.db import db, now
from backend.store.files import FileStore, sniff
from backend.store.import_read import ImportRefused, ParsedChat
from backend.store.models import Chat, File, Folder, Message, ModelEntry


def _stage(store: FileStore, chats: list[ParsedChat], zip_source, limit: int, staged: dict) -> None:
    """Fill `staged`: sha256 -> (BlobWriter, or None when the blob is here already; mime).
    It is the caller's, so what was staged before a failure is still discarded."""
    for chat in chats:
        for m in chat.messages:
            for a in m["attachments"]:
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


def write_import(store: FileStore, chats: list[ParsedChat], zip_source=None, limit: int = 0) -> list[str]:
    """Create the chats (new ids); returns their ids in the export's order."""
    if not chats:
        raise ImportRefused("The file holds no chats to import.")
    staged = {}
    placed = []
    try:
        _stage(store, chats, zip_source, limit, staged)
        with db.atomic():
            ids = [_create_chat(chat, staged) for chat in chats]
            for sha, (blob, _mime) in staged.items():
                if blob is not None and not store.path(sha).is_file():
                    store.commit(blob)
                    placed.append(store.path(sha))
        return ids
    except BaseException:
        for path in placed:  # the rows naming them were rolled back
            path.unlink(missing_ok=True)
        raise
    finally:
        for blob, _mime in staged.values():
            if blob is not None:
                blob.discard()


def _folder_id(name: str | None) -> str | None:
    """A top-level folder of that name, made if there is none (the export names folders, not ids)."""
    if not name:
        return None
    folder = Folder.get_or_none((Folder.name == name) & Folder.parent.is_null())
    return (folder or Folder.create(name=name)).id


def _create_chat(chat: ParsedChat, staged: dict) -> str:
    model_id = chat.model_id if chat.model_id and ModelEntry.get_or_none(ModelEntry.id == chat.model_id) else None
    created = chat.created_at or now()
    row = Chat.create(title=chat.title, model_id=model_id, folder=_folder_id(chat.folder),
                      system_prompt=chat.system_prompt, params=chat.params, pinned=chat.pinned,
                      archived=chat.archived, created_at=created, updated_at=chat.updated_at or created)
    for m in chat.messages:
        file_ids = []
        for a in m["attachments"]:
            mime = staged[a.sha256][1]
            f = File.get_or_none((File.sha256 == a.sha256) & (File.name == a.name))
            if f is None:
                f = File.create(sha256=a.sha256, name=a.name, mime=mime, size=a.size,
                                created_at=a.created_at or now())
            file_ids.append(f.id)
        fields = {k: v for k, v in m.items() if k != "attachments"}
        Message.create(chat=row.id, content_parts={"attachments": file_ids} if file_ids else None,
                       **{**fields, "created_at": fields["created_at"] or created})
    return row.id
