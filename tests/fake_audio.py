"""A fake OpenAI audio API on loopback, for tests: transcription (speech to text) and speech (text to speech).

Real HTTP on a real socket in the real wire formats, so Numi reaches it through the `openai` SDK as
it reaches OpenAI:

- `POST /v1/audio/transcriptions` multipart/form-data (`file` with its filename, `model`,
  `response_format`?, `language`?, `prompt`?) → `{"text": ...}` (or plain text for
  `response_format` "text"); errors as `{"error": {"message", "type", "code"}}`.
- `POST /v1/audio/speech` JSON `{"model", "input", "voice", "response_format"?, "speed"?}` → audio bytes:
  a sine tone whose length grows with the input (TONE_S_PER_CHAR a character, at least MIN_TONE_S), in
  the format asked (`wav` — the default here —, `mp3`, `opus`, `aac`, `flac` encoded with PyAV, or raw
  24 kHz `pcm`), with its Content-Type.

How each answers is set with `answer(path_kind, Answer)` ("transcriptions" or "speech"; it stays until
changed): a text, an error status (with a message), a delay before answering (or a hang until the fake
closes). Every request is recorded (`requests`, `of(kind)`, `wait_requests(kind, n)`).

    with FakeAudio() as fa:
        fa.base_url                    # http://127.0.0.1:<port>/v1 — an OpenAI-compatible provider's
        fa.answer("transcriptions", Answer(text="hello"))
        fa.of("transcriptions")[0].files["file"]   # (filename, bytes)
"""
from __future__ import annotations

import io
import json
import math
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from werkzeug.sansio.multipart import Data, Epilogue, Field, File, MultipartDecoder, NeedData

PATHS = {"/v1/audio/transcriptions": "transcriptions", "/v1/audio/speech": "speech"}
SPEECH_RATE = 24000  # what OpenAI's speech answers are sampled at
TONE_HZ = 440.0
TONE_S_PER_CHAR = 0.02
MIN_TONE_S = 0.2
SPEECH_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg", "opus": "audio/ogg", "aac": "audio/aac",
                "flac": "audio/flac", "pcm": "audio/pcm"}


@dataclass
class Answer:
    """How one endpoint answers."""
    text: str = "the fake heard you"  # transcriptions: the transcript
    status: int | None = None  # an error answer with this status
    message: str = "The server had an error while processing your request."
    delay_s: float = 0.0  # wait this long (or until the fake closes) before answering
    hang: bool = False  # say nothing until the fake closes


@dataclass
class Seen:
    kind: str  # "transcriptions" | "speech" | "other"
    path: str
    headers: dict[str, str]
    body: Any = None  # speech: the JSON object
    fields: dict[str, str] = field(default_factory=dict)  # transcriptions: the text parts
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # transcriptions: name → (filename, bytes)


def tone_wav(seconds: float, rate: int = SPEECH_RATE, hz: float = TONE_HZ) -> bytes:
    """A mono 16-bit WAV of a sine tone `seconds` long."""
    import numpy as np

    n = max(1, int(seconds * rate))
    samples = (12000 * np.sin(2 * math.pi * hz * np.arange(n) / rate)).astype("<i2").tobytes()
    return _wav_header(len(samples), rate) + samples


def _wav_header(data_bytes: int, rate: int) -> bytes:
    return (b"RIFF" + struct.pack("<I", 36 + data_bytes) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate,
            rate * 2, 2, 16) + b"data" + struct.pack("<I", data_bytes))


def encoded_tone(seconds: float, fmt: str) -> bytes:
    """The tone in `fmt` (wav, pcm, mp3, opus, aac, flac), the last four encoded with PyAV."""
    wav = tone_wav(seconds)
    if fmt == "wav":
        return wav
    if fmt == "pcm":
        return wav[44:]
    import av
    import numpy as np

    container_fmt, codec, rate = {"mp3": ("mp3", "libmp3lame", 24000), "opus": ("ogg", "libopus", 48000),
                                  "aac": ("adts", "aac", 24000), "flac": ("flac", "flac", 24000)}[fmt]
    out = io.BytesIO()
    with av.open(out, mode="w", format=container_fmt) as container:
        stream = container.add_stream(codec, rate=rate, layout="mono")
        pcm = np.frombuffer(wav[44:], dtype="<i2").reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.sample_rate = SPEECH_RATE
        resampler = av.AudioResampler(format=stream.codec_context.format, layout="mono", rate=rate)
        for piece in resampler.resample(frame) + resampler.resample(None):
            for packet in stream.encode(piece):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()


class FakeAudio:
    def __init__(self):
        self._lock = threading.Lock()
        self._answers: dict[str, Answer] = {"transcriptions": Answer(), "speech": Answer()}
        self._requests: list[Seen] = []
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.url + "/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"fake-audio:{self.port}", daemon=True)
        self._thread.start()

    def answer(self, kind: str, answer: Answer) -> None:
        """How `kind` ("transcriptions" or "speech") answers from now on."""
        assert kind in ("transcriptions", "speech")
        with self._lock:
            self._answers[kind] = answer

    @property
    def requests(self) -> list[Seen]:
        with self._lock:
            return list(self._requests)

    def of(self, kind: str) -> list[Seen]:
        return [r for r in self.requests if r.kind == kind]

    def wait_requests(self, kind: str, n: int, timeout: float = 10.0) -> list[Seen]:
        deadline = time.monotonic() + timeout
        while len(self.of(kind)) < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.of(kind))} {kind} requests, not {n}")
            self._closing.wait(0.01)
        return self.of(kind)

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAudio:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_multipart(body: bytes, content_type: str) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """(text fields, files as name → (filename, bytes)) of a multipart/form-data body."""
    boundary = next((p.split("=", 1)[1].strip('"') for p in content_type.split(";")
                     if p.strip().startswith("boundary=")), "")
    decoder = MultipartDecoder(boundary.strip().encode())
    decoder.receive_data(body)
    decoder.receive_data(None)
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    current: tuple[str, str | None] | None = None
    data = bytearray()
    while True:
        event = decoder.next_event()
        if isinstance(event, (NeedData, Epilogue)):
            break
        if isinstance(event, (Field, File)):
            current, data = (event.name, event.filename if isinstance(event, File) else None), bytearray()
        elif isinstance(event, Data) and current is not None:
            data += event.data
            if not event.more_data:
                name, filename = current
                if filename is None:
                    fields[name] = data.decode("utf-8", "replace")
                else:
                    files[name] = (filename, bytes(data))
    return fields, files


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake: FakeAudio = self.server.fake  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        kind = PATHS.get(self.path.split("?", 1)[0], "other")
        seen = Seen(kind, self.path, {k.lower(): v for k, v in self.headers.items()})
        if kind == "transcriptions":
            seen.fields, seen.files = parse_multipart(raw, self.headers.get("Content-Type", ""))
        else:
            try:
                seen.body = json.loads(raw) if raw else None
            except ValueError:
                seen.body = None
        with fake._lock:
            fake._requests.append(seen)
            answer = fake._answers.get(kind)
        if answer is None:
            return self._json(404, {"error": {"message": "Not found", "type": "invalid_request_error"}})
        if answer.hang:
            fake._closing.wait(60)
            return
        if answer.delay_s:
            fake._closing.wait(answer.delay_s)
        if answer.status is not None:
            return self._json(answer.status, {"error": {"message": answer.message, "type": "server_error",
                                                        "code": None}})
        if kind == "transcriptions":
            if "file" not in seen.files or "model" not in seen.fields:
                return self._json(400, {"error": {"message": "file and model are required",
                                                  "type": "invalid_request_error"}})
            if seen.fields.get("response_format") == "text":
                return self._send(200, "text/plain", answer.text.encode())
            return self._json(200, {"text": answer.text})
        body = seen.body if isinstance(seen.body, dict) else {}
        text, fmt = body.get("input"), body.get("response_format") or "wav"
        if not isinstance(text, str) or not body.get("model") or not body.get("voice") or fmt not in SPEECH_TYPES:
            return self._json(400, {"error": {"message": "model, input, voice and a known response_format are "
                                                         "required", "type": "invalid_request_error"}})
        seconds = max(MIN_TONE_S, TONE_S_PER_CHAR * len(text))
        self._send(200, SPEECH_TYPES[fmt], encoded_tone(seconds, fmt))

    def _json(self, status: int, body: Any) -> None:
        self._send(status, "application/json", json.dumps(body).encode())

    def _send(self, status: int, ctype: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
