"""UI benchmark: a reply read aloud as it streams (settings.voice.auto_read), in headless Chromium (the e2e
tests' browser and flags, tests/e2e/ui.py, with the autoplay policy off; nothing is downloaded).

Text to speech goes through the provider engine to the loopback fake of the OpenAI audio API
(tests/fake_audio.py), which answers each sentence with real WAV audio (a tone, 20 ms a character) after
a fixed delay (NUMI_BENCH_VOICE_TTS_DELAY_MS, 150). The fake provider streams a reply of
NUMI_BENCH_VOICE_SENTENCES sentences (8) in 4-character tokens at NUMI_BENCH_VOICE_TPS tokens a second
(60): faster than the sentences are spoken, so a silence between two sentences is the reader's, not a
sentence still to be written. NUMI_BENCH_VOICE_REPLIES replies (5) are read, one after another.

Measured in the page from the reader's own `numi-read-aloud` events (web/app/read-aloud.js): first audio
= the first sentence heard (its start on the audio clock, as performance.now() time) minus the moment it
was complete in the stream (queued); gaps = the silence on the audio clock between one sentence's end and
the next one's start. Targets: first audio ≤ 1.5 s, no gap over 300 ms; PASS / MISS is printed with the
medians and ranges, and the test fails only when grossly off (3x). Figures go to
test-artifacts/bench/voice_ui.json.
"""
from __future__ import annotations

import os
import platform
import statistics

import pytest

from tests.e2e.ui import CHROMIUM, CHROMIUM_ARGS, sign_in, wait_chat_ready
from tests.fake_audio import Answer, FakeAudio
from tests.fakeprovider import script as S

from .conftest import on_target, size, write_artifact

REPLIES = size("NUMI_BENCH_VOICE_REPLIES", 5, 1)
SENTENCES = size("NUMI_BENCH_VOICE_SENTENCES", 8, 3)
TPS = float(os.environ.get("NUMI_BENCH_VOICE_TPS", "60"))
TTS_DELAY_S = float(os.environ.get("NUMI_BENCH_VOICE_TTS_DELAY_MS", "150")) / 1000
FIRST_AUDIO_TARGET_MS = 1500.0
GAP_TARGET_MS = 300.0
GROSS = 3.0

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"the browser benchmark needs {CHROMIUM}")

LISTEN = r"""
(() => {
  const log = window.__voiceBench = [];
  window.addEventListener("numi-read-aloud", (e) => log.push(e.detail));
})();
"""

WORDS = ("the quick reader speaks each sentence as soon as it is complete while the model goes on writing "
         "the next one so that nobody waits").split()


def reply_text(n: int, seed: int) -> str:
    out = []
    for i in range(n):
        words = [WORDS[(seed * 7 + i * 5 + j) % len(WORDS)] for j in range(9 + (i % 4))]
        out.append(f"Sentence {i + 1} of reply {seed + 1}: " + " ".join(words) + ".")
    return " ".join(out)


def streamed(text: str) -> list[dict]:
    """The reply in 4-character tokens at TPS tokens a second."""
    steps: list[dict] = []
    for i in range(0, len(text), 4):
        steps += [S.delay(1 / TPS), S.text(text[i:i + 4])]
    return steps


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                               args=CHROMIUM_ARGS + ["--autoplay-policy=no-user-gesture-required"])
        yield b
        b.close()


def spread(values: list[float]) -> str:
    if not values:
        return "none"
    return f"median {statistics.median(values):.0f} ms (range {min(values):.0f}–{max(values):.0f})"


def test_a_streaming_reply_is_read_aloud_without_waiting_or_gaps(browser, setup):
    with FakeAudio() as audio:
        audio.answer("speech", Answer(delay_s=TTS_DELAY_S))
        r = setup.api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake Audio",
                                              "base_url": audio.base_url, "api_key": "sk-bench"})
        assert r.status == 201, r
        r = setup.api.patch("/api/settings", {"voice": {
            "stt": {"backend": "offline"}, "auto_read": True,
            "tts": {"backend": "provider", "provider_id": r.body["id"], "model": "tts-1", "voice": "alloy"}}})
        assert r.status == 200, r
        chat = setup.chat(title="Bench voice")
        ctx = browser.new_context(viewport={"width": 1100, "height": 760}, color_scheme="light")
        ctx.set_default_timeout(120_000)
        ctx.add_init_script(LISTEN)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        sign_in(page, setup.server, f"/c/{chat}")
        wait_chat_ready(page, "Bench voice")

        first_audio: list[float] = []
        gaps: list[float] = []
        for n in range(REPLIES):
            page.evaluate("window.__voiceBench.length = 0")
            setup.fake.enqueue(streamed(reply_text(SENTENCES, n)))
            box = page.locator(".composer-input")
            box.fill(f"Reply {n + 1}, please.")
            box.press("Enter")
            # Read to its end: the last sentence heard to its end.
            page.wait_for_function(f"""() => window.__voiceBench.some((e) => e.kind === "end" && e.index === {SENTENCES - 1})
                                          || window.__voiceBench.some((e) => e.kind === "error")""", timeout=120_000)
            events = page.evaluate("window.__voiceBench")
            assert not [e for e in events if e["kind"] == "error"], events
            queued = {e["index"]: e["at"] for e in events if e["kind"] == "queue"}
            plays = {e["index"]: e for e in events if e["kind"] == "play"}
            assert sorted(plays) == list(range(SENTENCES)), events
            first_audio.append(plays[0]["at"] - queued[0])
            gaps += [plays[i]["gapMs"] for i in range(1, SENTENCES)]
        requests = len(audio.of("speech"))
        ctx.close()
    assert not errors, errors
    assert requests == REPLIES * SENTENCES

    worst_first, worst_gap = max(first_audio), max(gaps)
    verdict_first = "PASS" if worst_first <= FIRST_AUDIO_TARGET_MS else "MISS"
    verdict_gap = "PASS" if worst_gap <= GAP_TARGET_MS else "MISS"
    result = {
        "replies": REPLIES, "sentences": SENTENCES, "tokens_per_s": TPS, "tts_delay_ms": TTS_DELAY_S * 1000,
        "first_audio_ms": [round(v, 1) for v in first_audio], "gaps_ms": [round(v, 1) for v in gaps],
        "first_audio_target_ms": FIRST_AUDIO_TARGET_MS, "gap_target_ms": GAP_TARGET_MS,
        "verdict": {"first_audio": verdict_first, "gaps": verdict_gap},
    }
    print("\n".join([
        "", "UI benchmark: a reply read aloud as it streams (headless Chromium, provider TTS on a loopback fake)",
        "-" * 78,
        f"{REPLIES} replies of {SENTENCES} sentences at {TPS:.0f} tokens/s; speech answered after {TTS_DELAY_S * 1000:.0f} ms",
        f"first audio after the first sentence completed: {spread(first_audio)}, target ≤ {FIRST_AUDIO_TARGET_MS:.0f}"
        f"  {verdict_first}",
        f"gap between sentences: {spread(gaps)}, target ≤ {GAP_TARGET_MS:.0f}  {verdict_gap}",
        "-" * 78]))
    write_artifact("voice_ui.json", {"machine": {"platform": platform.platform(), "cpus": os.cpu_count()}, "run": result})
    assert on_target(worst_first <= GROSS * FIRST_AUDIO_TARGET_MS), result
    assert on_target(worst_gap <= GROSS * GAP_TARGET_MS), result
