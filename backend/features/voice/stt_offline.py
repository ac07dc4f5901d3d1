"""Speech to text with no network and no key: pocketsphinx and the US English model inside its package.

A Decoder takes about half a second to load its model and is not thread-safe, so the process keeps
one, made on first use; a transcription holds its lock while it listens (decoding the upload with
PyAV happens before, outside the lock). The search skips the second (flat-lexicon) pass and the
lattice's best path: on the recorded speech of the tests that is both faster and more accurate.
"""
from __future__ import annotations

import threading

# `dither` adds a trace of noise: on digital silence (all zeros) the model otherwise hears a word.
CONFIG = {"loglevel": "FATAL", "fwdflat": False, "bestpath": False, "dither": True, "seed": 11}

_lock = threading.Lock()
_decoder = None


def _get():
    """The process's decoder, made on first use (call with the lock held)."""
    global _decoder
    if _decoder is None:
        from pocketsphinx import Decoder  # type: ignore[import-untyped]

        _decoder = Decoder(**CONFIG)
    return _decoder


def warm() -> None:
    """Load the model now (a benchmark's setup), so the first transcription does not pay for it."""
    with _lock:
        _get()


def transcribe(pcm: bytes) -> str:
    """The words heard in 16 kHz mono 16-bit little-endian samples ("" for none)."""
    with _lock:
        decoder = _get()
        decoder.start_utt()
        try:
            decoder.process_raw(pcm, False, True)  # the whole recording is one utterance
        finally:
            decoder.end_utt()
        hyp = decoder.hyp()
    return " ".join(hyp.hypstr.split()) if hyp is not None else ""
