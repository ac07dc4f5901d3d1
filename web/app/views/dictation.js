// Dictation (CONTRACT §14): the microphone button by the message box. A click starts recording and
// a second click stops it; pressing and holding the button (or Space / Enter on it) records until
// it is let go. While recording, a level meter (an AnalyserNode) and the time recorded show; Esc
// cancels and nothing is sent. The recording (MediaRecorder: WebM/Opus where the browser has it,
// else MP4 or Ogg) goes to POST /api/audio/transcriptions, and the transcript lands in the message
// box at the cursor, or is sent at once with settings.voice.send_dictation. What goes wrong (no
// microphone, permission refused, the server's 413 / 422 sentence) is said in the composer.
import { h } from "../dom.js";
import { answer } from "../api.js";
import { app } from "../store.js";
import { icon } from "../attachments.js";

// A microphone (Feather's "mic", MIT).
const MIC_ICON = ["M12 1a3 3 0 0 0-3 3v8a3 3 0 0 0 6 0V4a3 3 0 0 0-3-3z", "M19 10v2a7 7 0 0 1-14 0v-2", "M12 19v4",
  "M8 23h8"];
const HOLD_MS = 400; // a press longer than this is held: letting go stops
const LIMIT_S = 600; // the server takes 10 minutes at most
export const RECORDING_TYPES = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/mp4", "audio/webm", "audio/ogg"];
const EXTENSION = { "audio/webm": "webm", "audio/ogg": "ogg", "audio/mp4": "m4a" };

/** The sentence for a getUserMedia failure. */
function micError(err) {
  switch (err?.name) {
    case "NotAllowedError":
    case "SecurityError":
      return "Numi may not use the microphone. Allow it in your system's (or browser's) settings, then try again.";
    case "NotFoundError":
    case "OverconstrainedError":
      return "No microphone was found. Connect one, then try again.";
    case "NotReadableError":
      return "The microphone could not be opened: another program may be using it.";
    default:
      return `The microphone could not be opened${err?.message ? `: ${err.message}` : "."}`;
  }
}

const clock = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;

export class Dictation {
  /** @param hooks {{insert(text), send(text), say(text), disabled(): boolean}} */
  constructor(hooks) {
    this.hooks = hooks;
    this.state = "idle"; // idle | starting | recording | sending
    this.button = h("button", { type: "button", class: "ghost icon-btn mic-btn", "aria-label": "Dictate",
      "aria-pressed": "false", "aria-describedby": "dictation-status",
      title: "Dictate: click to start and again to stop, or hold while you speak",
      onpointerdown: (e) => this._pointerDown(e), onpointerup: () => this._release(),
      onpointercancel: () => this._release(), onkeydown: (e) => this._key(e, true), onkeyup: (e) => this._key(e, false),
      onclick: (e) => this._click(e) }, icon("mic", MIC_ICON));
    this.fill = h("span", { class: "mic-level-fill" });
    this.level = h("span", { class: "mic-level", "aria-hidden": "true" }, this.fill);
    this.time = h("span", { class: "mic-time", "aria-hidden": "true" }, "0:00");
    this.words = h("span", { class: "mic-words", id: "dictation-status", role: "status" });
    this.el = h("div", { class: "dictation", hidden: true, dataset: { state: "idle" } }, this.level, this.time, this.words);
    this.onEscape = (e) => {
      if (e.key !== "Escape" || (this.state !== "recording" && this.state !== "starting")) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      this.cancel();
    };
  }

  // --- pressing ---------------------------------------------------------------------------------

  _pointerDown(e) {
    if (e.button !== 0) return;
    this.pointer = true; // the click that follows is this press's
    this.button.setPointerCapture?.(e.pointerId);
    this._press();
  }

  _key(e, down) {
    if (e.key !== " " && e.key !== "Enter") return;
    e.preventDefault(); // no click: the key is the press
    if (down && !e.repeat) this._press();
    else if (!down) this._release();
  }

  _click(e) {
    if (this.pointer) { this.pointer = false; return; }
    // A click with no press before it (assistive technology): a toggle.
    e.preventDefault();
    if (this.state === "recording" || this.state === "starting") this.stop();
    else this.start();
  }

  _press() {
    if (this.state === "recording" || this.state === "starting") { this.held = false; this.stop(); return; }
    if (this.state !== "idle") return;
    this.held = true;
    this.pressAt = performance.now();
    this.start();
  }

  _release() {
    if (this.held && performance.now() - this.pressAt >= HOLD_MS) this.stop();
    this.held = false;
  }

  // --- recording --------------------------------------------------------------------------------

  async start() {
    if (this.state !== "idle" || this.hooks.disabled()) return;
    this.hooks.say("");
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder !== "function") {
      this.hooks.say("This window cannot record sound, so dictation is not available here.");
      return;
    }
    this._set("starting", "Opening the microphone…");
    document.addEventListener("keydown", this.onEscape, true);
    this.stopWanted = false;
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (err) {
      this._reset();
      this.hooks.say(micError(err));
      return;
    }
    if (this.state !== "starting") { stream.getTracks().forEach((t) => t.stop()); return; } // cancelled meanwhile
    const type = RECORDING_TYPES.find((t) => MediaRecorder.isTypeSupported(t));
    try {
      this.recorder = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
    } catch (err) {
      stream.getTracks().forEach((t) => t.stop());
      this._reset();
      this.hooks.say(`Sound cannot be recorded here: ${err.message}`);
      return;
    }
    this.stream = stream;
    this.chunks = [];
    this.recorder.ondataavailable = (e) => { if (e.data?.size) this.chunks.push(e.data); };
    this.recorder.start();
    this.startedAt = performance.now();
    this._meter(stream);
    this._set("recording", "Recording. Click the microphone again to stop, or press Esc to cancel.");
    if (this.stopWanted) this.stop();
  }

  /** Stop recording and send what was said. */
  stop() {
    if (this.state === "starting") { this.stopWanted = true; return; }
    if (this.state !== "recording") return;
    const recorder = this.recorder;
    const type = recorder.mimeType || "audio/webm";
    this._set("sending", "Transcribing…");
    recorder.onstop = () => {
      const blob = new Blob(this.chunks, { type });
      this._release_devices();
      this._transcribe(blob, type);
    };
    recorder.stop();
  }

  /** Stop recording and send nothing. */
  cancel() {
    if (this.state === "starting") { this._reset(); return; }
    if (this.state !== "recording") return;
    this.recorder.onstop = null;
    this.recorder.stop();
    this._release_devices();
    this._reset();
    this.hooks.say("Dictation cancelled.");
  }

  async _transcribe(blob, type) {
    const form = new FormData();
    form.append("file", blob, `dictation.${EXTENSION[type.split(";")[0]] || "webm"}`);
    try {
      const r = await answer(fetch("/api/audio/transcriptions", { method: "POST", credentials: "same-origin", body: form }));
      const text = (r?.text || "").trim();
      if (!text) this.hooks.say("Nothing was heard in the recording.");
      else if (app.settings?.voice?.send_dictation) this.hooks.send(text);
      else this.hooks.insert(text);
    } catch (err) {
      this.hooks.say(err.message);
    } finally {
      this._reset();
    }
  }

  /** The level meter and the time recorded, each frame while recording. */
  _meter(stream) {
    try {
      this.audio = new AudioContext();
      const analyser = this.audio.createAnalyser();
      analyser.fftSize = 1024;
      this.audio.createMediaStreamSource(stream).connect(analyser);
      this.samples = new Float32Array(analyser.fftSize);
      this.analyser = analyser;
    } catch {
      this.analyser = null; // no meter; the recording goes on
    }
    const tick = () => {
      if (this.state !== "recording") return;
      const s = (performance.now() - this.startedAt) / 1000;
      const shown = clock(s);
      if (this.time.textContent !== shown) this.time.textContent = shown;
      if (this.analyser) {
        this.analyser.getFloatTimeDomainData(this.samples);
        let sum = 0;
        for (const v of this.samples) sum += v * v;
        // RMS in dB, -60…0 → 0…1: speech fills the bar's middle.
        const db = 20 * Math.log10(Math.sqrt(sum / this.samples.length) || 1e-6);
        const level = Math.max(0, Math.min(1, (db + 60) / 60));
        this.fill.style.transform = `scaleX(${level.toFixed(3)})`;
        this.el.dataset.level = level.toFixed(2);
      }
      if (s >= LIMIT_S) { this.stop(); return; }
      this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
  }

  _release_devices() {
    cancelAnimationFrame(this.frame);
    this.stream?.getTracks().forEach((t) => t.stop());
    this.stream = null;
    this.audio?.close().catch(() => {});
    this.audio = null;
    this.analyser = null;
  }

  _set(state, words) {
    this.state = state;
    this.el.hidden = state === "idle";
    this.el.dataset.state = state;
    this.button.setAttribute("aria-pressed", String(state === "recording" || state === "starting"));
    this.button.setAttribute("aria-label", state === "recording" ? "Stop dictating and transcribe" : "Dictate");
    this.button.disabled = state === "sending";
    this.words.textContent = words;
    if (state === "recording") this.time.textContent = "0:00";
  }

  _reset() {
    document.removeEventListener("keydown", this.onEscape, true);
    this._release_devices();
    this.recorder = null;
    this.chunks = [];
    this.held = false;
    const had = this.button.contains(document.activeElement);
    this._set("idle", "");
    if (had) this.button.focus();
  }
}
