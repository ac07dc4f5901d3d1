"""A user message's attached files, as the model receives them.

One internal representation for every wire API: images become `Image`s on the
Message (each adapter writes its own image part), and everything readable
(text, code, Markdown, CSV, JSON, PDF) becomes text in the message itself, each
file in an <attachment> block before what the person wrote. Files are cut to a
budget (per file and per message, see `Budget`), and a cut file says so in the
text the model reads. Binary files the model cannot read are named, not sent.

A model without vision cannot take an image: the newest user message (the one
a turn answers) is then refused before any request (`AttachmentError`
"vision_unsupported", which the turn reports as its error); images
in older messages become a one-line note, so a chat that once had an image can
go on with a text-only model.
"""
from __future__ import annotations

import base64
import functools
import html
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from backend.core.types import Image
from backend.store.files import FileStore, human_size, kind_of

log = logging.getLogger(__name__)

DEFAULT_FILE_CHARS = 100_000
DEFAULT_TOTAL_CHARS = 200_000
# OpenAI's limit per image. Anthropic's is lower; its refusal names the problem,
# and no API takes more, so larger images are not even tried.
DEFAULT_MAX_IMAGE_MB = 20
CHARS_PER_TOKEN = 4
WHOLE_READ_BYTES = 4 * 1024 * 1024


class AttachmentError(Exception):
    """The newest message's files cannot go to this model; the message says what to do."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Budget:
    file_chars: int  # at most this much of one file
    total_chars: int  # and of all the files of one message together
    image_bytes: int

    @classmethod
    def from_env(cls, context_window: int | None = None) -> Budget:
        def number(name: str, default: float) -> float:
            try:
                return float(os.environ.get(name) or default)
            except ValueError:
                log.warning("%s is not a number; using %s", name, default)
                return default
        total = int(number("NUMI_ATTACH_TOTAL_CHARS", DEFAULT_TOTAL_CHARS))
        if context_window:
            # Files may fill at most half the model's window (≈ 4 characters a token),
            # leaving the rest for the conversation and the answer.
            total = min(total, context_window * CHARS_PER_TOKEN // 2)
        total = max(1000, total)
        return cls(file_chars=max(1000, min(total, int(number("NUMI_ATTACH_FILE_CHARS", DEFAULT_FILE_CHARS)))),
                   total_chars=total,
                   image_bytes=int(number("NUMI_MAX_IMAGE_MB", DEFAULT_MAX_IMAGE_MB) * 1024 * 1024))


@dataclass(frozen=True)
class Parts:
    images: tuple[Image, ...]
    context: str  # the <attachment> blocks, "" without readable files


def message_parts(files: list, store: FileStore, budget: Budget, *, vision: bool, model_label: str,
                  current: bool) -> Parts:
    """`files`: the message's File rows in attachment order. `current`: the message the
    turn answers (refusals are for it; older messages get notes instead)."""
    images: list[Image] = []
    blocks: list[str] = []
    left = budget.total_chars
    for row in files:
        kind = kind_of(row.mime)
        path = store.path(row.sha256)
        if not path.is_file():
            blocks.append(_block(row, "[Numi: the bytes of this file are missing from the data folder; "
                                      "it could not be included.]"))
            continue
        if kind == "image":
            if not vision:
                if current:
                    raise AttachmentError(
                        "vision_unsupported",
                        f"{model_label} cannot see images, so {row.name} was not sent to it. Pick a model "
                        f"that can (one with vision in Settings → Models) for this chat, then press Retry.")
                blocks.append(_block(row, f"[Numi: this image is not shown: {model_label} cannot see images.]"))
                continue
            if row.size > budget.image_bytes:
                if current:
                    raise AttachmentError(
                        "attachment_too_large",
                        f"{row.name} is {human_size(row.size)}; models accept images up to "
                        f"{human_size(budget.image_bytes)}. Attach a smaller image in a new message.")
                blocks.append(_block(row, f"[Numi: this image is not shown: it is larger than "
                                          f"{human_size(budget.image_bytes)}.]"))
                continue
            images.append(Image(mime=row.mime, data=base64.b64encode(path.read_bytes()).decode("ascii")))
            continue
        if kind == "binary":
            blocks.append(_block(row, "[Numi: a binary file; its contents cannot be shown as text.]"))
            continue
        if left <= 0:
            blocks.append(_block(row, "[Numi: not included: the files before it used the whole attachment "
                                      f"budget of {budget.total_chars:,} characters.]"))
            continue
        limit = min(budget.file_chars, left)
        text, note = (_pdf_text(str(path), row.sha256, limit) if kind == "pdf"
                      else _text(path, row.name, row.size, limit))
        left -= len(text)
        blocks.append(_block(row, text + (f"\n{note}" if note else "")))
    return Parts(tuple(images), "\n\n".join(blocks))


def _block(row, body: str) -> str:
    name = html.escape(row.name, quote=True)
    return (f'<attachment name="{name}" type="{row.mime}" size="{human_size(row.size)}">\n'
            f"{body}\n</attachment>")


def _text(path: Path, name: str, size: int, limit: int) -> tuple[str, str]:
    # A file of a few MB is read whole, so the note can count its characters. Beyond
    # that, at most 4 bytes a character: limit*4 bytes always hold `limit` characters
    # when the file has them, and a 50 MB file is not read for 100 000 of them.
    with open(path, "rb") as f:
        raw = f.read(-1 if size <= WHOLE_READ_BYTES else limit * 4 + 4)
    text = raw.decode("utf-8-sig", errors="replace")
    if len(text) <= limit:
        return text, ""
    total = f"{len(text):,} characters" if len(raw) >= size else f"a {human_size(size)} file"
    return text[:limit], (f"[Numi: {name} was truncated to fit the attachment budget: only the first "
                          f"{limit:,} characters of {total} are included.]")


@functools.lru_cache(maxsize=32)
def _pdf_text(path: str, sha256: str, limit: int) -> tuple[str, str]:
    """The PDF's text page by page, up to `limit` characters (cached per content and
    budget: every turn of a chat sends its history again)."""
    try:
        from pypdf import PdfReader
        logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed files warn on every page
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            return "", "[Numi: this PDF is protected by a password; its text could not be read.]"
        pages = reader.pages
        out: list[str] = []
        length = found = 0
        for number, page in enumerate(pages, 1):
            text = (page.extract_text() or "").strip()
            found += len(text)
            piece = f"--- page {number} of {len(pages)} ---\n{text}\n"
            if length + len(piece) > limit:
                out.append(piece[:limit - length])
                return "".join(out), (f"[Numi: the PDF was truncated to fit the attachment budget: only "
                                      f"the first {limit:,} characters are included, up to page {number} "
                                      f"of {len(pages)}.]")
            out.append(piece)
            length += len(piece)
    except Exception as exc:  # pypdf raises many kinds on damaged files
        log.info("could not read PDF %s: %s", sha256, exc)
        return "", "[Numi: this PDF could not be read (it may be damaged); its text is not included.]"
    if not found:
        return "", (f"[Numi: this PDF has {len(out)} pages but no text layer (they may be scanned images); "
                    f"its text could not be read.]")
    return "".join(out), ""
