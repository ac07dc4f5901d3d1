// One open chat: its history, its socket and its reducer state. Every server event
// goes through applyEvent (web/js/reducer.js) and the views re-render from the
// resulting state; nothing here touches the DOM.

import { initialState, applyEvent } from "../js/reducer.js";
import { loadHistory, loadEarlier, replaceBranch, showBranch, showLive, shownMessages } from "../js/history-page.js";
import { localSend } from "../js/turn-events.js";
import { loadCompaction } from "../js/context-marks.js";
import { loadedCompare } from "../js/compare.js";
import { get, post, answer } from "./api.js";
import { ChatSocket } from "./socket.js";
import { schedule, afterPaint } from "./store.js";
import { randomId } from "./dom.js";
import { takeStagedAttachments } from "./attachments.js";
import { takeStagedImage } from "./image-send.js";
import { ContextReader } from "./context-reader.js";

// Set by early.js, the classic script the page runs first.
const { PAGE, chatPaths, takeEarly } = self.numiEarly;

// The events that append text, each to the message field of its own name.
const TEXT_EVENTS = new Set(["content", "reasoning"]);
// Paging back to a message a search found takes the server's largest pages.
const JUMP_PAGE = 200;
const notQueued = (m) => m.status !== "queued";
// Events after which the next request carries something else: the context is read again.
const CONTEXT_EVENTS = new Set(["turn_end", "compacted", "active_changed", "branched"]);
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
    // Who draws a message's streaming text, by message id (watchText).
    this.textWatchers = new Map();
    // Who follows every event once applied (listen): reading a reply aloud as it streams.
    this.listeners = new Set();
    // Bumped whenever the branch shown changes under a read in flight (a switch, a new
    // version): an answer read before it is not merged into the branch after it.
    this.branchGen = 0;
    this.switches = 0;       // version switches of this window in flight
    // What the next request would carry (GET/POST …/context), for the meter and the divider.
    this.context = null;
    this.contextError = null;
    this.compacting = false; // "Summarize now" under way
    // What the message box holds; the chat view hands over its composer's.
    this.draft = () => ({ draft: "", file_ids: [] });
    this.contextReader = new ContextReader(chatId, () => this.draft(), {
      onRead: (ctx) => {
        this.context = ctx;
        this.contextError = null;
        this.state = loadCompaction(this.state, ctx?.compaction);
        schedule();
      },
      onError: (err) => { this.contextError = err; schedule(); },
    });
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
    this.refreshContext();
    schedule();
  }

  /** Read the context again: now, or `wait` ms after the last call of a run (typing). */
  refreshContext(wait = 0) {
    if (this.loaded) this.contextReader.refresh(wait);
  }

  /**
   * "Summarize now" (POST …/compact): the older messages become a summary checkpoint. Resolves
   * to the compaction; an ApiError (busy, nothing to summarize) carries the server's sentence.
   */
  async compact() {
    if (this.compacting) return null;
    this.compacting = true;
    schedule();
    try {
      const c = await post(`/api/chats/${encodeURIComponent(this.chatId)}/compact`);
      if (!this.closed) this.state = loadCompaction(this.state, c);
      return c;
    } finally {
      this.compacting = false;
      this.refreshContext();
      schedule();
    }
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
    // A delta its message's bubble drew needs no frame.
    const drawn = TEXT_EVENTS.has(event.type) && this.state !== before && this._handText(before, event);
    if (event.type === "branched") this.branchGen += 1;
    if (event.type === "title_update" && event.title) this.hooks.onTitle?.(this.chatId, event.title);
    if (this.running !== wasRunning || event.type === "turn_end") this.hooks.onActivity?.(this.chatId, this.running);
    // A compare's saved rows carry each column's timings and cost: read them once it ends.
    if (event.type === "turn_end") {
      const ended = Object.values(this.state.compares).find((c) => c.turnId === event.turn_id);
      if (ended) this.loadCompare(ended.userId);
    }
    // The saved rows carry what events do not (a reply's usage and timings, text sent
    // from another window): re-read the newest page once a turn ends or a stranger's
    // message arrives. loadHistory merges by id, so nothing shown is lost.
    if (event.type === "turn_end" && this.state.view) {
      // The person chose another version while the reply ran: it becomes the branch now.
      this._applyChoice();
    } else if (event.type === "turn_end" || (event.type === "accepted" && this.state.messages.some((m) => m.placeholder))
               || (event.type === "snapshot" && event.message_id != null
                   && !this.state.messages.some((m) => m.id === event.message_id))) {
      this._refreshTail();
    }
    if (this.state.branchStale != null && !this.switches) this._rereadBranch();
    if (CONTEXT_EVENTS.has(event.type) && this.state !== before) this.refreshContext();
    for (const fn of this.listeners) fn(event, this.state);
    if (!drawn) schedule();
  }

  /** Call fn(event, state) after each server event is applied; returns what stops it. */
  listen(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Let `take(field, delta, now, was)` draw message `id`'s text as it streams: called with
   * each `content` / `reasoning` delta the fold applied to it (`was` the message before,
   * `now` after), it draws the delta and returns true, or returns false and the next frame
   * draws the message. One watcher per message (the newest). Returns what stops it.
   */
  watchText(id, take) {
    this.textWatchers.set(id, take);
    return () => { if (this.textWatchers.get(id) === take) this.textWatchers.delete(id); };
  }

  /** Hand a text event's delta to its message's watcher; true when it drew it. */
  _handText(before, event) {
    const id = event.message_id ?? this.state.turn?.messageId;
    const take = this.textWatchers.get(id);
    if (!take) return false;
    // The reply being written is at the end of the branch.
    const now = this.state.messages.findLast((m) => m.id === id);
    const was = before.messages.findLast((m) => m.id === id);
    return !!now && take(event.type, event.delta, now, was);
  }

  _send(frame) {
    this.socket?.send(frame);
  }

  /**
   * @param opts.steer while a reply runs: join it at its next model step (`mode: "steer"`)
   *   instead of waiting for it to end
   * @param opts.research the text is a question for a research turn
   * @param opts.compare the 2–4 model ids that each answer it (CONTRACT §10)
   * @param opts.image draw an image from the text (the composer's Image action); by default
   *   whether the composer staged this text for that (image-send.js)
   * @param opts.requestId, opts.attachments stored files ({id, name, mime, size, …}); by
   *   default those the composer staged with this text
   */
  send(content, { steer = false, research = false, compare = null, image = takeStagedImage(content), requestId = randomId("req"),
                  attachments = takeStagedAttachments(content) } = {}) {
    this.state = localSend(this.state, requestId, content, attachments, { research });
    const frame = { type: "send", request_id: requestId, content };
    if (steer) frame.mode = "steer";
    if (research) frame.research = true; // a research turn (docs/PROTOCOL.md "Research")
    if (compare?.length) frame.compare = compare; // each model answers it (docs/PROTOCOL.md "Compare")
    if (image) frame.image = true; // an image drawn from the text (docs/PROTOCOL.md "Images")
    if (attachments.length) frame.attachments = attachments.map((f) => f.id);
    this._send(frame);
    schedule();
  }

  stop(clearQueue = false) { this._send({ type: "stop", clear_queue: clearQueue }); }
  /** A new version of a user message; the old one stays as the other version (`branched` shows it). */
  edit(messageId, content, requestId = randomId("edit")) {
    this._send({ type: "edit", message_id: messageId, content, request_id: requestId });
  }
  /** @param modelId answer with this model instead of the chat's ("with another model…") */
  regenerate(messageId, modelId, requestId = randomId("regen")) {
    const frame = { type: "regenerate", message_id: messageId, request_id: requestId };
    if (modelId) frame.model_id = modelId;
    this._send(frame);
  }
  continueReply() { this._send({ type: "continue" }); }
  discardQueued(messageId) { this._send({ type: "queue_discard", message_id: messageId }); }
  /** Carry out a plan (CONTRACT §7): the chat switches to Edit and a turn runs; `accepted` shows its message. */
  executePlan(planId) { this._send({ type: "execute_plan", plan_id: planId, request_id: randomId("plan") }); }
  /** @param args the arguments as the person edited them (an object); what runs is what was approved */
  approve(approvalId, decision, reason, args) {
    const frame = { type: "approve", approval_id: approvalId, decision };
    if (reason) frame.reason = reason;
    if (args !== undefined && decision !== "deny") frame.arguments = args;
    this._send(frame);
  }

  /** Answer a question of the model (`answers`: {key: text | [texts]}, web/js/questions.js). */
  answer(questionId, answers) { this._send({ type: "answer", question_id: questionId, answers }); }
  /**
   * Read a compare's columns as saved (a reload, or a window that missed its start), once per
   * message at a time; the columns a turn streams here keep their live text.
   */
  async loadCompare(userId) {
    this.comparesLoading ??= new Set();
    this.comparesFailed ??= new Set();
    if (this.comparesLoading.has(userId) || this.comparesFailed.has(userId) || this.closed) return;
    this.comparesLoading.add(userId);
    try {
      const body = await get(`/api/chats/${encodeURIComponent(this.chatId)}/messages/${userId}/compare`);
      if (!this.closed) this.state = loadedCompare(this.state, userId, body);
    } catch {
      this.comparesFailed.add(userId); // not asked again in this window: the block says it is unread
    } finally {
      this.comparesLoading.delete(userId);
      schedule();
    }
  }

  /** "Use this": a compare's reply becomes the active branch, and the chat goes on from it. */
  useReply(messageId) {
    return this._showBranch(messageId, PAGE);
  }

  /** Dismiss it unanswered: the model is told so and goes on. */
  dismissQuestion(questionId) { this._send({ type: "answer", question_id: questionId, dismissed: true }); }

  async _refreshTail() {
    if (this.refreshing) { this.refreshAgain = true; return; }
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        const gen = this.branchGen;
        const page = await get(`/api/chats/${encodeURIComponent(this.chatId)}/messages?limit=${PAGE}`);
        if (this.closed) return;
        // Read before the branch changed: it may list the rows the change took away.
        if (gen !== this.branchGen) { this.refreshAgain = true; continue; }
        this.state = loadHistory(this.state, page.items, this.state.hasMore || page.has_more);
        schedule();
      } while (this.refreshAgain);
    } catch { /* the live state stands */ } finally { this.refreshing = false; }
  }

  async loadOlder(limit = PAGE) {
    if (this.olderLoad) return this.olderLoad; // one page at a time: a second caller waits for it
    const first = shownMessages(this.state).find(saved);
    const more = this.state.view ? this.state.view.hasMore : this.state.hasMore;
    if (!first || this.loadingOlder || this.closed || !more) return;
    this.loadingOlder = true;
    schedule();
    this.olderLoad = (async () => {
      try {
        const gen = this.branchGen;
        const page = await get(`/api/chats/${encodeURIComponent(this.chatId)}/messages?limit=${limit}&before=${first.id}`);
        if (!this.closed && gen === this.branchGen) this.state = loadEarlier(this.state, page.items, page.has_more);
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
   * Show version `toId` of message `fromId` (a sibling: same parent, same role). With no
   * reply running the server makes its branch the active one (`POST …/active`); while one
   * runs (409 busy) it is only looked at (`?through=`), and becomes the branch when the
   * reply ends. False when the switch did not happen (a newer one overtook it, the chat
   * closed); an ApiError when the server refused it.
   */
  switchVersion(fromId, toId) {
    return this._showBranch(toId, this._pageBelow(fromId));
  }

  /**
   * Show the branch message `id` is on (search covers every branch), as a switch to it
   * does. False when the chat has no such message (or the branch changed meanwhile).
   */
  async showBranchOf(id) {
    try {
      return await this._showBranch(id, PAGE);
    } catch (err) {
      if (err.status === 404) return false;
      throw err;
    }
  }

  async _showBranch(id, limit) {
    const gen = ++this.branchGen;
    this.switches += 1;
    try {
      if (!this.running) {
        try {
          const page = await this._branchPage(id, limit, true);
          if (gen !== this.branchGen || this.closed) return false;
          this.state = replaceBranch(this.state, page.items, page.has_more);
          this.refreshContext();
          return true;
        } catch (err) {
          if (err.status !== 409) throw err;
        }
      }
      if (this.state.messages.some((m) => m.id === id && notQueued(m))) {
        // Back to the branch the reply runs on, with everything it wrote meanwhile.
        this.state = showLive(this.state);
        return true;
      }
      const page = await this._branchPage(id, limit, false);
      if (gen !== this.branchGen || this.closed) return false;
      this.state = showBranch(this.state, id, page.items, page.has_more);
      // The reply ended while the branch was read: nothing will say so again.
      if (!this.running) this._applyChoice();
      return true;
    } finally {
      this.switches -= 1;
      schedule();
      if (this.state.branchStale != null && !this.switches) this._rereadBranch();
    }
  }

  /** Leave a branch viewed read-only for the active one (sending goes there). */
  showLive() {
    this.branchGen += 1;
    this.state = showLive(this.state);
    schedule();
  }

  /**
   * Rows to ask for a branch from `fromId` on: as many as are shown from it down, and a
   * margin (what lies above is kept; a longer branch pages up to the version).
   */
  _pageBelow(fromId) {
    const shown = shownMessages(this.state).filter(notQueued);
    const i = shown.findIndex((m) => m.id === fromId);
    return Math.min(JUMP_PAGE, (i < 0 ? PAGE : shown.length - i) + 10);
  }

  /**
   * The newest `limit` rows of the branch through `id` (made active, or only read), paged
   * up until `id` itself is among them: what is shown above it stays, below it is replaced.
   */
  async _branchPage(id, limit, activate) {
    const chat = encodeURIComponent(this.chatId);
    let page = activate ? await post(`/api/chats/${chat}/active`, { message_id: id, limit })
      : await get(`/api/chats/${chat}/messages?through=${id}&limit=${limit}`);
    while (!page.items.some((m) => m.id === id) && page.has_more) {
      const first = page.items.find(notQueued);
      if (!first) break;
      const older = await get(`/api/chats/${chat}/messages?${activate ? "" : `through=${id}&`}before=${first.id}&limit=${JUMP_PAGE}`);
      page = { items: [...older.items.filter(notQueued), ...page.items], has_more: older.has_more };
    }
    return page;
  }

  /** The reply ended while another version was looked at: make that version's branch active. */
  async _applyChoice() {
    const through = this.state.view?.through;
    if (through == null) return;
    const gen = ++this.branchGen;
    try {
      const page = await this._branchPage(through, this._pageBelow(through), true);
      if (gen !== this.branchGen || this.closed) return;
      this.state = replaceBranch(this.state, page.items, page.has_more);
      this.refreshContext();
      schedule();
    } catch {
      // Busy again (a queued message started the next turn): the view stays, and the
      // next turn's end tries again. The branch it runs on is read meanwhile.
      if (gen === this.branchGen) this._refreshTail();
    }
  }

  /** Another window switched branch: read the active one again. */
  async _rereadBranch() {
    if (this.rereading) return;
    this.rereading = true;
    const gen = ++this.branchGen;
    try {
      const page = await get(`/api/chats/${encodeURIComponent(this.chatId)}/messages?limit=${PAGE}`);
      if (gen === this.branchGen && !this.closed) {
        this.state = replaceBranch(this.state, page.items, page.has_more);
        schedule();
      }
    } catch { /* the branch shown stays until the next change */ } finally {
      this.rereading = false;
    }
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
      const shown = shownMessages(this.state);
      if (shown.some((m) => Number(m.id) === want)) return true;
      const first = shown.find(saved);
      const more = this.state.view ? this.state.view.hasMore : this.state.hasMore;
      if (!first || !more || Number(first.id) < want) return false;
      await this.loadOlder(JUMP_PAGE);
      if (this.olderFailed) return false;
    }
  }

  setChat(chat) {
    this.chat = chat;
    this.refreshContext(); // another model, system prompt or tools: another window and count
    schedule();
  }

  close() {
    this.closed = true;
    this.socket?.close();
    this.contextReader.close();
  }
}
