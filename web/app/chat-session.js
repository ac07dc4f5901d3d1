// One open chat: its history, its socket and its reducer state. Every server event
// goes through applyEvent (web/js/reducer.js) and the views re-render from the
// resulting state; nothing here touches the DOM.

import { initialState, applyEvent, loadHistory, localSend } from "../js/reducer.js";
import { get, answer } from "./api.js";
import { ChatSocket } from "./socket.js";
import { schedule, afterPaint } from "./store.js";
import { randomId } from "./dom.js";
import { takeStagedAttachments } from "./attachments.js";

// Set by early.js, the classic script the page runs first.
const { PAGE, chatPaths, takeEarly } = self.numiEarly;

// The events that append text, each to the message field of its own name.
const TEXT_EVENTS = new Set(["content", "reasoning"]);
let textGens = 0; // a record's generation: never reused, so a stale one is never mistaken
// Paging back to a message a search found takes the server's largest pages.
const JUMP_PAGE = 200;
const saved = (m) => typeof m.id === "number" || /^\d+$/.test(String(m.id));

/** A chat and its newest page: read at start by early.js when the address named it. */
function fetchChat(chatId) {
  const early = takeEarly(chatId);
  return Promise.all(early ? early.map(answer) : chatPaths(chatId).map(get));
}

export class ChatSession {
  /** @param hooks {{onTitle(id, title), onActivity(id, running), onGone(id)}} */
  constructor(chatId, hooks) {
    this.chatId = chatId;
    this.hooks = hooks;
    this.state = initialState(chatId);
    this.chat = null;        // GET /api/chats/{id}: title, model_id, system_prompt, params
    this.loaded = false;
    this.loadError = null;
    this.loadingOlder = false;
    this.connection = "connecting";
    this.socket = null;
    this.closed = false;
    // Text the last events appended, per "<message id>:<field>" (see textSince).
    this.appended = new Map();
    this.replaced = null;    // ids an edit or regenerate may have discarded (_noteReplaced)
    this.mentioned = new Set(); // ids the turn's events named since (its tool and steering rows too)
  }

  async open() {
    try {
      const [chat, page] = await fetchChat(this.chatId);
      if (this.closed) return;
      this.chat = chat;
      this.state = loadHistory(this.state, page.items, page.has_more);
      this.loaded = true;
    } catch (err) {
      if (this.closed) return;
      this.loadError = err;
      schedule();
      return;
    }
    schedule();
    // The history is drawn first; the socket's handshake and its first events would
    // hold that frame back. Connected only now: resume's after_event_id must describe
    // what the history already holds.
    await afterPaint();
    if (this.closed) return;
    this.socket = new ChatSocket(this.chatId, {
      lastEventId: () => this.state.lastEventId || 0,
      epoch: () => this.state.epoch,
      onEvent: (e) => this.onEvent(e),
      onStatus: (s) => { this.connection = s; schedule(); },
      onGone: () => this.hooks.onGone?.(this.chatId),
    });
    schedule();
  }

  get running() {
    return this.state.turn?.status === "running";
  }

  get title() {
    return this.state.title || this.chat?.title || "";
  }

  onEvent(event) {
    const wasRunning = this.running;
    const before = this.state;
    this.state = applyEvent(before, event);
    // Any other event may change a message some other way: the records start over.
    if (TEXT_EVENTS.has(event.type)) this._noteText(before, event, event.type);
    else this.appended.clear();
    if (event.type === "turn_start" && event.rewound && event.user_message_id != null) {
      this._noteReplaced(event.user_message_id);
    } else if (this.replaced) {
      this._dropReplaced(event);
    }
    if (event.type === "title_update" && event.title) this.hooks.onTitle?.(this.chatId, event.title);
    if (this.running !== wasRunning || event.type === "turn_end") this.hooks.onActivity?.(this.chatId, this.running);
    // The saved rows carry what events do not (a reply's usage and timings, text sent
    // from another window): re-read the newest page once a turn ends or a stranger's
    // message arrives. loadHistory merges by id, so nothing shown is lost.
    if (event.type === "turn_end" || (event.type === "accepted" && this.state.messages.some((m) => m.placeholder))) {
      this._refreshTail();
    }
    schedule();
  }

  /**
   * Keep what a text event appended, so the view can draw just that (textSince) instead
   * of slicing the whole message text each frame. Anything but a plain append of the
   * event's delta (a message started over, a replay) starts the record afresh.
   */
  _noteText(before, event, field) {
    const id = event.message_id ?? this.state.turn?.messageId;
    const now = this.state.messages.find((m) => m.id === id);
    if (!now) return;
    const key = `${id}:${field}`;
    const old = before.messages.find((m) => m.id === id);
    const rec = this.appended.get(key);
    const delta = typeof event.delta === "string" ? event.delta : "";
    if (rec && old && rec.end === old[field].length && old[field].length + delta.length === now[field].length) {
      if (delta) rec.parts.push(delta);
      rec.end = now[field].length;
    } else {
      this.appended.set(key, { gen: ++textGens, start: now[field].length, end: now[field].length, parts: [] });
    }
  }

  /**
   * The text appended to message `id`'s `field` after offset `from`, when the record
   * (generation `gen`, as this returned or textGen gave) covers it; else null and the
   * caller draws the whole text. What is returned is dropped from the record.
   */
  textSince(id, field, gen, from) {
    const rec = this.appended.get(`${id}:${field}`);
    if (!rec || rec.gen !== gen || from < rec.start || from > rec.end) return null;
    const text = rec.parts.join("").slice(from - rec.start);
    rec.parts = [];
    rec.start = rec.end;
    return text;
  }

  /** The record's generation for `id`'s `field` now (0 when there is none). */
  textGen(id, field) {
    return this.appended.get(`${id}:${field}`)?.gen ?? 0;
  }

  /**
   * An edit or regenerate (`turn_start.rewound`) restarts the chat from a user message
   * and the server discards what followed. The rows after it (but queued messages: they
   * come later) go once the turn writes a message that is not one of them, or ends
   * without writing them. Until then they stay: the same turn re-sent after a reload
   * (the history read after the edit) writes just those again, and dropping them first
   * would take the newest reply off the screen and draw it again from nothing. Its tool
   * results and steering messages are its own too: named by its `message_saved` and
   * `steered`, not among the replies it writes.
   */
  _noteReplaced(userMessageId) {
    const after = this.state.messages.filter((m) =>
      Number(m.id) > Number(userMessageId) && !(m.role === "user" && m.status === "queued"));
    this.replaced = after.length ? new Set(after.map((m) => m.id)) : null;
    this.mentioned.clear();
  }

  _dropReplaced(event) {
    if (event.message_id != null && event.type !== "accepted") this.mentioned.add(event.message_id);
    const written = this.state.turn?.messageIds || [];
    if (event.type !== "turn_end" && written.every((id) => this.replaced.has(id))) return;
    const gone = this.replaced;
    this.replaced = null;
    const keep = this.state.messages.filter((m) => !gone.has(m.id) || this.mentioned.has(m.id));
    if (keep.length !== this.state.messages.length) this.state = { ...this.state, messages: keep };
  }

  _send(frame) {
    this.socket?.send(frame);
  }

  /**
   * @param opts.steer while a reply runs: join it at its next model step (`mode: "steer"`)
   *   instead of waiting for it to end
   * @param opts.requestId, opts.attachments stored files ({id, name, mime, size, …}); by
   *   default those the composer staged with this text
   */
  send(content, { steer = false, requestId = randomId("req"), attachments = takeStagedAttachments(content) } = {}) {
    this.state = localSend(this.state, requestId, content, attachments);
    const frame = { type: "send", request_id: requestId, content };
    if (steer) frame.mode = "steer";
    if (attachments.length) frame.attachments = attachments.map((f) => f.id);
    this._send(frame);
    schedule();
  }

  stop(clearQueue = false) { this._send({ type: "stop", clear_queue: clearQueue }); }
  edit(messageId, content) {
    this._send({ type: "edit", message_id: messageId, content });
    // Show the new text at once; the server refuses edits only while a reply runs,
    // and the view offers Edit only when none does.
    this.state = { ...this.state, messages: this.state.messages.map((m) => (m.id === messageId ? { ...m, content } : m)) };
    schedule();
  }
  /** @param modelId answer with this model instead of the chat's ("Regenerate with…") */
  regenerate(messageId, modelId) {
    this._send(modelId ? { type: "regenerate", message_id: messageId, model_id: modelId } : { type: "regenerate", message_id: messageId });
  }
  continueReply() { this._send({ type: "continue" }); }
  discardQueued(messageId) { this._send({ type: "queue_discard", message_id: messageId }); }
  /** @param args the arguments as the person edited them (an object); what runs is what was approved */
  approve(approvalId, decision, reason, args) {
    const frame = { type: "approve", approval_id: approvalId, decision };
    if (reason) frame.reason = reason;
    if (args !== undefined && decision !== "deny") frame.arguments = args;
    this._send(frame);
  }

  async _refreshTail() {
    if (this.refreshing) { this.refreshAgain = true; return; }
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        const page = await get(`/api/chats/${encodeURIComponent(this.chatId)}/messages?limit=${PAGE}`);
        if (this.closed) return;
        this.state = loadHistory(this.state, page.items, this.state.hasMore || page.has_more);
        schedule();
      } while (this.refreshAgain);
    } catch { /* the live state stands */ } finally { this.refreshing = false; }
  }

  async loadOlder(limit = PAGE) {
    if (this.olderLoad) return this.olderLoad; // one page at a time: a second caller waits for it
    const first = this.state.messages.find(saved);
    if (!first || this.loadingOlder || this.closed || !this.state.hasMore) return;
    this.loadingOlder = true;
    schedule();
    this.olderLoad = (async () => {
      try {
        const page = await get(`/api/chats/${encodeURIComponent(this.chatId)}/messages?limit=${limit}&before=${first.id}`);
        if (!this.closed) this.state = loadHistory(this.state, page.items, page.has_more);
        this.olderFailed = false;
      } catch {
        this.olderFailed = true; // the button stays: a click (or scrolling up again) retries
      } finally {
        this.loadingOlder = false;
        this.olderLoad = null;
        schedule();
      }
    })();
    return this.olderLoad;
  }

  /**
   * Page back until message `id` is loaded (a search result far up a long chat), in the
   * server's largest pages. What is loaded stays one run up to the newest message, as
   * the live events need. False when the chat no longer has that message.
   */
  async loadUntil(id) {
    const want = Number(id);
    for (;;) {
      if (this.closed) return false;
      if (this.state.messages.some((m) => Number(m.id) === want)) return true;
      const first = this.state.messages.find(saved);
      if (!first || !this.state.hasMore || Number(first.id) < want) return false;
      await this.loadOlder(JUMP_PAGE);
      if (this.olderFailed) return false;
    }
  }

  setChat(chat) {
    this.chat = chat;
    schedule();
  }

  close() {
    this.closed = true;
    this.socket?.close();
  }
}
