"""Audio a person sends, decoded with PyAV (FFmpeg's libraries inside the wheel; no ffmpeg binary).

WAV, MP3, OGG/Opus, WebM and M4A (the formats CONTRACT §14 names, and what browsers record) are
opened from any file object and resampled to 16 kHz mono 16-bit, what the offline recogniser hears.
The 10-minute limit is checked on the container's own duration before anything is decoded, and
again as frames come (a WebM from a browser's recorder states no duration), so decoding stops
once past it. Anything else (no audio stream, no frames, a header that promises more than the
file holds, bytes that are not audio) is NotAudio with a sentence the person can act on.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

MAX_SECONDS = 600.0  # 10 minutes (CONTRACT §14)
RATE = 16000  # what pocketsphinx's English model was trained on
# The containers FFmpeg names for the accepted formats, and the file extension each goes by.
FORMATS = {"wav": "wav", "mp3": "mp3", "ogg": "ogg", "matroska,webm": "webm", "mov,mp4,m4a,3gp,3g2,mj2": "m4a"}
ACCEPTED = "WAV, MP3, OGG/Opus, WebM or M4A"
BAD_PACKETS = 8  # packets a decoder may refuse (a damaged frame or two) before the file counts as broken
SHORTFALL_S = 0.25  # how far a WAV may fall short of its header's length (rounding, a cut last frame)


class NotAudio(ValueError):
    """The upload is not audio Numi can hear; the message says why and what to do."""


class TooLong(ValueError):
    """The audio is longer than MAX_SECONDS; the message names the limit."""


@dataclass(frozen=True)
class Audio:
    """Decoded audio: its length, its format's file extension and (when asked) 16 kHz mono s16le samples."""
    duration_s: float
    extension: str
    pcm: bytes = b""


def too_long() -> TooLong:
    return TooLong(f"The recording is longer than {MAX_SECONDS / 60:g} minutes, the most Numi transcribes. "
                   f"Send a shorter recording, or split it.")


def decode(source, keep_samples: bool = True) -> Audio:
    """`source` (a path or a binary file object) decoded; NotAudio or TooLong with a sentence.

    `keep_samples=False` only checks it (its length, that it decodes), as for a provider's API.
    """
    import av

    try:
        container = av.open(source, mode="r", metadata_errors="ignore")
    except (av.error.FFmpegError, ValueError, IndexError, OSError):
        raise _not_audio() from None
    try:
        audio = _decode(container, keep_samples)
    finally:
        container.close()
    if audio.extension == "wav":
        # A WAV's header states its length exactly (FFmpeg trims what it reports to the file's
        # size): less sound than stated is a file cut off, or a header that lies.
        stated = wav_stated_seconds(source)
        if stated is not None and audio.duration_s < stated - SHORTFALL_S:
            raise _not_audio(f"it is cut short (its header says {stated:.1f} s, it holds {audio.duration_s:.1f} s)")
    return audio


def wav_stated_seconds(source) -> float | None:
    """The length a RIFF/WAVE header states for its data chunk; None when it states none (a streamed
    WAV's 0 or 0xFFFFFFFF), the header cannot be read, or `source` cannot be read again."""
    head = _head(source, 64 * 1024)
    if head is None or len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
        return None
    at, byte_rate = 12, 0
    while at + 8 <= len(head):
        kind, size = head[at:at + 4], int.from_bytes(head[at + 4:at + 8], "little")
        if kind == b"fmt " and size >= 16:
            byte_rate = int.from_bytes(head[at + 16:at + 20], "little")
        elif kind == b"data":
            if not byte_rate or size in (0, 0xFFFFFFFF):
                return None
            return size / byte_rate
        at += 8 + size + (size & 1)
    return None


def _head(source, n: int) -> bytes | None:
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        with open(source, "rb") as f:
            return f.read(n)
    try:
        source.seek(0)
        head = source.read(n)
        source.seek(0)
    except (OSError, ValueError, AttributeError):
        return None
    return head if isinstance(head, bytes) else None


def _not_audio(detail: str = "it is not a recording Numi can read") -> NotAudio:
    return NotAudio(f"This file cannot be transcribed: {detail}. Send a {ACCEPTED} recording.")


def _decode(container, keep_samples: bool) -> Audio:
    import av

    extension = FORMATS.get(container.format.name)
    if extension is None:
        raise _not_audio(f"it is {container.format.long_name or container.format.name}, not a recording in an "
                         f"accepted format")
    streams = container.streams.audio
    if not streams:
        raise _not_audio("it holds no sound")
    stream = streams[0]
    declared = _declared_seconds(container, stream)
    if declared is not None and declared > MAX_SECONDS + 0.05:
        raise too_long()
    resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE) if keep_samples else None
    pcm = bytearray()
    seconds, bad = 0.0, 0
    try:
        for packet in container.demux(stream):
            try:
                frames = packet.decode()
            except (av.error.FFmpegError, ValueError):
                bad += 1
                if bad > BAD_PACKETS:
                    raise _not_audio("it is damaged (its sound does not decode)") from None
                continue
            for frame in frames:
                if not frame.samples or not frame.sample_rate:
                    continue
                seconds += frame.samples / frame.sample_rate
                if seconds > MAX_SECONDS + 0.05:
                    raise too_long()
                if resampler is not None:
                    _append(pcm, resampler.resample(frame))
        if resampler is not None:
            _append(pcm, resampler.resample(None))
    except av.error.FFmpegError:  # the demuxer itself gave up part way
        raise _not_audio("it is damaged (it stops where its format says more should come)") from None
    if seconds <= 0:
        raise _not_audio("it holds no sound (no audio frames)")
    return Audio(duration_s=round(seconds, 3), extension=extension, pcm=bytes(pcm))


def _declared_seconds(container, stream) -> float | None:
    """The length the file states (the stream's, else the container's), or None where it states none."""
    if stream.duration is not None and stream.time_base is not None and stream.duration > 0:
        return float(stream.duration * stream.time_base)
    if container.duration is not None and container.duration > 0:
        return container.duration / 1_000_000  # AV_TIME_BASE
    return None


def _append(pcm: bytearray, frames) -> None:
    for out in frames:
        # A plane may be padded past its samples: only `samples` 2-byte values are sound.
        pcm += bytes(out.planes[0])[:out.samples * 2]
