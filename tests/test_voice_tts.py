"""Text to speech (CONTRACT §14): `POST /api/audio/speech` and `GET /api/audio/voices` on a real server.

Offline speech is espeak-ng's real audio, decoded and measured (its length grows with the text, it is
not silence). What reaches the engine is checked through a stand-in `espeak-ng` on PATH that records its
argv and stdin and then runs the real one: text never becomes an option or a command. The provider path
runs against a loopback fake of the OpenAI speech API (tests/fake_audio.py). The macOS and Windows
commands cannot run here: their builders are pure functions, tested for what they build.
"""
from __future__ import annotations

import array
import io
import json
import math
import os
import shutil
import stat
import sys
import threading
import time
import wave
from pathlib import Path

import pytest

from backend.features.voice import tts_commands

ESPEAK = shutil.which("espeak-ng")
needs_espeak = pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed (.ci/run installs it)")
SPEECH = "/api/audio/speech"

THREE = "Hello there, friend."
SIXTY = " ".join(["The quick brown fox jumps over the lazy dog near the quiet river bank today."] * 4
                 + ["Numi reads replies aloud."] * 1)[:400]


def wav_stats(data: bytes) -> tuple[float, float]:
    """(duration in seconds, RMS of the 16-bit samples) of a WAV file."""
    with wave.open(io.BytesIO(data), "rb") as w:
        assert w.getsampwidth() == 2
        frames, rate, n = w.readframes(w.getnframes()), w.getframerate(), w.getnframes()
    samples = array.array("h", frames)
    if sys.byteorder == "big":
        samples.byteswap()
    rms = math.sqrt(sum(s * s for s in samples) / len(samples)) if samples else 0.0
    return n / rate, rms


def speak(api, body, **kw):
    return api.post(SPEECH, body, **kw)


def stand_in(folder: Path, script: str, interpreter: str = sys.executable) -> Path:
    """An `espeak-ng` on PATH that is this script (Python, run with the test's own interpreter, unless told)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "espeak-ng"
    path.write_text(f"#!{interpreter}\n{script}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


RECORDER = """import json, os, sys
data = sys.stdin.buffer.read()
with open(os.environ["RECORD_TO"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data.decode("utf-8")}) + "\\n")
import subprocess
done = subprocess.run([os.environ["REAL_ESPEAK"], *sys.argv[1:]], input=data, stdout=sys.stdout.buffer)
sys.exit(done.returncode)
"""


# --- offline: real audio ---------------------------------------------------------------------------

@needs_espeak
def test_offline_speech_is_real_audio_whose_length_grows_with_the_text(api):
    short = speak(api, {"text": THREE})
    assert short.status == 200, short
    assert short.headers["Content-Type"] == "audio/wav"
    assert short.headers["X-Content-Type-Options"] == "nosniff"
    seconds, rms = wav_stats(short.body)
    assert 0.5 <= seconds <= 3.0, seconds
    assert rms > 300, rms  # speech, not silence

    long = speak(api, {"text": SIXTY})
    assert long.status == 200, long
    long_seconds, long_rms = wav_stats(long.body)
    assert len(SIXTY.split()) >= 60
    assert long_seconds > 5 * seconds and 10 <= long_seconds <= 60, (seconds, long_seconds)
    assert long_rms > 300
    # The WAV's sizes are true (espeak-ng streams its header with sizes of 0x7FFFFFFF).
    assert int.from_bytes(long.body[4:8], "little") == len(long.body) - 8


@needs_espeak
def test_speed_and_voice_from_the_setting_and_the_request(api):
    normal, _ = wav_stats(speak(api, {"text": SIXTY}).body)
    r = api.patch("/api/settings", {"voice": {"stt": {"backend": "offline"},
                                              "tts": {"backend": "offline", "speed": 2.0, "voice": "en-gb"}}})
    assert r.status == 200, r
    fast = speak(api, {"text": SIXTY})
    assert fast.status == 200, fast
    fast_seconds, _ = wav_stats(fast.body)
    assert fast_seconds < 0.7 * normal, (normal, fast_seconds)
    # A voice in the request wins over the setting's; one espeak-ng does not have is a 422 naming it.
    assert speak(api, {"text": THREE, "voice": "en-us"}).status == 200
    r = speak(api, {"text": THREE, "voice": "nosuchvoice"})
    assert r.status == 422, r
    assert "nosuchvoice" in r.body["error"]["fields"]["voice"]


@needs_espeak
def test_offline_voices_are_listed(api):
    r = api.get("/api/audio/voices")
    assert r.status == 200, r
    items = r.body["items"]
    assert any(v["id"] == "en-us" and "English" in v["label"] for v in items), items
    assert len({v["id"] for v in items}) == len(items) > 10


@needs_espeak
def test_text_never_becomes_an_option_or_a_command(start_server, tmp_path):
    """Text starting with '-', holding quotes, $(...), backticks and newlines goes to stdin as it is."""
    record, marker = tmp_path / "record.jsonl", tmp_path / "pwned"
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, RECORDER)
    server = start_server({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "RECORD_TO": str(record),
                           "REAL_ESPEAK": ESPEAK})
    api = server.api()
    texts = ["--help", "-v xx -w /tmp/out.wav", f'say "hi" \'there\' $(touch {marker}) `touch {marker}`; '
             f'touch {marker}', "first line\nsecond line\n-s 999", "Ünïcödé — 日本語 ✓"]
    for text in texts:
        r = speak(api, {"text": text})
        assert r.status == 200, (text, r)
        seconds, rms = wav_stats(r.body)
        assert 0.2 < seconds < 40 and rms > 100, (text, seconds, rms)
    runs = [json.loads(line) for line in record.read_text().splitlines()]
    assert [run["stdin"] for run in runs] == texts
    for run in runs:
        assert run["argv"] == ["--stdout", "-s", "175"]
    assert not marker.exists()
    # A voice is its own argument after -v, and one that looks like an option or a path never gets there.
    assert speak(api, {"text": THREE, "voice": "en-us"}).status == 200
    assert json.loads(record.read_text().splitlines()[-1])["argv"] == ["--stdout", "-s", "175", "-v", "en-us"]
    for voice in ("-w/tmp/x", "../../etc/passwd", "en\nus", " en"):
        r = speak(api, {"text": THREE, "voice": voice})
        assert r.status == 422 and "voice" in r.body["error"]["fields"], (voice, r)
    assert len(record.read_text().splitlines()) == len(texts) + 1


# --- refusals --------------------------------------------------------------------------------------

REFUSALS = [
    ({}, "required"),
    ({"text": ""}, "empty"),
    ({"text": " \n\t\u2003 "}, "white space"),
    ({"text": "x" * 4097}, "4 096"),
    ({"text": 42}, "string"),
    ({"text": None}, "null"),
    ({"text": ["a"]}, "string"),
    ({"text": "hi", "voice": 3}, "string"),
    ({"text": "hi", "voice": ""}, "empty"),
    ({"text": "hi", "speed": 2}, "Unknown field"),
]


def test_each_refusal_is_a_422_with_a_sentence(api):
    for body, words in REFUSALS:
        r = speak(api, body)
        assert r.status == 422, (body, r)
        fields = r.body["error"]["fields"]
        assert any(words in message for message in fields.values()), (body, fields)
        assert all(message.endswith(".") for message in fields.values()), fields


def test_bodies_that_are_no_json_object(api):
    for raw in (b'"read this"', b'["read this"]', b"42"):
        r = api.post(SPEECH, raw=raw)
        assert r.status == 422, (raw, r)
        assert "JSON object" in r.body["error"]["message"]
    r = api.post(SPEECH, raw=b"{text: read this}")  # not JSON at all: a 400 as on every route (request_body)
    assert r.status == 400 and "not valid JSON" in r.body["error"]["message"], r
    r = api.post(SPEECH, raw=b"read this", content_type="text/plain")
    assert r.status == 415, r


@needs_espeak
def test_the_longest_text_is_taken_and_counted_in_characters(api):
    text = "é" + " " * 4094 + "ü"  # 4 096 characters (8 192 UTF-8 bytes), short to speak
    assert speak(api, {"text": text}).status == 200
    assert speak(api, {"text": text + "a"}).status == 422


# --- no engine, a failing engine, a slow engine --------------------------------------------------------

def test_no_offline_engine_is_a_503_saying_what_to_install(start_server, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    api = start_server({"PATH": str(empty)}).api()
    r = speak(api, {"text": THREE})
    assert r.status == 503, r
    message = r.body["error"]["message"]
    assert "espeak-ng" in message and "apt install espeak-ng" in message and "provider" in message
    assert api.get("/api/audio/voices").body == {"items": []}


def test_a_failing_engine_is_a_502_with_what_it_said(start_server, tmp_path):
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "import sys\nsys.stdin.read()\nsys.stderr.write('sound card on fire')\nsys.exit(7)\n")
    api = start_server({"PATH": str(bin_dir)}).api()
    r = speak(api, {"text": THREE})
    assert r.status == 502, r
    assert "exit status 7" in r.body["error"]["message"] and "sound card on fire" in r.body["error"]["message"]


def test_an_engine_past_its_time_cap_is_killed(start_server, tmp_path):
    bin_dir, pid_file = tmp_path / "bin", tmp_path / "engine.pid"
    stand_in(bin_dir, f"echo $$ > '{pid_file}'\nexec /bin/sleep 120\n", interpreter="/bin/sh")
    api = start_server({"PATH": str(bin_dir), "NUMI_TTS_TIMEOUT_S": "1"}).api()
    started = time.monotonic()
    r = speak(api, {"text": THREE})
    assert r.status == 504, r
    assert "1 s" in r.body["error"]["message"]
    assert time.monotonic() - started < 15
    if pid_file.exists():  # on a loaded machine the cap may pass before the script even wrote it
        pid = int(pid_file.read_text())
        assert not Path(f"/proc/{pid}").exists()  # killed and reaped before the answer


# --- the macOS and Windows commands (pure builders) ------------------------------------------------

HOSTILE = ['say "hi" \'there\'', "-v Alex --help", "line one\nline two", "$(rm -rf ~) `id`; & | >x",
           "Ünïcödé — 日本語 ✓", "a\x00b\x1bc"]


@pytest.mark.parametrize("text", HOSTILE)
def test_builders_keep_text_off_the_command_line(text):
    e = tts_commands.espeak(text, "en-us", 1.0)
    assert e.argv == ["espeak-ng", "--stdout", "-s", "175", "-v", "en-us"]
    assert e.stdin.decode("utf-8") == tts_commands.plain(text)
    s = tts_commands.say("/tmp/t/text.txt", "/tmp/t/out.aiff", "Bad News", 1.0)
    assert s.argv == ["say", "-o", "/tmp/t/out.aiff", "-f", "/tmp/t/text.txt", "-r", "180", "-v", "Bad News"]
    w = tts_commands.windows("C:\\T\\text.txt", "C:\\T\\out.wav", "Microsoft Zira Desktop", 1.0)
    assert w.argv[:-1] == ["powershell", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command"]
    assert w.argv[-1] == tts_commands.WINDOWS_SCRIPT  # a fixed script: nothing of the request in it
    assert w.env == {"NUMI_TTS_TEXT": "C:\\T\\text.txt", "NUMI_TTS_OUT": "C:\\T\\out.wav",
                     "NUMI_TTS_VOICE": "Microsoft Zira Desktop", "NUMI_TTS_RATE": "0"}
    for command in (e, s, w):
        assert not any(text in arg for arg in command.argv)


def test_control_characters_become_spaces_and_the_rest_is_kept():
    assert tts_commands.plain("a\x00b\x1bc\x01d\u200be\nf\tg") == "a b c d e\nf\tg"
    assert tts_commands.plain("Ünïcödé 日本語") == "Ünïcödé 日本語"


def test_speeds_map_to_each_engines_rate():
    assert [tts_commands.espeak("x", None, s).argv[3] for s in (0.5, 1.0, 2.0)] == ["88", "175", "350"]
    assert [tts_commands.say("t", "o", None, s).argv[6] for s in (0.5, 1.0, 2.0)] == ["90", "180", "360"]
    assert [tts_commands.sapi_rate(s) for s in (0.5, 1.0, 2.0)] == [-6, 0, 6]
    assert "-v" not in tts_commands.say("t", "o", None, 1.0).argv
    assert tts_commands.windows("t", "o", None, 1.0).env["NUMI_TTS_VOICE"] == ""


@pytest.mark.parametrize("voice, ok", [("en-us", True), ("Bad News", True), ("Microsoft Zira Desktop", True),
                                       ("Amélie", True), ("-w", False), ("--voices", False), ("../x", False),
                                       ("a/b", False), ("a\\b", False), ("a\nb", False), (" en", False),
                                       ("x" * 101, False), ("", False)])
def test_voice_names_an_engine_is_given(voice, ok):
    assert (tts_commands.voice_problem(voice) is None) == ok


def test_voice_lists_of_each_platform_are_read():
    espeak = ("Pty Language       Age/Gender VoiceName          File                 Other Languages\n"
              " 2  en-us           --/M      English_(America)  gmw/en-US            (en 3)\n"
              " 5  yue             --/M      Chinese_(Cantonese) sit/yue              (zh-yue 5)(zh 8)\n"
              " 5  yue             --/M      Chinese_(Cantonese_latin_as_Jyutping) sit/yue-Latn-jyutping\n")
    assert tts_commands.espeak_voices(espeak) == [{"id": "en-us", "label": "English (America) (en-us)"},
                                                 {"id": "yue", "label": "Chinese (Cantonese) (yue)"}]
    say = ("Alex                en_US    # Most people recognize me by my voice.\n"
           "Bad News            en_US    # The light you see at the end of the tunnel is the headlamp.\n"
           "Amélie              fr_CA    # Bonjour, je m’appelle Amélie.\n"
           "Eddy (German (Germany)) de_DE    # Hallo! Ich heiße Eddy.\n")
    assert [v["id"] for v in tts_commands.say_voices(say)] == ["Alex", "Bad News", "Amélie",
                                                              "Eddy (German (Germany))"]
    assert tts_commands.say_voices(say)[1]["label"] == "Bad News (en_US)"
    win = "Microsoft David Desktop\ten-US\r\nMicrosoft Zira Desktop\ten-US\r\n\r\n"
    assert tts_commands.windows_voices(win) == [
        {"id": "Microsoft David Desktop", "label": "Microsoft David Desktop (en-US)"},
        {"id": "Microsoft Zira Desktop", "label": "Microsoft Zira Desktop (en-US)"}]
    assert tts_commands.voices_command("darwin") == ["say", "-v", "?"]
    assert tts_commands.voices_command("linux") == ["espeak-ng", "--voices"]


def test_aiff_from_say_becomes_wav(tmp_path):
    """What macOS `say -o` writes (big-endian 16-bit AIFF) is converted with PyAV and wave."""
    import av
    import numpy

    from backend.features.voice import tts_audio

    path = tmp_path / "speech.aiff"
    rate = 22050
    with av.open(str(path), "w", format="aiff") as out:
        stream = out.add_stream("pcm_s16be", rate=rate, layout="mono")
        samples = array.array("h", (int(8000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(rate)))
        frame = av.AudioFrame.from_ndarray(numpy.frombuffer(samples.tobytes(), dtype="<i2").reshape(1, -1),
                                           format="s16", layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    wav = tts_audio.aiff_to_wav(str(path))
    seconds, rms = wav_stats(wav)
    assert abs(seconds - 1.0) < 0.05 and 5000 < rms < 6000  # a sine of amplitude 8000: RMS ≈ 5657


# --- a provider's speech API -----------------------------------------------------------------------

@pytest.fixture
def speech_fake():
    from tests.fake_audio import FakeAudio

    with FakeAudio() as fake:
        yield fake


def provider_voice(api, base_url, kind="openai_compatible", api_key="sk-test-not-real", **tts) -> dict:
    """A provider at `base_url`, chosen for reading aloud; the provider."""
    body = {"kind": kind, "name": "Fake Voice", "base_url": base_url, "timeout": 10}
    if api_key:
        body["api_key"] = api_key
    r = api.post("/api/providers", body)
    assert r.status == 201, r
    provider = r.body
    r = api.patch("/api/settings", {"voice": {"stt": {"backend": "offline"},
                                              "tts": {"backend": "provider", "provider_id": provider["id"],
                                                      "model": "tts-1", **tts}}})
    assert r.status == 200, r
    return provider


def mp3_seconds(data: bytes) -> float:
    import av

    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.audio[0]
        samples = sum(frame.samples for frame in container.decode(stream))
        return samples / stream.rate


def test_provider_speech_through_the_sdk(api, speech_fake):
    from tests.fake_audio import TONE_S_PER_CHAR

    provider_voice(api, speech_fake.base_url, speed=1.25)
    r = speak(api, {"text": SIXTY})
    assert r.status == 200, r
    assert r.headers["Content-Type"] == "audio/mpeg" and r.headers["X-Content-Type-Options"] == "nosniff"
    assert abs(mp3_seconds(r.body) - TONE_S_PER_CHAR * len(SIXTY)) < 0.2
    sent = speech_fake.of("speech")[-1]
    assert sent.body == {"model": "tts-1", "input": SIXTY, "voice": "alloy", "response_format": "mp3",
                         "speed": 1.25}
    assert sent.headers["authorization"] == "Bearer sk-test-not-real"
    # The request's voice wins over the default; text goes as it is, quotes, newlines and all.
    hostile = "-v x $(id) `id` \"quoted\" 'single'\nnext line"
    r = speak(api, {"text": hostile, "voice": "nova"})
    assert r.status == 200 and r.headers["Content-Type"] == "audio/mpeg", r
    assert speech_fake.of("speech")[-1].body["voice"] == "nova"
    assert speech_fake.of("speech")[-1].body["input"] == hostile


def test_provider_voice_from_the_setting(api, speech_fake):
    provider_voice(api, speech_fake.base_url, voice="shimmer")
    assert speak(api, {"text": THREE}).status == 200
    assert speech_fake.of("speech")[-1].body["voice"] == "shimmer"
    assert speech_fake.of("speech")[-1].body["speed"] == 1.0


def test_provider_turned_off_or_without_key_is_a_409_with_its_sentence(api, speech_fake):
    provider = provider_voice(api, speech_fake.base_url)
    r = api.patch(f"/api/providers/{provider['id']}", {"enabled": False})
    assert r.status == 200, r
    r = speak(api, {"text": THREE})
    assert r.status == 409, r
    assert r.body["error"]["message"] == ("Fake Voice is turned off. Turn it on in Settings → Providers, or pick "
                                          "another in Settings → Voice.")
    provider_voice(api, speech_fake.base_url, kind="openai", api_key=None)
    r = speak(api, {"text": THREE})
    assert r.status == 409 and "has no API key" in r.body["error"]["message"], r
    assert speech_fake.requests == []


def test_provider_failure_is_a_502_naming_it_and_its_status(api, speech_fake):
    from tests.fake_audio import Answer

    provider_voice(api, speech_fake.base_url)
    for status, words in ((500, "failed while reading aloud (HTTP 500): 'The voice box is broken'."),
                          (401, "refused the API key (HTTP 401)"), (404, "no speech model 'tts-1'"),
                          (429, "(HTTP 429)"), (400, "refused to read this aloud with tts-1 (HTTP 400)")):
        speech_fake.answer("speech", Answer(status=status, message="The voice box is broken"))
        before = len(speech_fake.of("speech"))
        r = speak(api, {"text": THREE})
        assert r.status == 502, (status, r)
        message = r.body["error"]["message"]
        assert message.startswith("Fake Voice ") and words in message, message
        assert len(speech_fake.of("speech")) == before + 1  # the SDK retries nothing


class NotAudio:
    """A server on loopback that answers every request 200 with a web page labelled audio/mpeg."""

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                page = b"<html><body>Sign in to continue</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "audio/mpeg")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_provider_answer_that_is_not_audio_or_unreachable(api):
    fake = NotAudio()
    try:
        provider_voice(api, fake.base_url)
        r = speak(api, {"text": THREE})
        assert r.status == 502 and "not WAV, MP3 or Ogg" in r.body["error"]["message"], r
    finally:
        fake.close()
    r = speak(api, {"text": THREE})  # nothing listens there now
    assert r.status == 502, r
    assert r.body["error"]["message"] == f"Fake Voice could not be reached at {fake.base_url} to read aloud. " \
                                         f"Check that it is running."


def test_audio_types_are_told_from_the_bytes():
    from backend.features.voice import tts_audio
    from tests.fake_audio import encoded_tone

    assert tts_audio.mime_of(encoded_tone(0.3, "wav")) == "audio/wav"
    assert tts_audio.mime_of(encoded_tone(0.3, "mp3")) == "audio/mpeg"
    assert tts_audio.mime_of(encoded_tone(0.3, "opus")) == "audio/ogg"
    for other in (encoded_tone(0.3, "flac"), encoded_tone(0.3, "aac"), b"<html>", b"", b"RIFF\x00\x00\x00\x00AVI "):
        assert tts_audio.mime_of(other) is None
