"""Reading an image backend's answers with caps (backend/features/images/wire.py), in process: server-sent
events cut anywhere, a line or a stream too long for any image within the limits, a Content-Length that
says too much before anything is read, and the servers' own error messages."""
from __future__ import annotations

import json

import pytest

from backend.features.images import picture, wire


def pieces(data: bytes, size: int):
    return (data[i:i + size] for i in range(0, len(data), size))


def test_events_are_read_across_any_cut():
    stream = (b"event: image_generation.partial_image\r\ndata: " + json.dumps({"type": "a", "n": 1}).encode()
              + b"\r\n\r\n: a comment\n\ndata: {\"type\": \"b\",\ndata: \"n\": 2}\n\ndata: [DONE]\n\n")
    for size in (1, 2, 7, len(stream)):
        assert list(wire.sse_events(pieces(stream, size), 1000, 10_000, "x")) == [{"type": "a", "n": 1},
                                                                                 {"type": "b", "n": 2}]
    assert list(wire.sse_events([b'data: {"type": "c"}'], 100, 100, "x")) == [{"type": "c"}]  # no blank line


def test_a_line_or_a_stream_past_its_cap_is_refused_as_it_comes():
    endless = (b"x" * 1000 for _ in range(10_000))  # never ends: it must be stopped, not read
    with pytest.raises(picture.NotAnImage, match="larger than"):
        list(wire.sse_events(endless, 50_000, 10**9, "The stream"))
    many = (b'data: {"type": "p"}\n\n' for _ in range(10**6))
    with pytest.raises(picture.NotAnImage, match="larger than"):
        list(wire.sse_events(many, 1000, 100_000, "The stream"))
    with pytest.raises(wire.DrawFailed, match="sent an event that is not JSON"):
        list(wire.sse_events([b"data: {nope\n\n"], 1000, 10_000, "The stream"))


def test_a_body_is_refused_by_its_length_before_it_is_read_and_by_its_bytes_while_it_is():
    def never():
        raise AssertionError("read although its Content-Length said too much")
        yield b""
    with pytest.raises(picture.NotAnImage):
        wire.read_capped(never(), "2000", 1000, "The answer")
    with pytest.raises(picture.NotAnImage):
        wire.read_capped((b"x" * 100 for _ in range(10**6)), None, 1000, "The answer")
    assert wire.read_capped([b"ab", b"cd"], "4", 4, "The answer") == b"abcd"


@pytest.mark.parametrize("body,said", [
    ({"error": {"message": "Your request was rejected by the safety system.", "type": "invalid_request_error"}},
     "Your request was rejected by the safety system."),
    ({"error": "RuntimeError", "detail": "", "body": "", "errors": "CUDA out of memory."}, "CUDA out of memory."),
    ({"detail": [{"loc": ["body", "width"], "msg": "value is not a valid integer"}]}, "value is not a valid integer"),
    ({"detail": "Not Found"}, "Not Found"),
    ({"error": "plain words"}, "plain words"),
    (b"<html>oops</html>", ""),
    ({"error": {"message": " many\n  lines\tof   text "}}, "many lines of text"),
])
def test_the_servers_own_words_are_found(body, said):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    assert wire.upstream_message(raw) == said
