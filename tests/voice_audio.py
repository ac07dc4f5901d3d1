"""Audio for the voice tests, made at test time with PyAV: the recorded fixtures in other formats,
silent WAVs of any length, and a word error rate to hold transcripts to."""
from __future__ import annotations

import io
import struct
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "audio"
NAMES = ("0870", "0880", "0890", "0920", "0930")
# format → (container, codec, sample rate, file extension)
FORMATS = {"mp3": ("mp3", "libmp3lame", 16000, "mp3"), "ogg": ("ogg", "libopus", 48000, "ogg"),
           "webm": ("webm", "libopus", 48000, "webm"), "m4a": ("ipod", "aac", 16000, "m4a")}


def fixture(name: str) -> tuple[bytes, str]:
    """(the WAV's bytes, its transcript) of librivox-<name>."""
    wav = FIXTURES / f"librivox-{name}.wav"
    return wav.read_bytes(), wav.with_suffix(".txt").read_text().strip()


def encode(wav: bytes, fmt: str) -> bytes:
    """`wav` (mono 16-bit) encoded as `fmt` (mp3, ogg, webm, m4a) with PyAV."""
    import av

    container_fmt, codec, rate, _ = FORMATS[fmt]
    out = io.BytesIO()
    with av.open(io.BytesIO(wav)) as src, av.open(out, mode="w", format=container_fmt) as dst:
        stream = dst.add_stream(codec, rate=rate, layout="mono")
        resampler = av.AudioResampler(format=stream.codec_context.format, layout="mono", rate=rate)
        for frame in src.decode(audio=0):
            for piece in resampler.resample(frame):
                for packet in stream.encode(piece):
                    dst.mux(packet)
        for piece in resampler.resample(None):
            for packet in stream.encode(piece):
                dst.mux(packet)
        for packet in stream.encode(None):
            dst.mux(packet)
    return out.getvalue()


def wav_header(data_bytes: int, rate: int, channels: int = 1) -> bytes:
    """A 16-bit PCM WAV header stating `data_bytes` of samples."""
    return (b"RIFF" + struct.pack("<I", 36 + data_bytes) + b"WAVEfmt "
            + struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * 2 * channels, 2 * channels, 16)
            + b"data" + struct.pack("<I", data_bytes))


def silent_wav(seconds: float, rate: int = 8000) -> bytes:
    n = int(seconds * rate) * 2
    return wav_header(n, rate) + bytes(n)


def words(text: str) -> list[str]:
    return "".join(c if c.isalnum() or c == "'" else " " for c in text.lower()).split()


def edits(reference: str, hypothesis: str) -> tuple[int, int]:
    """(word-level edit distance, reference words)."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        diagonal, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (r != h))
    return row[len(hyp)], len(ref)


def wer(reference: str, hypothesis: str) -> float:
    """Word error rate: edits / reference words."""
    e, n = edits(reference, hypothesis)
    return e / max(1, n)
