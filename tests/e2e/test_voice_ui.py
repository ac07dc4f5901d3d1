"""Voice in a real Chromium (CONTRACT §14) against the real server, the fake provider and the loopback fake of
the OpenAI audio API (tests/fake_audio.py): a reply's speaker button reads it sentence by sentence (code as
"Code block.", never its reasoning) and stops at once when pressed again, on Esc or on the composer's Stop;
with auto-read a reply is read while it still streams; Settings → Voice saves the whole object, says a
refusal under its field and each engine's problem; dictation records from Chromium's fake microphone (the
LibriVox sentence of tests/fixtures/audio) and the offline engine's transcript lands in the message box,
or is sent at once; Esc cancels a recording with nothing sent; a provider's failure is said in the composer.

This module launches its own Chromium: the shared one has no fake microphone, and reading aloud in a page
no one clicked needs the autoplay policy off. Every wait is on the page's DOM, its `numi-read-aloud`
events, the fake's recorded requests or the fake provider's parked stream; the one wait for something
not to happen ends when the audio clock has passed everything that was scheduled to play.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, CHROMIUM_ARGS, open_chat, replies, send, sign_in
from tests.fake_audio import Answer, FakeAudio
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

SPEECH_WAV = Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "librivox-0880.wav"
VOICE_ARGS = ["--autoplay-policy=no-user-gesture-required", "--use-fake-device-for-media-stream",
              "--use-fake-ui-for-media-stream", f"--use-file-for-fake-audio-capture={SPEECH_WAV}"]
REFERENCE = "he was not an ill disposed young man"

# Every sentence read, every sound started and how it ended (the audio clock), for the assertions.
LISTEN = r"""
(() => {
  const log = window.__speech = { events: [], sources: [] };
  window.addEventListener("numi-read-aloud", (e) => log.events.push(e.detail));
  const start = AudioBufferSourceNode.prototype.start;
  AudioBufferSourceNode.prototype.start = function (when = 0, ...rest) {
    const rec = { when, duration: this.buffer?.duration ?? 0, endedAt: null };
    log.sources.push(rec);
    this.addEventListener("ended", () => { rec.endedAt = this.context.currentTime; });
    return start.call(this, when, ...rest);
  };
})();
"""

LONG = ("This first sentence is long enough to be heard for a good while, so the test can stop the reading "
        "while it still plays.")
REPLY = (f"<think>A thought in the text. Never read.</think>{LONG}\n\n```python\nprint('not. read. aloud.')\n```\n\n"
         "The second sentence comes after the code. A third one is here! Is this the fourth? "
         "The fifth has [a link](https://example.com/page) in it.\n\n- A list item ends here")
SPOKEN = [LONG, "Code block.", "The second sentence comes after the code.", "A third one is here!", "Is this the fourth?",
          "The fifth has a link in it.", "A list item ends here"]


@pytest.fixture(scope="module")
def voice_browser(browser):
    b = browser.browser_type.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + VOICE_ARGS, headless=True)
    yield b
    b.close()


@pytest.fixture
def vpage(voice_browser):
    ctx = voice_browser.new_context(viewport={"width": 1100, "height": 760}, color_scheme="light")
    ctx.set_default_timeout(15_000)
    p = ctx.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.add_init_script(LISTEN)
    yield p
    ctx.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture
def audio():
    with FakeAudio() as fake:
        yield fake


def audio_provider(setup, audio) -> str:
    r = setup.api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake Audio", "base_url": audio.base_url,
                                          "api_key": "sk-audio-test"})
    assert r.status == 201, r
    return r.body["id"]


def use_voice(setup, **voice) -> dict:
    r = setup.api.patch("/api/settings", {"voice": voice})
    assert r.status == 200, r
    return r.body["voice"]


def speak_with_fake(setup, audio, auto_read: bool = False) -> str:
    pid = audio_provider(setup, audio)
    use_voice(setup, stt={"backend": "offline"}, tts={"backend": "provider", "provider_id": pid, "model": "tts-1",
                                                      "voice": "alloy"}, auto_read=auto_read)
    return pid


def said(audio) -> list[str]:
    return [r.body["input"] for r in audio.of("speech")]


def chat_with_reply(setup, text: str, reasoning: str = "") -> str:
    chat = setup.chat(title="Voice")
    setup.fake.enqueue(([S.reasoning(reasoning)] if reasoning else []) + [S.text(text)])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="Tell me things.")
    sock.until("turn_end", timeout=30)
    sock.close()
    return chat


def wait_page(page, script: str, what: str, arg=None, timeout_ms: int = 15_000) -> None:
    try:
        page.wait_for_function(script, arg=arg, timeout=timeout_ms)
    except Exception as exc:  # say what did not happen
        raise AssertionError(f"timed out waiting until {what}") from exc


def wait_silent_past_schedule(page) -> None:
    """Wait until the page's clock is past the end of every sound that was ever scheduled."""
    wait_page(page, """() => {
      const s = window.__speech.events.filter((e) => e.kind === "play");
      const end = Math.max(0, ...s.map((e) => e.at + e.duration * 1000));
      return performance.now() > end + 300;
    }""", "every scheduled sentence would have ended", timeout_ms=30_000)


def test_the_speaker_reads_a_reply_in_order_and_stops_at_once(vpage, setup, audio):
    page = vpage
    speak_with_fake(setup, audio)
    chat = chat_with_reply(setup, REPLY, reasoning="Reasoning is never read aloud.")
    open_chat(page, setup.server, chat, "Voice")
    reply = replies(page).last
    speaker = reply.get_by_role("button", name="Read aloud")
    expect(speaker).to_have_attribute("aria-pressed", "false")

    # Pressed: the first sentences are asked for at once (one to play, two ahead), in order.
    speaker.click()
    expect(speaker).to_have_attribute("aria-pressed", "true")
    audio.wait_requests("speech", 3)
    wait_page(page, "() => window.__speech.events.some((e) => e.kind === 'play' && e.index === 0)", "the first sentence plays")
    assert said(audio)[:3] == SPOKEN[:3]

    # Pressed again while the first (long) sentence plays: every sound stops now, and nothing more is asked.
    speaker.click()
    expect(speaker).to_have_attribute("aria-pressed", "false")
    asked = len(audio.of("speech"))
    wait_page(page, "() => window.__speech.sources.length > 0 && window.__speech.sources.every((s) => s.endedAt !== null)",
              "every sound ended")
    sources = page.evaluate("window.__speech.sources")
    first = sources[0]
    assert first["endedAt"] < first["when"] + first["duration"] - 0.5, first  # cut short, not played out
    wait_silent_past_schedule(page)
    assert len(audio.of("speech")) == asked
    assert said(audio) == SPOKEN[:asked]

    # Pressed once more: read from the start to the end, every sentence once, then the button lets go.
    page.evaluate("window.__speech.events.length = 0")
    speaker.click()
    expect(speaker).to_have_attribute("aria-pressed", "true")
    expect(speaker).to_have_attribute("aria-pressed", "false", timeout=60_000)
    assert said(audio)[asked:] == SPOKEN
    plays = [e["text"] for e in page.evaluate("window.__speech.events") if e["kind"] == "play"]
    assert plays == SPOKEN

    # Esc stops it too.
    speaker.click()
    expect(speaker).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Escape")
    expect(speaker).to_have_attribute("aria-pressed", "false")


def test_a_refused_speech_request_is_said_once(vpage, setup, audio):
    page = vpage
    speak_with_fake(setup, audio)
    audio.answer("speech", Answer(status=500))
    chat = chat_with_reply(setup, "One sentence. Two sentences. Three sentences. Four.")
    open_chat(page, setup.server, chat, "Voice")
    speaker = replies(page).last.get_by_role("button", name="Read aloud")
    speaker.click()
    toast = page.locator(".toast", has_text="Fake Audio")
    expect(toast).to_have_count(1)
    expect(speaker).to_have_attribute("aria-pressed", "false")
    expect(page.locator(".toast")).to_have_count(1)


def test_auto_read_reads_a_reply_while_it_streams_and_stop_ends_it(vpage, setup, audio):
    page = vpage
    speak_with_fake(setup, audio, auto_read=True)
    chat = setup.chat(title="Voice")
    open_chat(page, setup.server, chat, "Voice")
    first = "The reply starts with this sentence."
    setup.fake.enqueue([S.reasoning("Thinking is not read."), S.text(f"{first} It goes "), S.hang(),
                        S.text("on with this one.\n\n```\ncode\n```\nAnd ends here.")])
    send(page, "Read to me.")
    # The first sentence is read while the model is still writing (its stream parked in the fake).
    audio.wait_requests("speech", 1)
    assert setup.fake.hanging == 1
    assert said(audio) == [first]
    speaker = replies(page).last.get_by_role("button", name="Read aloud")
    expect(speaker).to_have_attribute("aria-pressed", "true")
    setup.fake.release()
    audio.wait_requests("speech", 4)
    assert said(audio) == [first, "It goes on with this one.", "Code block.", "And ends here."]
    expect(speaker).to_have_attribute("aria-pressed", "false", timeout=30_000)

    # The composer's Stop ends the reply and its reading at once.
    setup.fake.enqueue([S.text("A second reply begins. "), S.hang(), S.text("Never heard.")])
    send(page, "Again.")
    audio.wait_requests("speech", 5)
    speaker2 = replies(page).last.get_by_role("button", name="Read aloud")
    expect(speaker2).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="Stop the reply (Esc)").click()
    expect(speaker2).to_have_attribute("aria-pressed", "false")
    setup.fake.release()
    wait_silent_past_schedule(page)
    assert said(audio)[4:] == ["A second reply begins."]


def test_voice_settings_round_trip(vpage, setup, audio):
    page = vpage
    pid = audio_provider(setup, audio)
    sign_in(page, setup.server, "/settings/voice")
    section = page.get_by_role("region", name="Voice", exact=True)
    tts_engine = section.locator("#set-voice-tts_backend")
    expect(tts_engine).to_have_value("offline")
    # The computer's own voices (espeak-ng's here) are offered for the offline engine.
    expect(section.locator("#set-voice-offline_voice option")).not_to_have_count(1)
    tts_engine.select_option("provider")
    section.locator("#set-voice-tts_provider").select_option(label="Fake Audio")
    section.get_by_label("Speech model").fill("tts-1")
    section.locator("#set-voice-tts_voice").fill("nova")
    section.get_by_label("Speed").fill("3")
    section.get_by_label("Read new replies aloud as they come").check()
    section.locator("#set-voice-stt_backend").select_option("provider")
    section.locator("#set-voice-stt_provider").select_option(label="Fake Audio")
    section.get_by_label("Transcription model").fill("whisper-1")
    section.get_by_role("button", name="Save").click()
    # Refused: the sentence under Speed, nothing saved.
    speed_err = section.locator("#set-voice-speed-err")
    expect(speed_err).to_contain_text("2")
    expect(section.get_by_label("Speed")).to_have_attribute("aria-invalid", "true")
    assert setup.api.get("/api/settings").body["voice"]["tts"]["backend"] == "offline"
    section.get_by_label("Speed").fill("1.5")
    section.get_by_role("button", name="Save").click()
    expect(section.locator(".form-status")).to_have_text("Saved.")
    voice = setup.api.get("/api/settings").body["voice"]
    assert voice["tts"] == {"backend": "provider", "provider_id": pid, "model": "tts-1", "voice": "nova", "speed": 1.5,
                            "problem": None}
    assert voice["stt"] == {"backend": "provider", "provider_id": pid, "model": "whisper-1", "problem": None}
    assert voice["auto_read"] is True and voice["send_dictation"] is False

    # Shown as saved after a reload; a provider turned off is said for both engines.
    r = setup.api.patch(f"/api/providers/{pid}", {"enabled": False})
    assert r.status == 200, r
    page.reload()
    section = page.get_by_role("region", name="Voice", exact=True)
    expect(section.locator("#set-voice-tts_backend")).to_have_value("provider")
    expect(section.get_by_label("Speech model")).to_have_value("tts-1")
    expect(section.get_by_label("Speed")).to_have_value("1.5")
    expect(section.get_by_label("Read new replies aloud as they come")).to_be_checked()
    expect(section.locator(".voice-problem")).to_have_count(2)
    for problem in section.locator(".voice-problem").all():
        expect(problem).to_contain_text("Fake Audio is turned off")


def record(page, until: str) -> None:
    """Click the microphone, wait until the recording shows `until` (m:ss), click it again."""
    page.get_by_role("button", name="Dictate").click()
    expect(page.locator(".dictation .mic-time")).to_have_text(until)
    expect(page.locator(".mic-btn")).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="Stop dictating and transcribe").click()


def test_dictation_puts_the_offline_transcript_in_the_box_at_the_cursor(vpage, setup):
    page = vpage
    chat = setup.chat(title="Voice")
    open_chat(page, setup.server, chat, "Voice")
    box = page.locator(".composer-input")
    box.fill("Before. After.")
    box.evaluate("(el) => el.setSelectionRange(7, 7)")
    transcriptions = []
    page.on("request", lambda r: transcriptions.append(r) if r.url.endswith("/api/audio/transcriptions") else None)
    record(page, "0:03")
    expect(page.locator(".dictation")).to_be_hidden(timeout=60_000)
    value = box.input_value()
    assert value.startswith("Before. ") and value.endswith(" After."), value
    heard = value[len("Before. "):-len(" After.")].lower().split()
    assert len(set(heard) & set(REFERENCE.split())) >= 4, value
    assert len(transcriptions) == 1
    assert transcriptions[0].headers["content-type"].startswith("multipart/form-data")

    # Esc while recording: nothing is sent, and the composer says so.
    mic = page.locator(".mic-btn")
    mic.click()
    expect(page.locator(".dictation .mic-time")).to_have_text("0:01")
    page.keyboard.press("Escape")
    expect(page.locator(".attach-error")).to_have_text("Dictation cancelled.")
    expect(page.locator(".dictation")).to_be_hidden()
    expect(mic).to_have_attribute("aria-pressed", "false")
    assert len(transcriptions) == 1

    # Held: pressing and holding records until it is let go (keyboard: Space held on the button).
    box.fill("")
    mic.focus()
    page.keyboard.down(" ")
    expect(page.locator(".dictation .mic-time")).to_have_text("0:03")
    page.keyboard.up(" ")
    expect(page.locator(".dictation")).to_be_hidden(timeout=60_000)
    assert len(set(box.input_value().lower().split()) & set(REFERENCE.split())) >= 4, box.input_value()
    assert len(transcriptions) == 2


def test_dictation_sent_at_once_and_a_provider_failure_said(vpage, setup, audio):
    page = vpage
    pid = audio_provider(setup, audio)
    audio.answer("transcriptions", Answer(text="Please summarise the last reply."))
    use_voice(setup, stt={"backend": "provider", "provider_id": pid, "model": "whisper-1"}, tts={"backend": "offline"},
              send_dictation=True)
    chat = setup.chat(title="Voice")
    open_chat(page, setup.server, chat, "Voice")
    setup.fake.enqueue([S.text("Done.")])
    record(page, "0:01")
    expect(page.locator("article.msg.user").last).to_contain_text("Please summarise the last reply.")
    (seen,) = audio.of("transcriptions")
    assert seen.fields["model"] == "whisper-1"
    filename, data = seen.files["file"]
    assert filename == "dictation.webm" and data[:4] == b"\x1a\x45\xdf\xa3"  # a WebM (EBML) file
    expect(page.locator(".composer-input")).to_have_value("")

    # The provider fails: its sentence is said in the composer, nothing is sent or typed.
    audio.answer("transcriptions", Answer(status=500))
    record(page, "0:01")
    expect(page.locator(".dictation")).to_be_hidden(timeout=60_000)
    expect(page.locator(".attach-error")).to_contain_text("Fake Audio")
    expect(page.locator(".composer-input")).to_have_value("")
    expect(page.locator("article.msg.user")).to_have_count(1)
