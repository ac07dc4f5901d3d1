// A chat's replies read aloud (CONTRACT §14) through the page's reader (read-aloud.js): a reply's
// speaker button reads it from its start (and follows it while it still streams); with
// settings.voice.auto_read each new reply is read as it streams. It follows the chat session's
// events once applied (ChatSession.listen): each delta of a followed message is fed to that
// message's SpeechText (web/js/speech-text.js), whose complete sentences are queued at once.
// Every step of an answer (text, tool calls, more text) is read as one reading; a compare's columns
// and replies re-sent after a reload are not read by themselves.
import { reader } from "./read-aloud.js";
import { app } from "./store.js";
import { SpeechText } from "../js/speech-text.js";
import { shownMessages } from "../js/history-page.js";
import { answerSteps } from "../js/answer-steps.js";

const STREAMING = "streaming";

export class ReplyReader {
  constructor(session) {
    this.session = session;
    this.follow = null; // {reading, turnId, texts: Map(id → SpeechText), finished: Set(id)}
    this.declined = new Set(); // turns whose reading the person stopped: not started again
    this.unlisten = session.listen((event, state) => this._event(event, state));
    this.unwatch = reader.onChange(() => {
      if (this.follow && reader.reading !== this.follow.reading) {
        if (this.follow.turnId != null) this.declined.add(this.follow.turnId);
        this.follow = null;
      }
    });
  }

  /** The speaker button: read reply `id` (its answer's steps, from the start), or stop reading it. */
  toggle(id) {
    if (reader.isReading(id)) { reader.stop(); return; }
    const state = this.session.state;
    const shown = shownMessages(state);
    const steps = answerSteps(shown);
    const first = steps.get(id)?.first ?? id;
    const start = shown.findIndex((m) => m.id === first);
    const end = shown.findIndex((m) => m.id === id);
    const parts = shown.slice(Math.max(0, start), end + 1).filter((m) => m.role === "assistant" && m.content);
    if (!parts.length) return;
    const reading = reader.begin(id);
    for (const m of parts) reading.ids.add(m.id);
    const running = parts.some((m) => m.status === STREAMING);
    this.follow = { reading, turnId: running ? state.turn?.id ?? null : null, texts: new Map(), finished: new Set() };
    for (const m of parts) this._feed(m);
    if (!running) reading.end();
  }

  close() {
    this.unlisten();
    this.unwatch();
    if (this.follow) reader.stop();
    this.follow = null;
  }

  _event(event, state) {
    if (event.type === "turn_end") {
      this._finishAll(state);
      if (this.follow && (event.turn_id == null || this.follow.turnId === event.turn_id || this.follow.turnId == null)) {
        this.follow.reading.end();
      }
      return;
    }
    if (event.type !== "content" || event.model_id != null) return; // a compare's column: not read by itself
    // Per token: nothing more to do while no reply is read and none is read as it comes.
    if (!this.follow && !app.settings?.voice?.auto_read) return;
    const id = event.message_id ?? state.turn?.messageId;
    const msg = state.messages.findLast((m) => m.id === id);
    if (!msg || msg.role !== "assistant") return;
    const turnId = state.turn?.id ?? null;
    if (!this.follow) {
      if (!app.settings?.voice?.auto_read || msg.replayed || msg.status !== STREAMING || this.declined.has(turnId)) return;
      this.follow = { reading: reader.begin(id), turnId, texts: new Map(), finished: new Set() };
    }
    const f = this.follow;
    if (!f.reading.has(id)) {
      if (f.turnId == null || f.turnId !== turnId) return; // another reply is being read
      f.reading.ids.add(id); // the answer's next step
    }
    this._finishAll(state);
    this._feed(msg);
  }

  /** Queue what message `m` says so far (all of it once it no longer streams). */
  _feed(m) {
    const f = this.follow;
    if (!f || f.finished.has(m.id)) return;
    let text = f.texts.get(m.id);
    if (!text) f.texts.set(m.id, (text = new SpeechText()));
    const content = m.content || "";
    if (m.status === STREAMING) {
      f.reading.say(text.feed(content));
    } else {
      f.reading.say(text.finish(content));
      f.finished.add(m.id);
    }
  }

  /** The followed messages that stopped streaming (a step ended): the rest of each is queued, in order. */
  _finishAll(state) {
    const f = this.follow;
    if (!f) return;
    for (const id of f.texts.keys()) {
      if (f.finished.has(id)) continue;
      const m = state.messages.findLast((x) => x.id === id);
      if (m && m.status !== STREAMING) this._feed(m);
    }
  }
}
