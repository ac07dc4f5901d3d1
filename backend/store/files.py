"""Attached files: bytes on disk, content-addressed, and what type they really are.

Layout (docs/PROTOCOL.md, "Files"): `<data dir>/files/<sha256[:2]>/<sha256>`, one
blob per distinct content, never modified once written; `files/.tmp/` holds
uploads in flight and is emptied at start. The `file` table maps ids to a blob
(its sha256) with the name and the type decided here.

The type always comes from the bytes, never from the name or the type the
client claimed: magic numbers for the formats Numi treats specially (PNG, JPEG,
GIF, WebP, PDF, ZIP), else UTF-8 text or not. The name's extension only
refines text (`notes.md` is text/markdown, `data.csv` text/csv); it never makes
bytes an image or a document they are not.
"""
from __future__ import annotations

import codecs
import hashlib
import logging
import os
import tempfile
import unicodedata
from pathlib import Path

from backend.durable import fsync_dir

log = logging.getLogger(__name__)

DEFAULT_MAX_FILE_MB = 50
SNIFF_BYTES = 64 * 1024  # what type detection reads from the start of a file
MAX_NAME_CHARS = 255

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")  # what vision models take
PDF = "application/pdf"
ZIP = "application/zip"
BINARY = "application/octet-stream"

# Text by extension. Unknown extensions are text/plain: the model reads the name too.
_TEXT_BY_EXT = {
    ".md": "text/markdown", ".markdown": "text/markdown", ".csv": "text/csv",
    ".tsv": "text/tab-separated-values", ".json": "application/json", ".jsonl": "application/jsonl",
    ".html": "text/html", ".htm": "text/html", ".xhtml": "application/xhtml+xml",
    ".svg": "image/svg+xml", ".xml": "application/xml", ".js": "text/javascript",
    ".mjs": "text/javascript", ".css": "text/css", ".py": "text/x-python",
    ".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
    ".sh": "text/x-shellscript",
}
_TEXT_APP_TYPES = frozenset(v for v in _TEXT_BY_EXT.values() if not v.startswith("text/"))
# Controls that plain text does use; any other C0 control byte counts against "text".
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\b\x1b")


class TooLarge(Exception):
    """The upload passed the size limit; what was written so far is discarded."""

    def __init__(self, limit: int):
        super().__init__(f"over {limit} bytes")
        self.limit = limit


def max_file_bytes() -> int:
    """NUMI_MAX_FILE_MB (default 50; fractions allowed, so tests can set a small limit)."""
    raw = os.environ.get("NUMI_MAX_FILE_MB", "")
    try:
        mb = float(raw) if raw else DEFAULT_MAX_FILE_MB
    except ValueError:
        log.warning("NUMI_MAX_FILE_MB=%r is not a number; using %d", raw, DEFAULT_MAX_FILE_MB)
        mb = DEFAULT_MAX_FILE_MB
    return max(1, int(mb * 1024 * 1024))


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            return f"{size:.1f} {unit}".replace(".0 ", " ")
    return f"{size} GB"  # pragma: no cover - the loop always returns


# --- types ----------------------------------------------------------------------------

def sniff(head: bytes, name: str, complete: bool) -> str:
    """The MIME type of a file from its first bytes (`complete`: head is the whole file)."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if b"%PDF-" in head[:1024]:  # readers accept a little junk before the header
        return PDF
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08"):
        return ZIP
    if is_text(head, complete):
        return _TEXT_BY_EXT.get(os.path.splitext(name)[1].lower(), "text/plain")
    return BINARY


def is_text(head: bytes, complete: bool) -> bool:
    """UTF-8 (or ASCII) text: decodes strictly, no NUL, hardly any control characters."""
    if b"\x00" in head:
        return False
    decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
    try:
        # Not final unless the head is the whole file: a character cut at the
        # sniffing boundary is not an error.
        text = decoder.decode(head, final=complete)
    except UnicodeDecodeError:
        return False
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in _TEXT_CONTROLS)
    return controls * 100 <= len(text)


def kind_of(mime: str) -> str:
    """image | pdf | text | binary: what a model can be given of a file of this type."""
    if mime in IMAGE_TYPES:
        return "image"
    if mime == PDF:
        return "pdf"
    if mime.startswith("text/") or mime in _TEXT_APP_TYPES:
        return "text"
    return "binary"


def served_type(mime: str) -> tuple[str, bool]:
    """(Content-Type, inline) for serving a stored file to the browser.

    Only raster images keep their type and show inline. Everything that a
    browser could run or render as a page (HTML, SVG, XML, JavaScript, all
    text) is plain text, and every non-image is a download.
    """
    kind = kind_of(mime)
    if kind == "image":
        return mime, True
    if kind == "text":
        return "text/plain; charset=utf-8", False
    if mime in (PDF, ZIP):
        return mime, False
    return BINARY, False


def clean_name(raw: str | None) -> str:
    """The file name as given, made safe to store and show: no folders, no control or
    direction-override characters, at most 255 characters (the extension kept)."""
    name = unicodedata.normalize("NFC", (raw or "").replace("\\", "/").rsplit("/", 1)[-1])
    name = "".join(ch for ch in name if not unicodedata.category(ch).startswith("C")).strip()
    if name in ("", ".", ".."):
        return "file"
    if len(name) > MAX_NAME_CHARS:
        stem, ext = os.path.splitext(name)
        ext = ext if len(ext) <= 16 else ""
        name = stem[:MAX_NAME_CHARS - len(ext)] + ext
    return name


# --- storage --------------------------------------------------------------------------

class BlobWriter:
    """A temporary file that hashes, counts and keeps the head of what is written.

    It is werkzeug's multipart stream factory result: the upload streams through
    it to disk in chunks and is never held in memory whole.
    """

    def __init__(self, tmp_dir: Path, limit: int):
        fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
        self.file = os.fdopen(fd, "w+b")
        self.path = Path(name)
        self.limit = limit
        self.size = 0
        self.hash = hashlib.sha256()
        self.head = bytearray()
        self.committed = False

    def write(self, data: bytes) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise TooLarge(self.limit)
        self.hash.update(data)
        if len(self.head) < SNIFF_BYTES:
            self.head += data[:SNIFF_BYTES - len(self.head)]
        return self.file.write(data)

    def seek(self, *args):
        return self.file.seek(*args)

    def read(self, *args):
        return self.file.read(*args)

    def close(self) -> None:
        self.file.close()

    @property
    def sha256(self) -> str:
        return self.hash.hexdigest()

    def discard(self) -> None:
        self.file.close()
        if not self.committed:  # once moved, the temp name may belong to another upload
            self.path.unlink(missing_ok=True)


class FileStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.tmp = self.root / ".tmp"

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> FileStore:
        return cls(Path(data_dir) / "files")

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def writer(self, limit: int) -> BlobWriter:
        self.tmp.mkdir(parents=True, exist_ok=True)
        return BlobWriter(self.tmp, limit)

    def commit(self, blob: BlobWriter) -> str:
        """Move a finished upload to its content address (or drop it: those bytes are
        stored already). Returns the sha256. Rename is atomic, so a reader sees the
        whole blob or none, and a crash leaves at most a stray file in .tmp."""
        sha = blob.sha256
        dest = self.path(sha)
        if dest.is_file() and dest.stat().st_size == blob.size:
            blob.discard()
            blob.committed = True
            return sha
        blob.file.flush()
        os.fsync(blob.file.fileno())
        blob.file.close()
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(blob.path, dest)
        blob.committed = True
        fsync_dir(dest.parent)
        return sha

    def sweep_tmp(self) -> None:
        """Uploads cut off by a crash; only one server runs per data dir, so none is live."""
        if self.tmp.is_dir():
            for stray in self.tmp.iterdir():
                stray.unlink(missing_ok=True)
