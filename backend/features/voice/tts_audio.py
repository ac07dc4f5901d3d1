"""What the speech engines share: the spoken audio, the failure with its HTTP status, and WAV/AIFF handling.

Audio is served only as one of the three types CONTRACT §14 names, told from its first bytes (never
from what a server claims), so nothing that is not audio is ever served as audio.
"""
from __future__ import annotations

import io
import struct
import wave
from dataclasses import dataclass

from backend.core.text import well_formed

WAV, MPEG, OGG = "audio/wav", "audio/mpeg", "audio/ogg"


class SpeechFailed(Exception):
    """No audio: `status` is the HTTP status to answer, the message a sentence a person can act on."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(well_formed(message))
        self.status, self.code, self.message, self.field = status, code, well_formed(message), field


@dataclass(frozen=True)
class Speech:
    data: bytes
    mime: str


def mime_of(data: bytes) -> str | None:
    """audio/wav, audio/mpeg or audio/ogg from the bytes' signature; None for anything else."""
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return WAV
    if data[:4] == b"OggS":
        return OGG
    # An ID3 tag, or an MPEG audio frame's sync word with a layer (ADTS AAC has the sync and layer 0).
    if data[:3] == b"ID3" or (len(data) >= 2 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0 and data[1] & 0x06):
        return MPEG
    return None


def tidy_wav(data: bytes) -> bytes:
    """A streamed WAV (its sizes left at 0x7FFFFFFF, as `espeak-ng --stdout` writes) with true sizes."""
    try:
        with wave.open(io.BytesIO(data), "rb") as src:
            params = src.getparams()
            frames = src.readframes(src.getnframes())
    except (wave.Error, EOFError, struct.error) as exc:
        raise SpeechFailed(502, "engine_failed", f"The offline voice wrote audio that is not a WAV file ({exc}). "
                                                 f"Reinstall it, or pick a provider in Settings → Voice.") from None
    return pcm_wav(frames, params.nchannels, params.sampwidth, params.framerate)


def pcm_wav(frames: bytes, channels: int, width: int, rate: int) -> bytes:
    """A WAV file holding these interleaved little-endian PCM frames."""
    out = io.BytesIO()
    with wave.open(out, "wb") as dst:
        dst.setnchannels(channels)
        dst.setsampwidth(width)
        dst.setframerate(rate)
        dst.writeframes(frames)
    return out.getvalue()


def aiff_to_wav(path: str) -> bytes:
    """An AIFF file (macOS `say -o`) as 16-bit WAV: read with PyAV (aifc left Python in 3.13), written with wave."""
    import av

    try:
        with av.open(path) as container:
            stream = container.streams.audio[0]
            channels = 1 if stream.channels == 1 else 2
            layout = "mono" if channels == 1 else "stereo"
            rate = stream.rate or 22050
            resampler = av.AudioResampler(format="s16", layout=layout, rate=rate)
            pcm = bytearray()
            for frame in container.decode(stream):
                for out in resampler.resample(frame):
                    pcm += bytes(out.planes[0])[: out.samples * 2 * channels]
            for out in resampler.resample(None):
                pcm += bytes(out.planes[0])[: out.samples * 2 * channels]
    except (av.FFmpegError, IndexError) as exc:
        raise SpeechFailed(502, "engine_failed", f"The offline voice wrote audio Numi cannot read ({exc}). Try "
                                                 f"again, or pick a provider in Settings → Voice.") from None
    return pcm_wav(bytes(pcm), channels, 2, rate)
