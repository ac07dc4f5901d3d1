"""Small real files for attachment tests, made here rather than shipped as binaries."""
from __future__ import annotations

import random
import struct
import zlib


def _png(width: int, height: int, rows: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A valid PNG of one colour (browsers decode it, so it can be shown as a thumbnail)."""
    return _png(width, height, (b"\x00" + bytes(rgb) * width) * height)


def noise_png(size: int, seed: int = 1) -> tuple[bytes, int, int]:
    """(a valid PNG of random pixels of about `size` bytes, width, height): a photo-like file
    that does not compress, whose bytes have line breaks only where chance puts them."""
    rnd = random.Random(seed)
    width = 256
    height = max(1, size // (width * 3 + 1))
    rows = b"".join(b"\x00" + rnd.randbytes(width * 3) for _ in range(height))
    return _png(width, height, rows), width, height


def pdf(pages: list[list[str]], font_size: int = 12, leading: int = 14, origin: tuple[int, int] = (72, 720),
        encoding: str | None = None) -> bytes:
    """A valid PDF with a text layer: one list of lines per page, in Helvetica (`encoding`: the font's,
    e.g. WinAnsiEncoding)."""
    def esc(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    n = len(pages)
    font = 3 + 2 * n
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{' '.join(f'{3 + 2 * i} 0 R' for i in range(n))}] /Count {n} >>"]
    for i, lines in enumerate(pages):
        ops = (f"BT /F1 {font_size} Tf {origin[0]} {origin[1]} Td {leading} TL "
               + " ".join(f"({esc(line)}) Tj T*" for line in lines) + " ET")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       f"/Resources << /Font << /F1 {font} 0 R >> >> /Contents {4 + 2 * i} 0 R >>")
        objects.append(f"<< /Length {len(ops)} >>\nstream\n{ops}\nendstream")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica"
                   + (f" /Encoding /{encoding}" if encoding else "") + " >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
