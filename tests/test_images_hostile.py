"""Hostile answers from an image backend (CONTRACT §13), through the real server and both loopback fakes:
not an image, a truncated PNG, a PNG whose header claims 100 000 px a side, a 60 MB body (streamed by the
fake, never built whole), a GIF, an HTTP 500, a server that never answers. Each is an error tool result
with a sentence the model can act on, and nothing is kept: no `image` event, no file, nothing on the
message; the turn goes on to its answer."""
from __future__ import annotations

import time

import pytest

from tests.images_helpers import Drawing, FakeImages, claims, ended, gif, make_drawing, truncated

MB = 1024 * 1024


@pytest.fixture
def images():
    with FakeImages() as fake:
        yield fake


@pytest.fixture(params=["openai", "sdapi"])
def backend(request) -> str:
    return request.param


def use(drawing: Drawing, backend: str) -> None:
    if backend == "openai":
        drawing.use_openai("gpt-image-1")
    else:
        drawing.use_sdapi()


def refused(drawing: Drawing, backend: str, **answer) -> str:
    """Draw once against `answer`; the call's error sentence, after checking nothing was kept."""
    use(drawing, backend)
    drawing.answer(backend, **answer)
    chat = drawing.setup.chat(title="t")
    sock = drawing.setup.socket(chat)
    before = drawing.blobs()
    end = drawing.turn(sock, "r1", {"prompt": "a harbour at night"}, then="I could not draw it.")
    assert end["status"] == "completed"  # the turn goes on: a failed call is a result like any other
    result = ended(sock)
    assert not result["ok"]
    assert not sock.of("image") and not sock.of("image_partial")
    assert drawing.blobs() == before
    messages = drawing.setup.messages(chat)
    assert all(m.get("images") in (None, []) for m in messages)
    (tool_row,) = [m for m in messages if m["role"] == "tool"]
    assert tool_row["tool_error"] and tool_row["content"] == result["output"]
    assert messages[-1]["content"] == "I could not draw it."
    sock.close()
    return result["output"]


@pytest.fixture
def drawing(setup, images) -> Drawing:
    return make_drawing(setup, images)


def test_an_answer_that_is_not_an_image(drawing, backend):
    said = refused(drawing, backend, png=b"Sorry, the GPU is busy. Please come back later.\n")
    assert "is not an image" in said and "neither PNG, JPEG nor WebP" in said


def test_a_truncated_png(drawing, backend):
    said = refused(drawing, backend, png=truncated())
    assert "is a damaged PNG file that cannot be decoded" in said


def test_a_png_whose_header_claims_100_000_px(drawing, backend):
    said = refused(drawing, backend, png=claims(100_000, 100_000))
    assert "100,000 × 100,000 px" in said and "at most 8,192 px a side" in said


def test_a_gif_is_the_wrong_type(drawing, backend):
    said = refused(drawing, backend, png=gif())
    assert "is a GIF" in said and "PNG, JPEG and WebP images only" in said


def test_a_60_mb_body_is_refused_while_it_streams(drawing, backend):
    started = time.monotonic()
    said = refused(drawing, backend, huge_bytes=60 * MB)
    assert "is larger than 50 MB, the most Numi keeps of one image" in said
    assert time.monotonic() - started < 60


def test_an_http_500(drawing, backend):
    said = refused(drawing, backend, status=500)
    assert "failed while drawing (HTTP 500)" in said and "Try again later" in said
    assert "The server had an error while processing your request." in said  # the server's own words


def test_a_server_that_never_answers_is_cut_at_the_time_cap(setup_with, images, backend):
    drawing = make_drawing(setup_with({"NUMI_IMAGE_TIMEOUT_S": "1.5"}), images)
    started = time.monotonic()
    said = refused(drawing, backend, hang=True)
    assert "did not finish the image within 1.5 s" in said and "nothing was kept" in said
    assert time.monotonic() - started < 30
