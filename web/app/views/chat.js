// The chat view: it composes the header (views/chat-header.js), the thread of messages with
// the context's marks (a summary's divider, a turn's "left out" note) and a research
// turn's progress, the notice (views/chat-notice.js), the approvals and the model's
// questions (views/approval-pane.js, question-pane.js), and the composer (its picker is
// where the chat's model is chosen; the context meter sits beside it), with the chat's
// documents beside them (views/doc-dock.js). A compare's replies show as columns under the
// message that asked them (views/compare-view.js). Where the scroller stands is views/chat-scroll.js.
//
// It renders from a ChatSession's state and reuses one MessageView per message, so a frame
// only touches what changed: each part declares the inputs it reads (web/js/view-inputs.js)
// and is drawn again only when one of them changed. A streaming reply's text does not come
// through here: each delta goes straight to its bubble (ChatSession.watchText).
import { h, copyText } from "../dom.js";
import { app, schedule } from "../store.js";
import { MessageView } from "./message.js";
import { Composer } from "./composer.js";
import { runFor } from "../render-queue.js";
import { toast } from "./toast.js";
import { patch } from "../api.js";
import { shownMessages } from "../../js/history-page.js";
import { Inputs } from "../../js/view-inputs.js";
import { ContextMeter } from "./context-meter.js";
import { ContextMarks } from "./context-marks.js";
import { ResearchProgress } from "./research-progress.js";
import { MemoryChips } from "./memory-chip.js";
import { chipsByReply } from "../../js/memory.js";
import { contextMarks } from "../../js/context-marks.js";
import { compactedSentence } from "../../js/context-meter.js";
import { newestPlans, planExecutions } from "../../js/plans.js";
import { answerSteps } from "../../js/answer-steps.js";
import { searchState } from "../../js/web-search.js";
import { DraftKeeper, SAVE_PAUSE_MS, keepNewChatDraft, newChatDraftKept } from "../chat-draft.js";
import { ChatHeader } from "./chat-header.js";
import { ChatNotice } from "./chat-notice.js";
import { ApprovalPane } from "./approval-pane.js";
import { QuestionPane } from "./question-pane.js";
import { ScrollFollow } from "./chat-scroll.js";
import { DocDock } from "./doc-dock.js";
import { CompareBlocks } from "./compare-view.js";
import { repliesInColumns } from "../../js/compare.js";
import { ReplyReader } from "../reply-reader.js";
import { reader } from "../read-aloud.js";

// Queued Markdown (history) drawn before the frame is painted, newest first: enough
// for what is on screen; the rest follows in later tasks.
const FIRST_PAINT_BUDGET_MS = 30;
// New bubbles built per frame, newest first: opening a chat paints the screenful at the
// bottom first, and the rest of the page goes in above it over the next frames.
const NEW_VIEWS_PER_FRAME = 16;
// Typing is counted for the context meter this long after the last key, never per key.
const TYPING_PAUSE_MS = 400;

/** The model the next message goes to: the chat's (or the new chat's), else the default. */
function nextModelId(session, chat, draftModel, settings) {
  const id = session ? chat?.model_id : draftModel;
  return id || settings?.default_model_id || null;
}

export class ChatView {
  /**
   * @param session a ChatSession, or null for a new chat not saved yet
   * @param actions {{createAndSend(text), setModel(chatId, modelId), openChatSettings(), openSidebar(), inspect()}}
   */
  constructor(session, actions) {
    this.session = session;
    this.actions = actions;
    this.views = new Map();

    this.header = new ChatHeader(session, {
      openChatSettings: () => actions.openChatSettings(),
      openSidebar: () => actions.openSidebar(),
      inspect: () => actions.inspect(),
      summarize: () => this.summarize(),
      stopSummary: () => session?.stop(),
    });
    this.older = h("button", { type: "button", class: "ghost older", hidden: true, onclick: () => session?.loadOlder() }, "Show earlier messages");
    // Older pages load when the top of the thread scrolls into view: an observer on a
    // sentinel, no scroll listener and no timers. The button stays for keyboard use.
    this.sentinel = h("div", { class: "history-sentinel", "aria-hidden": "true", hidden: true });
    this.list = h("div", { class: "messages" });
    this.pending = h("div", { class: "pending" });
    this.approvals = new ApprovalPane((id, decision, reason, args) => session.approve(id, decision, reason, args));
    this.questions = new QuestionPane((id, answers) => session.answer(id, answers), (id) => session.dismissQuestion(id));
    this.notice = new ChatNotice(() => this._retry());
    // Without a search service models cannot look anything up: the empty chat says how to add one.
    this.searchHint = h("p", { class: "hint web-search-hint", hidden: true });
    this.empty = h("div", { class: "empty", hidden: true },
      h("h2", {}, "What's on your mind?"), h("p", { class: "hint" }, "Your chats stay on this computer. Press ? for shortcuts."),
      this.searchHint);
    const thread = h("div", { class: "thread" }, this.sentinel, this.older, this.empty, this.list, this.pending,
      this.approvals.el, this.questions.el, this.notice.el);
    this.scroller = h("div", { class: "scroller" }, thread);
    this.composer = new Composer({
      send: (text, opts) => this._send(text, opts),
      stop: () => { reader.stop(); session?.stop(); }, // Stop also ends reading aloud
      discard: (id) => session?.discardQueued(id),
      switchModel: () => this.composer.picker.open(),
      model: () => nextModelId(session, session?.chat, this.draftModel, app.settings),
      setModel: (id) => this._setModel(id),
      setMode: (mode) => this._setMode(mode),
      editLast: () => this.editLast(),
      draftChanged: (typing) => {
        session?.refreshContext(typing ? TYPING_PAUSE_MS : 0);
        this.keeper?.changed(typing ? SAVE_PAUSE_MS : 0);
      },
    });
    // What the next request carries, by the message box (a chat not made yet has none).
    this.meter = new ContextMeter({ summarize: () => this.summarize(), stopSummary: () => this.session?.stop() });
    this.composer.foot.append(this.meter.el);
    this.composer.el.insertBefore(this.meter.warning, this.composer.box);
    this.marks = new ContextMarks();
    this.research = new ResearchProgress();
    this.memoryChips = new Map(); // reply id → its "Memory saved · Undo" chips (views/memory-chip.js)
    this.compares = new CompareBlocks(session, (m) => this._send(m.content, { compare: m.compare }));
    if (session) session.draft = () => this.composer.draft();
    this._keepDraft(session);
    this.el = h("section", { class: "chat", "aria-label": "Chat" }, this.header.el, this.scroller, this.composer.el);
    // The chat's documents: a button in the header, the panel beside the thread.
    this.docs = session ? new DocDock(session, { attach: (quote) => this.composer.attachQuote(quote) }) : null;
    if (this.docs) {
      this.header.el.insertBefore(this.docs.button, this.header.more);
      this.docs.mount(this.el);
    }
    this.scroll = new ScrollFollow(this.scroller, thread);
    if (session && typeof IntersectionObserver === "function") {
      this.observer = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting) && session.state.hasMore) session.loadOlder();
      }, { root: this.scroller, rootMargin: "200px 0px 0px 0px" });
      this.observer.observe(this.sentinel);
    }
    // Replies read aloud: a speaker button's, and each new one with settings.voice.auto_read.
    this.replyReader = session ? new ReplyReader(session) : null;
    this.msgActions = {
      readAloud: (id) => this.replyReader?.toggle(id),
      edit: (id, text) => session.edit(id, text),
      regenerate: (id, modelId) => session.regenerate(id, modelId),
      continueReply: () => session.continueReply(),
      executePlan: (planId) => { this.scroll.stick = true; session.executePlan(planId); },
      switchVersion: (fromId, toId, step) => this.switchVersion(fromId, toId, step),
      // A streaming reply's deltas, drawn by its bubble as they come (no frame).
      watchText: (id, take) => session.watchText(id, (...delta) => {
        const drawn = take(...delta);
        if (drawn) this.scroll.drawn();
        return drawn;
      }),
    };
    this._declareInputs();
  }

  /**
   * What each part of the view reads, from the frame's source {s: the session, state: its
   * state, view: this}; app-wide state is read from `app`. A part reads only these.
   */
  _declareInputs() {
    this.hintInputs = new Inputs({ webSearch: () => app.settings?.web_search, settingsLoaded: () => !!app.settings });
    // The picker shows the model the next message goes to (its own hook reads these).
    this.pickerInputs = new Inputs({
      chat: ({ s }) => s?.chat, draftModel: ({ view }) => view.draftModel,
      settings: () => app.settings, models: () => app.models,
    });
    this.composerInputs = new Inputs({
      loaded: ({ s }) => s?.loaded, loadError: ({ s }) => s?.loadError,
      running: ({ s }) => !!s?.running, queue: ({ state }) => state?.queue,
      chat: ({ s }) => s?.chat, draftModel: ({ view }) => view.draftModel, draftMode: ({ view }) => view.draftMode,
      models: () => app.models, settings: () => app.settings,
      // A new chat's mode comes from the folder it starts in.
      folders: () => app.folders, draftFolder: () => app.draft?.folderId,
    });
    this.threadInputs = new Inputs({
      shown: ({ state }) => shownMessages(state),
      turn: ({ state }) => state.turn,
      approvals: ({ state }) => state.approvals,
      questions: ({ state }) => state.questions,
      queue: ({ state }) => state.queue,
      compaction: ({ state }) => state.compaction,
      trimmed: ({ state }) => state.trimmed,
      research: ({ state }) => state.research,
      memorySaved: ({ state }) => state.memorySaved,
      running: ({ s }) => s.running,
      chat: ({ s }) => s.chat,
      settings: () => app.settings,
      models: () => app.models, // the bubbles' model names (modelLabel)
      target: ({ view }) => view.target,
      switching: ({ view }) => view.switching,
    });
    // A compare's columns stream without the thread being drawn again: only its blocks are updated.
    this.compareInputs = new Inputs({ compares: ({ state }) => state.compares, shown: ({ state }) => shownMessages(state),
                                      running: ({ s }) => s.running });
    this.pendingInputs = new Inputs({ pending: ({ state }) => state.pending });
    this.olderInputs = new Inputs({
      hasMore: ({ state }) => state.hasMore, loading: ({ s }) => !!s.loadingOlder, failed: ({ s }) => !!s.olderFailed,
      backlog: ({ view }) => view.backlog,
    });
    this.emptyInputs = new Inputs({ shown: ({ state }) => shownMessages(state), pending: ({ state }) => state.pending });
    this.meterInputs = new Inputs({
      context: ({ s }) => s.context, error: ({ s }) => s.contextError, compacting: ({ s }) => s.compacting,
      auto: () => app.settings?.compaction?.auto !== false,
    });
  }

  /** "Summarize now": the older messages become a summary (its divider shows where). */
  async summarize() {
    const s = this.session;
    if (!s || s.compacting) return;
    try {
      const c = await s.compact();
      if (c) toast(compactedSentence(c));
    } catch (err) {
      toast(err.message, { ms: 8000 });
    }
  }

  /** opts.steer: sent while a reply runs, to join it at its next step (Ctrl/⌘+Enter). */
  _send(text, opts = {}) {
    // The person wants to see their message and its answer, whatever was shown before
    // (a message opened from search is let go).
    this.scroll.follow();
    if (!this.session) return this.actions.createAndSend(text, { research: !!opts.research, compare: opts.compare });
    // A message goes to the active branch: a version looked at meanwhile is left for it.
    if (this.session.state.view) this.session.showLive();
    this.session.send(text, { steer: !!opts.steer && this.session.running && !opts.research && !opts.compare,
                              research: !!opts.research, compare: opts.compare });
    this.keeper?.sent();
    return true;
  }

  /** The box starts with the draft kept for this chat (the server's), or for the new chat (in memory). */
  _keepDraft(session) {
    if (!session) {
      const kept = newChatDraftKept();
      if (kept) this.composer.restore(kept);
      return;
    }
    this.keeper = new DraftKeeper(session.chatId, () => this.composer.kept());
    this.keeper.load().then((kept) => {
      // What was typed before the answer came is newer than the kept draft: it stays.
      const c = this.composer;
      if (!kept || c.input.value || c.attachments.length) return;
      c.restore(kept);
      session.refreshContext();
    });
  }

  /** The view is replaced: its box is kept (the chat's draft saved now, the new chat's in memory). */
  leave() {
    this.docs?.leave();
    this.replyReader?.close();
    for (const v of this.views.values()) v.close(); // their speaker buttons stop listening to the reader
    if (this.keeper) this.keeper.close();
    else keepNewChatDraft(this.composer.kept());
  }

  _setModel(id) {
    if (this.session) this.actions.setModel(this.session.chatId, id);
    else { this.draftModel = id; schedule(); }
  }

  /** Switch the chat's mode (PATCH); a new chat is created in the mode chosen. */
  async _setMode(mode) {
    const s = this.session;
    if (!s) { this.draftMode = mode; schedule(); return; }
    try {
      s.setChat(await patch(`/api/chats/${encodeURIComponent(s.chatId)}`, { mode }));
    } catch (err) {
      toast(err.message);
      this.composerInputs.forget(); // the switch goes back to the chat's mode
      schedule();
    }
  }

  /**
   * Show version `toId` instead of `fromId` (its sibling). The message keeps its place on
   * screen and the focus stays on the switcher's button that was pressed (step: -1, 1).
   */
  async switchVersion(fromId, toId, step) {
    const el = this.views.get(fromId)?.el;
    if (!el || !this.session) return;
    this.scroll.release();
    const switching = this.switching = { toId, top: el.getBoundingClientRect().top,
                                         step: el.contains(document.activeElement) ? step : 0 };
    let done = false;
    try {
      done = await this.session.switchVersion(fromId, toId);
    } catch (err) {
      toast(err.message || "That version could not be shown.");
    }
    // Refused, or overtaken by another switch: nothing to put in place (the next frame does it otherwise).
    if (!done && this.switching === switching) this.switching = null;
  }

  /** After the frame that drew a switched version: back where it was, focus on its switcher. */
  _placeSwitched() {
    const sw = this.switching;
    const view = sw && this.views.get(sw.toId);
    if (!view) return;
    this.switching = null;
    this.scroll.placeAt(view.el, sw.top);
    if (sw.step) view.focusVersion(sw.step);
  }

  /** Open the editor on the last message the person sent; false when it cannot be edited now. */
  editLast() {
    const msgs = this.session?.state ? shownMessages(this.session.state) : [];
    const last = [...msgs].reverse().find((m) => m.role === "user" && m.status !== "queued");
    return !!last && !!this.views.get(last.id)?.edit();
  }

  /** Copy the text of the last reply (Ctrl/⌘+Shift+C). */
  async copyLastReply() {
    const msgs = this.session?.state ? shownMessages(this.session.state) : [];
    const last = [...msgs].reverse().find((m) => m.role === "assistant" && m.content);
    if (!last) { toast("There is no reply to copy yet."); return; }
    toast(await copyText(last.content) ? "Copied the last reply." : "The reply could not be copied.");
  }

  focus() { this.composer.focus(); }

  /** Show a message a search found: page back to it, scroll to it, mark it for a moment. */
  async reveal(messageId) {
    const s = this.session;
    if (!s) return false;
    // Not on the branch shown: search covers every branch, so show the one it is on.
    let found = await s.loadUntil(messageId);
    if (!found && !s.closed && !s.olderFailed) {
      try {
        found = await s.showBranchOf(Number(messageId)) && await s.loadUntil(messageId);
      } catch (err) {
        toast(err.message);
        return false;
      }
    }
    if (!found) {
      if (!s.closed) toast(s.olderFailed ? "Older messages could not be loaded." : "That message is no longer in this chat.");
      return false;
    }
    this.target = Number(messageId);
    schedule();
    return true;
  }

  _showTarget() {
    const view = this.views.get(this.target);
    this.target = null;
    if (view) this.scroll.holdInView(view.el);
  }

  render() {
    const s = this.session;
    const source = { s, state: s?.state, view: this };
    this.header.render(source);
    this._renderSearchHint(source);
    if (this.pickerInputs.read(source)) this.composer.picker.update();
    this._renderComposer(source);
    if (!s) {
      this.empty.hidden = false;
      return;
    }
    if (s.loadError) {
      if (this.errorShown !== s.loadError) {
        this.errorShown = s.loadError;
        this.empty.hidden = false;
        this.empty.replaceChildren(h("h2", {}, "This chat could not be opened"), h("p", {}, s.loadError.message));
      }
      return;
    }
    if (!s.loaded) return;
    const thread = this.threadInputs.read(source);
    const compares = this.compareInputs.read(source);
    if (compares) this.compares.update(compares);
    if (thread) {
      const restore = this.scroll.keepPlace(this.list);
      this._renderMessages(thread);
      restore();
      if (this.switching) this._placeSwitched();
      if (this.target != null) this._showTarget();
    }
    this._renderPending(source);
    this.approvals.render(source);
    this.questions.render(source);
    this.notice.render(source);
    this._renderMeter(source);
    this._renderOlder(source);
    this._renderEmpty(source);
    this.docs.render(source);
    runFor(FIRST_PAINT_BUDGET_MS);
    this.scroll.drawn();
  }

  /** The composer is told only when its inputs change (each write costs a style pass). */
  _renderComposer(source) {
    const inp = this.composerInputs.read(source);
    if (!inp) return;
    const model = app.models.find((m) => m.id === nextModelId(this.session, inp.chat, inp.draftModel, inp.settings)) || null;
    if (!this.session) {
      // The chat's mode (CONTRACT §7): a new chat's is chosen here, else its folder's, else Ask.
      const mode = inp.draftMode || inp.folders.find((f) => f.id === inp.draftFolder)?.mode || "ask";
      this.composer.update({ running: false, queue: [], disabled: !inp.models.length,
        note: inp.models.length ? "" : "Add a model in Settings to start.", model, mode });
      return;
    }
    if (inp.loadError) { this.composer.update({ running: false, disabled: true }); return; }
    if (!inp.loaded) { this.composerInputs.forget(); return; }
    this.composer.update({
      running: inp.running, queue: inp.queue, disabled: false,
      note: !inp.chat?.model_id && inp.settings && !inp.settings.default_model_id ? "This chat has no model: choose one with “Choose a model”." : "",
      model, workspace: inp.chat?.workspace || "", mode: inp.chat?.mode || "ask",
    });
  }

  /** The empty chat's line on web search, while it is off (CONTRACT §8: the UI says how to add it). */
  _renderSearchHint(source) {
    const inp = this.hintInputs.read(source);
    if (!inp) return;
    const { on, sentence, todo } = searchState(inp.webSearch);
    this.searchHint.hidden = on || !inp.settingsLoaded;
    const link = h("a", { href: "#/settings/web" }, todo ? "Settings → Web search" : "Open Settings → Web search");
    this.searchHint.replaceChildren(...(todo ? [`${sentence} ${todo} in `, link, "."] : [`${sentence} `, link]));
  }

  _renderMessages(inp) {
    // A reply streaming right now has no model id yet: the chat's model is writing it.
    const ownModel = inp.chat?.model_id || inp.settings?.default_model_id;
    const chatModel = inp.turn?.modelId || ownModel;
    const shown = inp.shown;
    const marksState = { compaction: inp.compaction, trimmed: inp.trimmed, turn: inp.turn, research: inp.research };
    const toolResults = new Map();
    const callIds = new Set();
    let lastAssistant = null;
    for (const m of shown) {
      if (m.role === "tool" && m.toolCallId) toolResults.set(m.toolCallId, m);
      if (m.role === "assistant") { lastAssistant = m; for (const c of m.toolCalls || []) callIds.add(c.id); }
    }
    const waiting = new Set([...inp.approvals, ...inp.questions].map((a) => a.call_id));
    const plans = newestPlans(shown); // each plan's newest card is the one that executes
    const executions = planExecutions(shown); // and says whether it was executed
    const steps = answerSteps(shown); // a reply of tool steps and an answer reads as one
    const lastUser = shown.findLast((m) => m.role === "user" && m.status !== "queued")?.id ?? null;
    const steer = new Set(inp.queue.filter((q) => q.steer).map((q) => q.message_id));
    // The turn this window followed has ended: a call it left "running" will not finish.
    const turnOver = !!inp.turn && inp.turn.status !== "running";
    // A queued message shows once: as its chip by the composer (with its Remove button)
    // while the queue holds it. Others still queued are answered after the running
    // reply, so they are shown after it.
    const chips = new Set(inp.queue.map((q) => q.message_id));
    const queued = (m) => m.status === "queued";
    const order = shown.some(queued)
      ? [...shown.filter((m) => !queued(m)), ...shown.filter((m) => queued(m) && !chips.has(m.id))]
      : shown;
    // A tool result shows inside its call's row; only orphans get a bubble. A compare's replies
    // show in its columns.
    const columns = repliesInColumns(order);
    const inCall = (m) => (m.role === "tool" && callIds.has(m.toolCallId)) || columns.has(m.id);
    const hasView = (m) => this.views.get(m.id)?.role === m.role;
    // Messages outside [from, upto) that have no bubble yet wait for a later frame: the
    // newest first; a version switched to and what follows it first (it stays where its
    // sibling was); a message searched for is drawn at once, with everything after it.
    let from = 0;
    let upto = order.length;
    const switched = inp.switching ? order.findIndex((m) => m.id === inp.switching.toId) : -1;
    if (switched >= 0) {
      from = switched;
      let budget = NEW_VIEWS_PER_FRAME;
      for (let i = from; i < order.length; i++) {
        if (inCall(order[i]) || hasView(order[i])) continue;
        if (budget-- === 0) { upto = i; break; }
      }
    } else if (inp.target == null) {
      let budget = NEW_VIEWS_PER_FRAME;
      for (let i = order.length - 1; i >= 0; i--) {
        if (inCall(order[i]) || hasView(order[i])) continue;
        if (budget-- === 0) { from = i + 1; break; }
      }
    }
    // The context's marks go after the bubble each names (web/js/context-marks.js).
    const after = new Map();
    for (const mark of contextMarks(order, (m) => !inCall(m), marksState)) {
      after.set(mark.afterId, [...(after.get(mark.afterId) || []), this.marks.element(mark.kind, marksState)]);
    }
    // A research turn's progress strip goes after its question (views/research-progress.js).
    const strip = this.research.element(marksState);
    const asked = strip ? order.find((m) => m.id === inp.research.userMessageId) : null;
    if (asked) after.set(asked.id, [...(after.get(asked.id) || []), strip]);
    // A turn's saved memories go under its reply (web/js/memory.js).
    for (const [id, chips] of chipsByReply(order, inp.memorySaved)) {
      if (!this.memoryChips.has(id)) this.memoryChips.set(id, new MemoryChips());
      after.set(id, [...(after.get(id) || []), this.memoryChips.get(id).element(chips)]);
    }
    // A compare's columns go after the message that asked it.
    for (const [id, el] of this.compares.placed(order)) after.set(id, [...(after.get(id) || []), el]);
    const placed = new Set();
    this.backlog = false;
    let prev = null;
    const live = new Set();
    for (let i = 0; i < order.length; i++) {
      const m = order[i];
      if (inCall(m)) continue;
      if ((i < from || i >= upto) && !hasView(m)) { this.backlog = true; continue; }
      let view = this.views.get(m.id);
      if (!view || view.role !== m.role) {
        if (view) this._dropView(view);
        view = new MessageView(m, this.msgActions);
        this.views.set(m.id, view);
      }
      view.update(m, { busy: inp.running, lastAssistant: m === lastAssistant, toolResults, chatModel, ownModel, waiting,
                       steer, turnOver, plans, executions, lastUser, steps });
      live.add(m.id);
      // Keep DOM order equal to state order with pointer checks only.
      for (const el of [view.el, ...(after.get(m.id) || [])]) {
        const want = prev ? prev.nextSibling : this.list.firstChild;
        if (want !== el) this.list.insertBefore(el, want);
        prev = el;
        placed.add(el);
      }
    }
    for (const [id, view] of this.views) {
      if (!live.has(id)) { this._dropView(view); this.views.delete(id); }
    }
    for (const el of [this.marks.divider, this.marks.note, this.research.el]) if (!placed.has(el)) el.remove();
    for (const [id, chips] of this.memoryChips) if (!placed.has(chips.el)) { chips.el.remove(); this.memoryChips.delete(id); }
    this.compares.prune(placed);
    if (this.backlog) {
      // Bubbles still to build: the next frame draws the thread again, whatever changed.
      this.threadInputs.forget();
      schedule();
    }
  }

  _dropView(view) {
    view.el.remove();
    view.close();
  }

  /** The empty chat's greeting, while nothing is shown or being sent. */
  _renderEmpty(source) {
    const inp = this.emptyInputs.read(source);
    if (!inp) return;
    const none = inp.shown.length === 0 && inp.pending.length === 0;
    if (this.empty.hidden === none) this.empty.hidden = !none;
  }

  _renderPending(source) {
    const inp = this.pendingInputs.read(source);
    if (!inp) return;
    this.pending.replaceChildren(...inp.pending.map((p) =>
      h("article", { class: "msg user pending-msg" }, h("div", { class: "msg-meta" }, "You · sending…"), h("div", { class: "msg-body plain" }, p.content))));
  }

  /** "Show earlier messages" and the sentinel: older pages wait until this one is all drawn (a half-drawn page would show the sentinel). */
  _renderOlder(source) {
    const inp = this.olderInputs.read(source);
    if (!inp) return;
    const more = inp.hasMore && !inp.backlog;
    this.older.hidden = !more;
    this.sentinel.hidden = !more;
    this.older.disabled = inp.loading;
    this.older.textContent = inp.loading ? "Loading…" : "Show earlier messages";
    // A page that ended with the sentinel still in view (short messages) gets no new
    // intersection change: observing afresh reports its current state once.
    if (this.wasLoadingOlder && !inp.loading && !inp.failed && this.observer) {
      this.observer.unobserve(this.sentinel);
      this.observer.observe(this.sentinel);
    }
    this.wasLoadingOlder = inp.loading;
  }

  _renderMeter(source) {
    const inp = this.meterInputs.read(source);
    if (inp) this.meter.update(inp.context, { auto: inp.auto, compacting: inp.compacting, error: inp.error });
  }

  /** Retry after an error: answer again when nothing was written, else carry on from the text. */
  _retry() {
    const msgs = this.session.state.messages.filter((m) => m.status !== "queued");
    const last = msgs[msgs.length - 1];
    if (last?.role === "assistant" && !last.content) this.session.regenerate(last.id);
    else this.session.continueReply();
  }
}
