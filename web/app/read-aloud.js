// Reading a reply aloud (CONTRACT §14): its sentences (web/js/speech-text.js) spoken in order through
// POST /api/audio/speech. The next sentences are fetched while one plays, and each is scheduled on
// the Web Audio clock to start the moment the one before ends, so there is no gap to hear. Web
// Audio and not an <audio> element: the page's CSP keeps media to 'self', and a fetched answer can
// only be played as a blob: URL there. One reply is read at a time; stop() is at once (the fetches
// aborted, every sound stopped). There is no cap: a long reply is read to its end. The route's
// refusal is said once, as a toast, and ends the reading.
//
// Each step is told as a `numi-read-aloud` event on window ({kind: "queue"|"play"|"end"|"stop"|"error",
// id, index, text, at, gapMs, duration}), for tests and benchmarks: `at` is when a sentence was queued
// or is heard (performance.now() time), `gapMs` the silence before it after the sentence before.
import { toast } from "./views/toast.js";

const AHEAD = 2; // sentences fetched ahead of the one playing
const LEAD_S = 0.02; // a sentence ready after its turn starts this soon (the clock must not be in the past)

class SpeechError extends Error {}

/** The audio of one sentence: the route's bytes, or a SpeechError with its sentence. */
async function fetchSpeech(text, signal) {
  let res;
  try {
    res = await fetch("/api/audio/speech", { method: "POST", credentials: "same-origin", signal,
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text }) });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new SpeechError("Numi's backend is not answering, so the reply cannot be read aloud.");
  }
  if (!res.ok) {
    let message = `Reading aloud failed: the server answered ${res.status}.`;
    try { message = (await res.json())?.error?.message || message; } catch { /* not JSON */ }
    throw new SpeechError(message);
  }
  return res.arrayBuffer();
}

/** One reply being read: its sentences as they come, each fetched, decoded and scheduled in turn. */
class Reading {
  constructor(reader, id) {
    this.reader = reader;
    this.id = id;
    this.ids = new Set([id]); // a reply of several steps is read as one
    this.items = []; // {text, audio: Promise<AudioBuffer>|null, source}
    this.ended = false; // no more sentences will come
    this.played = 0; // sentences heard to their end
    this.scheduled = 0; // sentences given to the clock
    this.endAt = 0; // when the last scheduled one ends (AudioContext time)
    this.controller = new AbortController();
    this.stopped = false;
  }

  /** Queue sentences to be said after those before. */
  say(sentences) {
    if (this.stopped) return;
    for (const text of sentences) {
      if (!text.trim()) continue;
      this.items.push({ text, audio: null, fetched: false, buffer: null, source: null });
      this.reader._tell("queue", this, this.items.length - 1, text, { at: performance.now() });
    }
    this._pump();
  }

  /** No more sentences: the reading ends after the last one queued. */
  end() {
    this.ended = true;
    this._pump();
  }

  has(id) {
    return this.ids.has(id);
  }

  _pump() {
    if (this.stopped) return;
    const upto = Math.min(this.items.length, this.played + 1 + AHEAD);
    // One request at a time, in order: the server hears the sentences as they are said, and an
    // offline engine speaks one at a time anyway.
    for (let i = this.scheduled; i < upto; i++) {
      const item = this.items[i];
      if (item.audio) continue;
      if (i > 0 && !this.items[i - 1].fetched) break;
      const bytes = fetchSpeech(item.text, this.controller.signal);
      bytes.then(() => { item.fetched = true; this._pump(); }, () => {});
      item.audio = this.reader._decode(bytes);
      item.audio.then((buffer) => { item.buffer = buffer; this._schedule(); }, (err) => this._failed(err));
      break;
    }
    if (this.ended && this.played >= this.items.length) this.reader._finished(this);
  }

  /** Give each decoded sentence, in order, to the clock: it starts when the one before ends. */
  _schedule() {
    while (!this.stopped && this.scheduled < this.items.length && this.items[this.scheduled].buffer) {
      const index = this.scheduled;
      const item = this.items[index];
      const ctx = this.reader.context();
      const now = ctx.currentTime;
      const when = Math.max(now + LEAD_S, this.endAt);
      // The silence heard after the sentence before ended (none when this one was ready in time).
      const gapMs = index > 0 ? Math.max(0, (when - this.endAt) * 1000) : 0;
      const source = ctx.createBufferSource();
      source.buffer = item.buffer;
      source.connect(ctx.destination);
      source.onended = () => {
        if (this.stopped) return;
        this.played = Math.max(this.played, index + 1);
        this.reader._tell("end", this, index, item.text);
        this._pump();
      };
      source.start(when);
      item.source = source;
      this.endAt = when + item.buffer.duration;
      this.scheduled = index + 1;
      this.reader._tell("play", this, index, item.text, { at: performance.now() + (when - now) * 1000, gapMs,
                                                          duration: item.buffer.duration });
      this._pump();
    }
  }

  _failed(err) {
    if (this.stopped || err?.name === "AbortError") return;
    this.reader._tell("error", this, -1, err.message);
    toast(err instanceof SpeechError ? err.message : `The reply could not be read aloud: ${err.message}`, { ms: 8000 });
    this.reader.stop();
  }

  _stop() {
    this.stopped = true;
    this.controller.abort();
    for (const item of this.items) {
      try { item.source?.stop(); } catch { /* never started */ }
      item.source?.disconnect();
    }
  }
}

export class ReadAloud {
  constructor() {
    this.reading = null;
    this.ctx = null;
    this.listeners = new Set();
    // Esc stops reading (unless something on the page took the key first: a dialog, the composer).
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.reading && !e.defaultPrevented) this.stop();
    });
  }

  /** The page's one AudioContext, made on first use (after a click or a key: autoplay allows it). */
  context() {
    this.ctx ??= new AudioContext();
    if (this.ctx.state === "suspended") this.ctx.resume();
    return this.ctx;
  }

  async _decode(bytes) {
    const data = await bytes;
    try {
      return await this.context().decodeAudioData(data);
    } catch {
      throw new SpeechError("The speech the server sent could not be played.");
    }
  }

  /** Start reading reply `id` (whatever was read stops); say(), end() and has() on what it returns. */
  begin(id) {
    this.stop();
    this.context();
    this.reading = new Reading(this, id);
    this._changed();
    return this.reading;
  }

  /** Whether reply `id` is being read now. */
  isReading(id) {
    return !!this.reading?.has(id);
  }

  /** Stop at once: no more requests, nothing more heard. */
  stop() {
    const r = this.reading;
    if (!r) return;
    this.reading = null;
    r._stop();
    this._tell("stop", r, -1, "");
    this._changed();
  }

  /** fn() after each start and stop; returns what unsubscribes it. */
  onChange(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  _finished(reading) {
    if (this.reading !== reading) return;
    this.reading = null;
    this._changed();
  }

  _changed() {
    for (const fn of this.listeners) fn();
  }

  _tell(kind, reading, index, text, extra = {}) {
    window.dispatchEvent(new CustomEvent("numi-read-aloud", { detail: { kind, id: reading.id, index, text, ...extra } }));
  }
}

/** The page's reader. */
export const reader = new ReadAloud();
