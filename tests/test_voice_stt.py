"""Speech to text (CONTRACT §14) through a real server: `POST /api/audio/transcriptions`.

Offline (pocketsphinx) on recorded speech with known transcripts, held to a word error rate; the same
speech as MP3, OGG/Opus, WebM and M4A made here with PyAV; each limit and each kind of bad file; and
the provider engine against a loopback fake of the OpenAI audio API (tests/fake_audio.py).
"""
from __future__ import annotations

import http.client
import io
import os
import threading

import pytest

from tests.fake_audio import Answer, FakeAudio
from tests.numi_client import multipart
from tests.voice_audio import FORMATS, NAMES, edits, encode, fixture, silent_wav, wav_header, wer

PATH = "/api/audio/transcriptions"
WER_BOUND = 0.45  # pocketsphinx gets about 0.2–0.3 on these five
FORMAT_WER_BOUND = 0.6


def transcribe(api, data: bytes, name: str = "speech.wav", ctype: str = "audio/wav", timeout: float = 120):
    body, content_type = multipart("file", name, data, ctype)
    return api.request("POST", PATH, raw=body, content_type=content_type, timeout=timeout)


def refused(r, status: int, *says: str) -> str:
    assert r.status == status, r
    message = r.body["error"]["message"]
    assert message.endswith("."), message
    for part in says:
        assert part in message, message
    return message


# --- offline ----------------------------------------------------------------------------------------

def test_offline_transcribes_recorded_speech_within_the_word_error_rate(api):
    total_edits = total_words = 0
    for name in NAMES:
        wav, reference = fixture(name)
        r = transcribe(api, wav, f"librivox-{name}.wav")
        assert r.status == 200, r
        assert set(r.body) == {"text", "duration_s"}
        assert r.body["duration_s"] == pytest.approx((len(wav) - 44) / 32000, abs=0.01)
        e, n = edits(reference, r.body["text"])
        total_edits, total_words = total_edits + e, total_words + n
    assert total_edits / total_words <= WER_BOUND, (total_edits, total_words)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_format_is_heard_like_the_wav(api, fmt):
    wav, reference = fixture("0870")
    data = encode(wav, fmt)
    r = transcribe(api, data, f"speech.{FORMATS[fmt][3]}", "application/octet-stream")
    assert r.status == 200, r
    assert r.body["duration_s"] == pytest.approx(7.1, abs=0.1)
    assert wer(reference, r.body["text"]) <= FORMAT_WER_BOUND, r.body["text"]


def test_silence_is_an_empty_transcript(api):
    r = transcribe(api, silent_wav(2.0, rate=16000))
    assert r.status == 200, r
    assert r.body == {"text": "", "duration_s": 2.0}


def test_transcriptions_at_once_each_get_their_own_words(server):
    """The one decoder is shared under a lock: two requests at once both get their own transcript."""
    api = server.api()
    results: dict[str, object] = {}

    def run(name):
        results[name] = transcribe(api, fixture(name)[0])

    threads = [threading.Thread(target=run, args=(name,)) for name in ("0880", "0930")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for name in ("0880", "0930"):
        r = results[name]
        assert r.status == 200, r  # type: ignore[attr-defined]
        assert wer(fixture(name)[1], r.body["text"]) <= FORMAT_WER_BOUND, r.body  # type: ignore[attr-defined]


# --- limits ------------------------------------------------------------------------------------------

def test_a_body_over_25_mb_is_refused_from_its_length(api):
    r = transcribe(api, bytes(26 * 1024 * 1024), "big.wav")
    refused(r, 413, "25 MB")
    assert r.body["error"]["code"] == "audio_too_large"


def test_a_chunked_body_over_25_mb_is_refused_while_reading(server):
    """No Content-Length: the reading stops once the file passes 25 MB."""
    body, ctype = multipart("file", "big.wav", bytes(26 * 1024 * 1024), "audio/wav")
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.putrequest("POST", PATH, skip_host=True, skip_accept_encoding=True)
    for k, v in {"Host": f"127.0.0.1:{server.port}", "Authorization": f"Bearer {server.token}",
                 "Content-Type": ctype, "Transfer-Encoding": "chunked"}.items():
        conn.putheader(k, v)
    conn.endheaders()
    try:
        for i in range(0, len(body), 1 << 20):
            piece = body[i:i + (1 << 20)]
            conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        conn.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed before the rest was sent
    resp = conn.getresponse()
    import json
    payload = json.loads(resp.read())
    conn.close()
    assert resp.status == 413, payload
    assert "25 MB" in payload["error"]["message"]


def test_a_recording_over_10_minutes_is_refused_naming_the_limit(api):
    data = silent_wav(11 * 60)  # 8 kHz mono 16-bit: about 10.6 MB
    assert len(data) < 25 * 1024 * 1024
    message = refused(transcribe(api, data), 413, "10 minutes")
    assert "longer than" in message


def test_a_streamed_wav_over_10_minutes_is_refused(api):
    """A WAV whose header gives no size (as a recorder streaming it writes it) is measured all the same."""
    data = silent_wav(10 * 60 + 30, rate=8000)
    streamed = data[:40] + b"\xff\xff\xff\xff" + data[44:]  # the data chunk's size: unknown
    refused(transcribe(api, streamed), 413, "10 minutes")


class _Unseekable(io.RawIOBase):
    """A stream read once, front to back: FFmpeg can learn no length from it before decoding."""

    def __init__(self, data: bytes):
        self._data = io.BytesIO(data)
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = self._data.readinto(buffer)
        self.read_bytes += n
        return n


@pytest.mark.parametrize("fmt", ["wav", "ogg"])
def test_audio_that_states_no_length_stops_decoding_past_10_minutes(fmt):
    """In process (audio_in): with no length known before, decoding stops once past 10 minutes."""
    from backend.features.voice import audio_in

    wav = silent_wav(10 * 60 + 60, rate=8000)
    data = wav[:40] + b"\xff\xff\xff\xff" + wav[44:] if fmt == "wav" else encode(wav, "ogg")
    stream = _Unseekable(data)
    with pytest.raises(audio_in.TooLong, match="10 minutes"):
        audio_in.decode(stream, keep_samples=False)
    if fmt == "wav":  # (silence as Opus is so small that FFmpeg's read-ahead holds all of it)
        assert stream.read_bytes < len(data) * 0.95  # most of the last minute was never read




# --- bad files -----------------------------------------------------------------------------------------

def test_bad_files_are_422_with_a_sentence(api):
    wav, _ = fixture("0880")
    lying = wav_header(16000 * 2 * 10, 16000) + wav[44:44 + 16000 * 2]  # says 10 s, holds 1 s
    cases = {
        "empty": (b"", "empty"),
        "random": (os.urandom(256 * 1024), "cannot be transcribed"),
        "text": (b"Dear diary, today I recorded nothing at all.\n" * 200, "cannot be transcribed"),
        "header only": (wav_header(0, 16000), "no sound"),
        "lying header": (lying, "cut short"),
        "truncated mp3": (encode(wav, "mp3")[:300], "cannot be transcribed"),
        "png": (b"\x89PNG\r\n\x1a\n" + os.urandom(4096), "cannot be transcribed"),
    }
    for what, (data, says) in cases.items():
        r = transcribe(api, data)
        assert r.status == 422, (what, r)
        assert says in r.body["error"]["message"], (what, r.body)
        assert r.body["error"]["message"].endswith("."), (what, r.body)
    # The server is still well: the next good file is heard.
    assert transcribe(api, wav).status == 200


def test_a_request_without_the_file_part_or_not_multipart_is_refused(api):
    body, ctype = multipart("recording", "speech.wav", fixture("0880")[0])
    r = api.request("POST", PATH, raw=body, content_type=ctype)
    assert r.status == 422 and "file" in r.body["error"]["fields"], r
    body, ctype = multipart("file", None, b"just a field")
    assert api.request("POST", PATH, raw=body, content_type=ctype).status == 422
    refused(api.request("POST", PATH, raw=fixture("0880")[0], content_type="audio/wav"), 415)
    r = api.request("POST", PATH, raw=b"--x\r\nbroken", content_type="multipart/form-data; boundary=x")
    refused(r, 400)


# --- provider --------------------------------------------------------------------------------------------

@pytest.fixture
def audio_fake():
    with FakeAudio() as fake:
        yield fake


def use_provider(api, provider_id: str, model: str = "whisper-1"):
    r = api.patch("/api/settings", {"voice": {"stt": {"backend": "provider", "provider_id": provider_id,
                                                      "model": model}}})
    assert r.status == 200, r


@pytest.fixture
def provider_api(start_server, audio_fake):
    server = start_server({"NUMI_STT_TIMEOUT_S": "2"})
    api = server.api()
    r = api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake Whisper",
                                    "base_url": audio_fake.base_url, "api_key": "sk-test-not-real", "timeout": 10})
    assert r.status == 201, r
    use_provider(api, r.body["id"])
    api.provider_id = r.body["id"]
    return api


@pytest.mark.parametrize("fmt", ["wav", "webm"])
def test_the_provider_gets_the_original_bytes_and_its_text_comes_back(provider_api, audio_fake, fmt):
    audio_fake.answer("transcriptions", Answer(text="  Hello from  the provider.  "))
    wav, _ = fixture("0880")
    data = wav if fmt == "wav" else encode(wav, "webm")
    r = transcribe(provider_api, data, f"dictation.{fmt}")
    assert r.status == 200, r
    assert r.body == {"text": "Hello from the provider.", "duration_s": pytest.approx(2.99, abs=0.05)}
    seen = audio_fake.of("transcriptions")
    assert len(seen) == 1
    assert seen[0].files["file"] == (f"dictation.{fmt}", data)
    assert seen[0].fields["model"] == "whisper-1"
    assert seen[0].headers["authorization"] == "Bearer sk-test-not-real"


def test_the_provider_gets_a_name_that_fits_the_format(provider_api, audio_fake):
    data = encode(fixture("0880")[0], "m4a")
    assert transcribe(provider_api, data, "blob").status == 200
    assert audio_fake.of("transcriptions")[0].files["file"][0] == "audio.m4a"


@pytest.mark.parametrize("status", [500, 401, 404, 429])
def test_a_provider_failure_is_502_naming_the_provider_and_status(provider_api, audio_fake, status):
    audio_fake.answer("transcriptions", Answer(status=status, message="upstream says no"))
    message = refused(transcribe(provider_api, fixture("0880")[0]), 502, "Fake Whisper", f"HTTP {status}")
    assert "upstream says no" in message


def test_a_provider_too_slow_is_502_naming_the_time(provider_api, audio_fake):
    audio_fake.answer("transcriptions", Answer(delay_s=30))
    refused(transcribe(provider_api, fixture("0880")[0]), 502, "Fake Whisper", "within 2 s")


def test_a_provider_not_listening_is_502(start_server):
    api = start_server().api()
    r = api.post("/api/providers", {"kind": "openai_compatible", "name": "Gone Server",
                                    "base_url": "http://127.0.0.1:9/v1", "timeout": 5})
    assert r.status == 201, r
    use_provider(api, r.body["id"])
    refused(transcribe(api, fixture("0880")[0]), 502, "Gone Server", "could not be reached")


def test_bad_audio_and_limits_are_refused_before_the_provider_is_asked(provider_api, audio_fake):
    assert transcribe(provider_api, b"not audio at all").status == 422
    assert transcribe(provider_api, silent_wav(11 * 60)).status == 413
    assert audio_fake.of("transcriptions") == []


def test_exactly_10_minutes_is_accepted(provider_api, audio_fake):
    """At the limit (through the provider engine: offline would spend a minute hearing the silence)."""
    r = transcribe(provider_api, silent_wav(10 * 60, rate=8000))
    assert r.status == 200, r
    assert r.body["duration_s"] == pytest.approx(600, abs=0.01)
    assert len(audio_fake.of("transcriptions")) == 1


def test_a_provider_turned_off_or_without_a_key_is_409_with_the_sentence(provider_api, audio_fake):
    api = provider_api
    assert api.patch(f"/api/providers/{api.provider_id}", {"enabled": False}).status == 200
    refused(transcribe(api, fixture("0880")[0]), 409, "Fake Whisper is turned off")
    r = api.post("/api/providers", {"kind": "openai", "name": "Keyless OpenAI", "base_url": audio_fake.base_url})
    assert r.status == 201, r
    use_provider(api, r.body["id"])
    refused(transcribe(api, fixture("0880")[0]), 409, "Keyless OpenAI has no API key")
    assert audio_fake.of("transcriptions") == []
