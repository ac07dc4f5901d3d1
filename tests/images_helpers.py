"""What the images tests share: a server whose model calls `image_generate`, the fake image servers
(tests/fake_images.py) as its image backend, small real image files, and what is on disk."""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fake_images import Answer, FakeImages
from tests.fakeprovider import script as S
from tests.sample_files import _png, noise_png, png

IMAGES_KEY = "images-test-key"  # not a key: the fake only checks it is the one sent


def picture(width: int, height: int, fmt: str = "PNG", mode: str = "RGB") -> bytes:
    """A real image file of a gradient (so it compresses like a picture, not like one colour)."""
    from PIL import Image

    im = Image.linear_gradient("L").resize((width, height)).convert(mode)
    out = io.BytesIO()
    im.save(out, fmt)
    return out.getvalue()


def claims(width: int, height: int) -> bytes:
    """A PNG whose header claims width × height with one byte of pixel data behind it."""
    return _png(width, height, b"\x00")


def truncated() -> bytes:
    """A real PNG cut in half."""
    data = noise_png(40_000)[0]
    return data[: len(data) // 2]


def gif() -> bytes:
    return picture(32, 32, "GIF", "P")


@dataclass
class Drawing:
    """A Setup (tests/conftest.py) whose model calls tools, and the fake image servers."""
    setup: object
    images: FakeImages
    provider_id: str  # an OpenAI-compatible provider on the fake images API

    @property
    def api(self):
        return self.setup.api

    def use_openai(self, model: str = "gpt-image-1", size: str | None = None, provider_id: str | None = None):
        r = self.api.patch("/api/settings", {"images": {"backend": "openai", "provider_id": provider_id or self.provider_id,
                                                        "model": model, "size": size}})
        assert r.status == 200, r
        return r.body["images"]

    def use_sdapi(self, model: str | None = None, size: str | None = None):
        r = self.api.patch("/api/settings", {"images": {"backend": "sdapi", "url": self.images.url, "model": model,
                                                        "size": size}})
        assert r.status == 200, r
        return r.body["images"]

    def answer(self, api: str, **answer) -> None:
        self.images.answer(api, Answer(**answer))

    def turn(self, sock, request_id: str, args: dict | str, call_id: str = "c1", then: str = "Here it is.") -> dict:
        """A turn whose model calls image_generate with `args` once, then answers `then`; its turn_end."""
        text = args if isinstance(args, str) else json.dumps(args)
        self.setup.fake.enqueue([S.tool_call(0, call_id, "image_generate", text)], [S.text(then)])
        sock.send(type="send", request_id=request_id, content="Draw something.")
        turn_id = sock.until("turn_start")["turn_id"]
        return sock.until("turn_end", timeout=60, turn_id=turn_id)

    def blobs(self) -> set[str]:
        """The content addresses in the server's files/ (what any upload or drawing placed)."""
        root = Path(self.setup.server.data_dir) / "files"
        return {p.name for p in root.glob("??/*") if p.is_file()}


def ended(sock, call_id: str = "c1") -> dict:
    (end,) = [e for e in sock.events if e["type"] == "tool_end" and e["call_id"] == call_id]
    return end


def make_drawing(setup, images: FakeImages) -> Drawing:
    r = setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}})
    assert r.status == 200, r
    r = setup.api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake Images",
                                          "base_url": images.base_url, "api_key": IMAGES_KEY})
    assert r.status == 201, r
    return Drawing(setup, images, r.body["id"])


__all__ = ["Answer", "Drawing", "FakeImages", "claims", "ended", "gif", "make_drawing", "noise_png", "picture",
           "png", "truncated"]


# The fixtures the images tests share: import them into a test module (`from tests.images_helpers
# import drawing, images`) and pytest finds them there.

@pytest.fixture
def images():
    """A loopback fake of the OpenAI images API and the sdapi, for one test."""
    with FakeImages() as fake:
        yield fake


@pytest.fixture
def drawing(setup, images) -> Drawing:
    return make_drawing(setup, images)
