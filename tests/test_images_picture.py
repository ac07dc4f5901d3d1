"""The checks a drawn image passes before Numi keeps it (backend/features/images/picture.py), in process:
each kind it keeps (PNG, JPEG, WebP) with its size and thumbnail, and each refusal with its sentence —
the size before base64 is decoded, the type by magic numbers, the header's width and height before any
decoding (PNG's and JPEG's), a cut file. Through the real server: tests/test_images_hostile.py."""
from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from backend.features.images import picture
from tests.images_helpers import claims, gif, truncated
from tests.images_helpers import picture as made


@pytest.mark.parametrize("fmt,mime", [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("WEBP", "image/webp")])
def test_each_kept_type_is_read_with_its_size_and_a_thumbnail_when_larger_than_512(fmt, mime):
    data = made(1200, 300, fmt)
    checked = picture.check(data)
    assert (checked.mime, checked.width, checked.height, checked.data) == (mime, 1200, 300, data)
    with Image.open(io.BytesIO(checked.thumbnail)) as small:
        assert small.format == "WEBP" and small.size == (512, 128)
    assert picture.check(made(512, 200, fmt)).thumbnail is None  # no larger than a thumbnail


def test_transparency_and_palettes_keep_their_look_in_the_thumbnail():
    rgba = Image.new("RGBA", (800, 800), (255, 0, 0, 0))
    out = io.BytesIO()
    rgba.save(out, "PNG")
    with Image.open(io.BytesIO(picture.check(out.getvalue()).thumbnail)) as small:
        assert small.mode == "RGBA" and small.getpixel((0, 0))[3] == 0
    assert picture.check(made(700, 700, "PNG", "P")).thumbnail is not None
    assert picture.check(made(700, 700, "PNG", "L")).thumbnail is not None


def jpeg_claiming(width: int, height: int) -> bytes:
    """A real JPEG whose frame header (SOF0) is rewritten to claim width × height."""
    data = bytearray(made(16, 16, "JPEG"))
    at = data.index(b"\xff\xc0")
    data[at + 5:at + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


def webp_claiming(width: int, height: int) -> bytes:
    """A real lossless WebP whose VP8L header is rewritten to claim width × height."""
    out = io.BytesIO()
    Image.new("RGB", (16, 16)).save(out, "WEBP", lossless=True)
    data = bytearray(out.getvalue())
    assert data[12:16] == b"VP8L"
    bits = int.from_bytes(data[21:25], "little") & ~((1 << 28) - 1)  # 14 bits a side: at most 16 384
    data[21:25] = (bits | (width - 1) | ((height - 1) << 14)).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize("variant", ["lossy", "lossless", "extended"])
def test_a_webps_size_is_read_from_each_kind_of_header(variant):
    im = Image.linear_gradient("L").resize((300, 170)).convert("RGB")
    if variant == "extended":
        im.putalpha(128)  # a lossy image with transparency is written as VP8X
    out = io.BytesIO()
    im.save(out, "WEBP", lossless=variant == "lossless")
    data = out.getvalue()
    assert data[12:16] == {"lossy": b"VP8 ", "lossless": b"VP8L", "extended": b"VP8X"}[variant]
    assert picture.header_size("WEBP", data) == (300, 170)
    assert (picture.check(data).width, picture.check(data).height) == (300, 170)


@pytest.mark.parametrize("data,said", [
    (b"%PDF-1.7 not a picture", "is not an image (its bytes are neither PNG, JPEG nor WebP)"),
    (b'<svg xmlns="http://www.w3.org/2000/svg"/>', "is an SVG drawing; Numi keeps PNG, JPEG and WebP images only"),
    (b'{"error": "no"}', "is JSON text;"),
    (gif(), "is a GIF;"),
    (truncated(), "is a damaged PNG file that cannot be decoded"),
    (claims(100_000, 100_000), "is 100,000 × 100,000 px; Numi keeps images of at most 8,192 px a side"),
    (claims(8193, 16), "is 8,193 × 16 px"),
    (claims(0, 16), "has no pixels (0 × 16)"),
    (jpeg_claiming(10_000, 10_000), "is 10,000 × 10,000 px"),
    (jpeg_claiming(65_000, 65_000), "is 65,000 × 65,000 px"),
    (webp_claiming(12_000, 300), "is 12,000 × 300 px"),
    (made(64, 64, "JPEG")[:200], "is a damaged JPEG file that cannot be decoded"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 8, "is a damaged PNG file (its header cannot be read)"),
    (b"\xff\xd8\xff\xd9", "is a damaged JPEG file (its header cannot be read)"),
    (b"RIFF\x00\x00\x00\x00WEBPVP8Z", "is a damaged WebP file (its header cannot be read)"),
])
def test_each_refusal_says_why(data, said):
    with pytest.raises(picture.NotAnImage) as caught:
        picture.check(data, "The image from Fake")
    assert said in str(caught.value) and str(caught.value).startswith("The image from Fake")


def test_a_png_cut_after_its_last_pixel_is_refused_too():
    data = made(300, 300)
    assert data.endswith(b"IEND\xaeB`\x82")
    with pytest.raises(picture.NotAnImage, match="damaged PNG"):
        picture.check(data[:-12])  # no IEND: Pillow's decoder alone would take it


def test_base64_is_measured_before_it_is_decoded(monkeypatch):
    monkeypatch.setenv("NUMI_IMAGE_MAX_MB", "0.01")  # 10 KB
    limit = picture.max_bytes()
    assert limit == 10485
    fits = base64.b64encode(b"x" * limit).decode()
    assert picture.from_base64(fits, "The image") == b"x" * limit
    with pytest.raises(picture.NotAnImage, match="larger than 10.2 KB"):
        picture.from_base64(base64.b64encode(b"x" * (limit + 1)).decode(), "The image")
    with pytest.raises(picture.NotAnImage, match="larger than"):
        picture.from_base64("!" * (picture.max_base64_chars() + 5000), "The image")  # never decoded: not base64
    with pytest.raises(picture.NotAnImage, match="larger than"):
        picture.check(b"\x89PNG" + b"x" * limit)


def test_base64_forms_servers_write():
    png = made(8, 8)
    b64 = base64.b64encode(png).decode()
    assert picture.from_base64("data:image/png;base64," + b64, "x") == png
    assert picture.from_base64("\n".join(b64[i:i + 76] for i in range(0, len(b64), 76)), "x") == png
    for bad, said in (("", "holds no image data"), (None, "holds no image data"), ("data:image/png,abc", "not base64"),
                      ("abc$", "not valid base64")):
        with pytest.raises(picture.NotAnImage, match=said):
            picture.from_base64(bad, "The answer")
