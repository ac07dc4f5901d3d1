"""Voice (CONTRACT §14): how fast offline speech to text is, as a real-time factor.

In process, on the five recorded LibriVox sentences of tests/fixtures/audio (24.7 s of speech): each
run decodes every WAV with PyAV (audio_in, resampled to 16 kHz mono) and recognises it with Numi's
pocketsphinx decoder (stt_offline); the real-time factor is those seconds over the audio's seconds.
Baseline in the same run, in alternation: pocketsphinx's own defaults (its second flat-lexicon pass
and lattice best path on), on the same samples. Target: Numi's median RTF ≤ 0.5 on 2 cores; the
benchmark fails only when grossly off (RTF > GROSS_RTF). Word error rates of both are printed.
Medians and ranges go to test-artifacts/bench/voice_stt.json.
Knobs (env): NUMI_BENCH_STT_RUNS (5).
"""
from __future__ import annotations

import os
import statistics
import time

from backend.features.voice import audio_in, stt_offline
from tests.voice_audio import FIXTURES, NAMES, edits

from .conftest import SMOKE, on_target, size, write_artifact
from .test_history_scale import verdict

RUNS = size("NUMI_BENCH_STT_RUNS", 5, 1)
TARGET_RTF = 0.5
GROSS_RTF = 2.0


def test_offline_transcription_real_time_factor():
    from pocketsphinx import Decoder

    names = NAMES[:1] if SMOKE else NAMES
    paths = [FIXTURES / f"librivox-{name}.wav" for name in names]
    references = [p.with_suffix(".txt").read_text().strip() for p in paths]
    stt_offline.warm()
    started = time.monotonic()
    baseline = None if SMOKE else Decoder(loglevel="FATAL")

    def default_transcribe(pcm: bytes) -> str:
        assert baseline is not None
        baseline.start_utt()
        baseline.process_raw(pcm, False, True)
        baseline.end_utt()
        hyp = baseline.hyp()
        return hyp.hypstr if hyp is not None else ""

    # A smoke run only sees that the path works: the baseline's decoder costs seconds to load.
    sides = ("numi",) if SMOKE else ("numi", "default")
    rtf: dict[str, list[float]] = {who: [] for who in sides}
    errors = {who: [0, 0] for who in sides}
    for i in range(RUNS):
        for who in (sides if i % 2 == 0 else sides[::-1]):
            hear = stt_offline.transcribe if who == "numi" else default_transcribe
            seconds = audio_s = 0.0
            for path, reference in zip(paths, references):
                t = time.perf_counter()
                audio = audio_in.decode(str(path))
                text = hear(audio.pcm)
                seconds += time.perf_counter() - t
                audio_s += audio.duration_s
                if i == 0:
                    e, n = edits(reference, text)
                    errors[who][0] += e
                    errors[who][1] += n
            rtf[who].append(seconds / audio_s)
    wer = {who: e / n for who, (e, n) in errors.items()}
    median = {who: statistics.median(values) for who, values in rtf.items()}
    ratio = median["numi"] / median["default"] if "default" in median else None
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(), "runs": RUNS,
              "fixtures": len(paths), "rtf": {who: {"median": median[who], "min": min(v), "max": max(v), "all": v}
                                              for who, v in rtf.items()},
              "wer": wer, "ratio": ratio, "seconds": time.monotonic() - started}
    path = write_artifact("voice_stt.json", report)

    print(f"\nvoice_stt  {len(paths)} recordings, {RUNS} runs; {os.cpu_count()} CPUs")
    for who in sides:
        values = rtf[who]
        print(f"voice_stt  {who:>7}: RTF median {median[who]:.3f}, range {min(values):.3f}–{max(values):.3f}; "
              f"WER {wer[who]:.3f}")
    if ratio is not None:
        print(f"voice_stt  Numi's decoder takes {ratio:.2f}× the time of pocketsphinx's defaults")
    print(f"voice_stt  RTF target ≤ {TARGET_RTF} {verdict(median['numi'] <= TARGET_RTF)}")
    print(f"voice_stt  figures: {path}")
    assert on_target(median["numi"] <= GROSS_RTF), f"offline transcription RTF {median['numi']:.2f}"
