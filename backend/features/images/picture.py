"""What an image backend answered, proven to be an image before anything keeps it (CONTRACT §13).

The checks run in order, each before the costlier one after it: the encoded size (base64 is
measured before it is decoded, the bytes before Pillow sees them), the type by its magic
numbers (PNG, JPEG or WebP; a GIF, an SVG or anything else is refused), the width and height
as the header states them (read here: PNG's IHDR, JPEG's frame header, WebP's VP8/VP8L/VP8X;
then Pillow's lazy `open`, which reads only the header, must agree), and only then one full
decode, which a truncated or corrupt file fails. A PNG is also walked chunk by chunk with its checksums (`verify`): Pillow's decoder
stops at the last pixel and would take a file cut after it. The decoded picture gives the
thumbnail. Pillow's process-wide `MAX_IMAGE_PIXELS` is left as it is: the limit here (8 192 px
a side, 67 M pixels) is below it and checked first, and other parts of Numi open images too.
"""
from __future__ import annotations

import base64
import binascii
import io
import logging
import os
import struct
from dataclasses import dataclass

from backend.store.files import human_size

log = logging.getLogger(__name__)

MAX_BYTES = 50 * 1024 * 1024  # an image file's encoded size
MAX_SIDE = 8192  # pixels, either side
THUMB_SIDE = 512  # a thumbnail's longest side; an image within it is its own thumbnail
TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}
EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}


class NotAnImage(ValueError):
    """What came back cannot be kept as an image; the message is a sentence for the model and the person."""


@dataclass(frozen=True)
class Picture:
    """A checked image: its bytes as they came, their type, its size, and a thumbnail when it is larger."""
    data: bytes
    mime: str
    width: int
    height: int
    thumbnail: bytes | None  # WebP, at most THUMB_SIDE a side; None when the image is no larger


def max_bytes() -> int:
    """The most an image may weigh: 50 MB (NUMI_IMAGE_MAX_MB, fractions allowed, may lower it for tests)."""
    raw = os.environ.get("NUMI_IMAGE_MAX_MB", "")
    try:
        return max(1024, min(MAX_BYTES, int(float(raw) * 1024 * 1024))) if raw else MAX_BYTES
    except ValueError:
        return MAX_BYTES


def max_base64_chars() -> int:
    """The longest base64 text an image within max_bytes() is written as (4 characters per 3 bytes)."""
    return -(-max_bytes() // 3) * 4


def too_large_sentence(what: str) -> str:
    return (f"{what} is larger than {human_size(max_bytes())}, the most Numi keeps of one image. Ask for a "
            f"smaller size, or a compressed format (JPEG or WebP).")


def from_base64(text, what: str) -> bytes:
    """The bytes a base64 string stands for (a `data:` URL's prefix allowed), refused past the size
    limit before it is decoded."""
    if not isinstance(text, str) or not text:
        raise NotAnImage(f"{what} holds no image data.")
    if text.startswith("data:"):  # some servers write a data URL
        head, _, text = text.partition(",")
        if ";base64" not in head:
            raise NotAnImage(f"{what} is a data URL that is not base64.")
    if len(text) > max_base64_chars() + 4096:  # room for line breaks some encoders add
        raise NotAnImage(too_large_sentence(what))
    if any(c in text for c in "\n\r\t "):  # line breaks some encoders add (else no copy is made)
        text = "".join(text.split())
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise NotAnImage(f"{what} is not valid base64, so it holds no image.") from None
    if len(data) > max_bytes():
        raise NotAnImage(too_large_sentence(what))
    return data


def kind_of(head: bytes) -> str | None:
    """PNG, JPEG or WEBP by the file's magic numbers; None for anything else."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    return None


def _named(head: bytes) -> str:
    """What a refused file is, for the sentence."""
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "a GIF"
    start = head[:512].lstrip().lower()
    if start.startswith((b"<svg", b"<?xml")) or b"<svg" in start:
        return "an SVG drawing"
    if start.startswith((b"{", b"[")):
        return "JSON text"
    if start.startswith((b"<!doctype html", b"<html")):
        return "a web page"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "a TIFF"
    if head[:2] == b"BM":
        return "a BMP"
    return "not an image"


def check(data: bytes, what: str = "The image") -> Picture:
    """The image `data` is, checked and decoded once; NotAnImage with a sentence when it is not one Numi keeps."""
    from PIL import Image

    if len(data) > max_bytes():
        raise NotAnImage(too_large_sentence(what))
    kind = kind_of(data[:16])
    if kind is None:
        named = _named(data[:512])
        if named == "not an image":
            raise NotAnImage(f"{what} is not an image (its bytes are neither PNG, JPEG nor WebP).")
        raise NotAnImage(f"{what} is {named}; Numi keeps PNG, JPEG and WebP images only.")
    named = kind.replace("WEBP", "WebP")
    size = header_size(kind, data)
    if size is None:
        raise NotAnImage(f"{what} is a damaged {named} file (its header cannot be read).")
    _within(*size, what)
    try:
        with Image.open(io.BytesIO(data), formats=[kind]) as im:  # reads the header only
            width, height = im.size
            _within(width, height, what)
            if kind == "PNG":
                im.verify()  # every chunk and its checksum, up to IEND
        with Image.open(io.BytesIO(data), formats=[kind]) as im:
            im.load()  # the one full decode: a corrupt or cut file fails here
            thumbnail = _thumbnail(im) if max(width, height) > THUMB_SIDE else None
    except NotAnImage:
        raise
    except Image.DecompressionBombError:
        raise NotAnImage(f"{what} says it is larger than {MAX_SIDE:,} px a side, the most Numi keeps.") from None
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, MemoryError) as exc:
        raise NotAnImage(f"{what} is a damaged {named} file that cannot be decoded ({_reason(exc)}).") from None
    return Picture(data, TYPES[kind], width, height, thumbnail)


# JPEG's start-of-frame markers (baseline, progressive, lossless, arithmetic…): they hold the size.
_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def header_size(kind: str, data: bytes) -> tuple[int, int] | None:
    """(width, height) as the file's header states it, read here before Pillow is asked anything
    (so no size can make Pillow warn or allocate); None when the header cannot be read."""
    try:
        if kind == "PNG":
            return struct.unpack(">II", data[16:24]) if data[12:16] == b"IHDR" else None
        if kind == "JPEG":
            return _jpeg_size(data)
        return _webp_size(data)
    except (struct.error, IndexError):
        return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2  # after SOI
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image, or the scan began before any frame header
            return None
        length = struct.unpack(">H", data[at + 2:at + 4])[0]
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":  # lossy: a key frame's 14-bit sizes
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and data[20] == 0x2F:  # lossless: 14 bits each, less one
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: the canvas, 24 bits each, less one
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _within(width: int, height: int, what: str) -> None:
    if width < 1 or height < 1:
        raise NotAnImage(f"{what} has no pixels ({width} × {height}).")
    if width > MAX_SIDE or height > MAX_SIDE:
        raise NotAnImage(f"{what} is {width:,} × {height:,} px; Numi keeps images of at most {MAX_SIDE:,} px "
                         f"a side. Ask for a smaller size.")


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())[:120]
    return text or type(exc).__name__


def _thumbnail(im) -> bytes | None:
    """A WebP of the decoded image at most THUMB_SIDE a side (transparency kept); None when the image's
    mode cannot be made one (the image is kept all the same: it is shown scaled)."""
    try:
        small = im.copy()
        small.thumbnail((THUMB_SIDE, THUMB_SIDE))
        if small.mode not in ("RGB", "RGBA"):
            small = small.convert("RGBA" if "A" in small.getbands() or "transparency" in small.info else "RGB")
        out = io.BytesIO()
        small.save(out, "WEBP", quality=80, method=4)
        return out.getvalue()
    except (OSError, ValueError) as exc:
        log.warning("images: no thumbnail for a %s image of mode %s: %s", im.format, im.mode, exc)
        return None
