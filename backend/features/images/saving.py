"""A drawn image kept: its bytes (and its thumbnail's) content-addressed in files/, each a file row,
and the image added to the assistant message whose step drew it.

Only a checked image (picture.py) comes here, so nothing is written for one that failed. The blobs
are placed first (a rename each, as an upload's), then one transaction names them and adds the
image to its message: a crash between the two leaves at most an unnamed blob, never a message
naming a file that is not there.
"""
from __future__ import annotations

import re
import unicodedata

from backend.features.images import picture
from backend.store import file_rows, message_images
from backend.store.db import db, short_connection
from backend.store.files import FileStore, clean_name

NAME_WORDS = 8  # of the prompt, in the file's name


def _blob(files: FileStore, data: bytes) -> str:
    blob = files.writer(len(data))
    try:
        blob.write(data)
        return files.commit(blob)
    finally:
        blob.discard()  # a no-op once committed


def file_stem(prompt: str) -> str:
    """A download name from the prompt's first words: "a-red-fox-in-the-snow"."""
    words = re.findall(r"\w+", unicodedata.normalize("NFKC", prompt).lower())[:NAME_WORDS]
    return "-".join(words)[:80].strip("-") or "image"


def keep(files: FileStore, image: picture.Picture, prompt: str, model: str, backend: str,
         message_id: int | None) -> dict:
    """Store the image and add it to the message; the message's `images` item it became."""
    sha = _blob(files, image.data)
    thumb_sha = _blob(files, image.thumbnail) if image.thumbnail is not None else None
    stem = file_stem(prompt)
    with short_connection(), db.atomic():
        row = file_rows.add(sha, clean_name(stem + picture.EXTENSIONS[image.mime]), image.mime, len(image.data))
        item = {"file_id": row["id"], "prompt": prompt, "width": image.width, "height": image.height,
                "model": model, "backend": backend}
        if thumb_sha is not None and image.thumbnail is not None:
            thumb = file_rows.add(thumb_sha, clean_name(stem + "-thumbnail.webp"), "image/webp", len(image.thumbnail))
            item["thumbnail_file_id"] = thumb["id"]
        if message_id is not None:
            message_images.add(message_id, item)
    return item
