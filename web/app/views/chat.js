// The chat view: header (title, workspace, chat settings, the ⋯ menu: Summarize now,
// Inspect request), the messages with the context's marks (a summary's divider, a turn's
// "left out" note), notices, approvals, the model's questions, and the composer (its picker is where the chat's
// model is chosen; the context meter sits beside it). It renders from a ChatSession's
// reducer state and reuses one MessageView per message, so a frame only touches what changed.
import { h } from "../dom.js";
import { app, modelLabel, schedule } from "../store.js";
import { MessageView, errorText } from "./message.js";
import { Composer } from "./composer.js";
import { approvalCard } from "./approval.js";
import { questionCard } from "./question-card.js";
import { runFor } from "../render-queue.js";
import { toast } from "./toast.js";
import { get, patch } from "../api.js";
import { activeSettings, usageSummary } from "../../js/chat-marks.js";
import { shownMessages } from "../../js/reducer.js";
import { copyText } from "../dom.js";
import { ContextMeter } from "./context-meter.js";
import { ContextMarks } from "./context-marks.js";
import { ResearchProgress } from "./research-progress.js";
import { contextMarks } from "../../js/context-marks.js";
import { compactedSentence } from "../../js/context-meter.js";
import { menuKeys } from "./menu.js";
import { newestPlans, planExecutions } from "../../js/plans.js";
import { answerSteps } from "../../js/answer-steps.js";
import { searchState } from "../../js/web-search.js";
import { DraftKeeper, SAVE_PAUSE_MS, keepNewChatDraft, newChatDraftKept } from "../chat-draft.js";

// Queued Markdown (history) drawn before the frame is painted, newest first: enough
// for what is on screen; the rest follows in later tasks.
const FIRST_PAINT_BUDGET_MS = 30;
// New bubbles built per frame, newest first: opening a chat paints the screenful at the
// bottom first, and the rest of the page goes in above it over the next frames.
const NEW_VIEWS_PER_FRAME = 16;
// Typing is counted for the context meter this long after the last key, never per key.
const TYPING_PAUSE_MS = 400;

/** The last part of a folder path, whatever the system's separator. */
export function folderName(path) {
  const parts = String(path).replace(/[\\/]+$/, "").split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

export class ChatView {
  /**
   * @param session a ChatSession, or null for a new chat not saved yet
   * @param actions {{createAndSend(text), setModel(chatId, modelId), openChatSettings(), openSidebar()}}
   */
  constructor(session, actions) {
    this.session = session;
    this.actions = actions;
    this.views = new Map();
    this.dismissedNotice = null;
    this.key = "";

    this.title = h("h1", { class: "chat-title", id: "chat-title" });
    this.status = h("span", { class: "conn", role: "status" });
    // The chat's workspace folder (file tools and the shell reach only it): its name, the
    // whole path in the title; a click opens the chat settings where it is chosen.
    this.workspace = h("button", { type: "button", class: "ghost workspace-chip", hidden: true, onclick: () => actions.openChatSettings() });
    // Settings that change this chat's replies (named in its label), and what it has used.
    this.settingsMark = h("button", { type: "button", class: "ghost settings-mark", hidden: true, onclick: () => actions.openChatSettings() }, "Custom");
    this.usage = h("span", { class: "chat-usage", hidden: true });
    // The chat's ⋯ menu: what is done to its context (Summarize now, Inspect request).
    this.moreBtn = h("button", { type: "button", class: "ghost icon-btn chat-more", "aria-label": "More for this chat: summarize, inspect the next request",
      "aria-haspopup": "menu", "aria-expanded": "false", onclick: () => this._menu(!this.menuEl) }, "⋯");
    this.more = h("div", { class: "chat-more-wrap", hidden: !session }, this.moreBtn);
    this.header = h("header", { class: "chat-header" },
      h("button", { type: "button", class: "ghost icon-btn only-narrow drawer-toggle", "aria-label": "Show chats", "aria-controls": "sidebar", "aria-expanded": "false", onclick: () => actions.openSidebar() }, h("span", { class: "i i-menu", "aria-hidden": "true" })),
      this.title, this.status, h("span", { class: "spacer" }), this.usage, this.settingsMark, this.workspace,
      h("button", { type: "button", class: "ghost", "aria-label": "Chat settings: system prompt, temperature, reasoning, workspace, tool approvals", onclick: () => actions.openChatSettings(), hidden: !session }, "Chat settings"),
      this.more);

    this.older = h("button", { type: "button", class: "ghost older", hidden: true, onclick: () => session?.loadOlder() }, "Show earlier messages");
    // Older pages load when the top of the thread scrolls into view: an observer on a
    // sentinel, no scroll listener and no timers. The button stays for keyboard use.
    this.sentinel = h("div", { class: "history-sentinel", "aria-hidden": "true", hidden: true });
    this.list = h("div", { class: "messages" });
    this.pending = h("div", { class: "pending" });
    this.approvals = h("div", { class: "approvals" });
    this.questions = h("div", { class: "questions" });
    this.notice = h("div", { class: "notice-slot" });
    // Without a search service models cannot look anything up: the empty chat says how to add one.
    this.searchHint = h("p", { class: "hint web-search-hint", hidden: true });
    this.empty = h("div", { class: "empty", hidden: true },
      h("h2", {}, "What's on your mind?"), h("p", { class: "hint" }, "Your chats stay on this computer. Press ? for shortcuts."),
      this.searchHint);
    this.scroller = h("div", { class: "scroller" },
      h("div", { class: "thread" }, this.sentinel, this.older, this.empty, this.list, this.pending, this.approvals, this.questions, this.notice));
    this.composer = new Composer({
      send: (text, opts) => this._send(text, opts),
      stop: () => session?.stop(),
      discard: (id) => session?.discardQueued(id),
      switchModel: () => this.composer.picker.open(),
      model: () => this._currentModel(),
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
    if (session) session.draft = () => this.composer.draft();
    this._keepDraft(session);
    this.el = h("section", { class: "chat", "aria-label": "Chat" }, this.header, this.scroller, this.composer.el);
    // Following the newest text: the view stays at the bottom while the person has
    // not scrolled away from it. Checked on scroll and applied after layout (a
    // ResizeObserver), so drawing a frame never forces a layout of its own.
    this.stick = true;
    this.scroller.addEventListener("scroll", () => {
      const s = this.scroller;
      // A scroll event comes a frame after the scroll, when more may have gone in below
      // (a finished reply, a queued message's answer) and the composer may have changed
      // height. A position at or below where the view last put the bottom is not the
      // person scrolling away: only a move up from there is read as theirs.
      if (this.ownTop != null && s.scrollTop >= this.ownTop - 2) return;
      this.ownTop = null;
      this.stick = s.scrollHeight - s.scrollTop - s.clientHeight < 120;
    }, { passive: true });
    // A window hidden (to the tray) draws no frames; shown again, it ends where the
    // reply ended if the person was following it when it was hidden.
    this.onVisibility = () => {
      if (!this.el.isConnected) { document.removeEventListener("visibilitychange", this.onVisibility); return; }
      if (document.hidden) { this.stickWhenHidden = this.stick && !this.hold; return; }
      if (!this.stickWhenHidden) return;
      this.stick = true;
      this._toBottom();
      schedule();
    };
    document.addEventListener("visibilitychange", this.onVisibility);
    // A message opened from search stays in view while the chat lays out around it
    // (older pages, Markdown drawn later), until the person scrolls or clicks.
    for (const type of ["wheel", "touchstart", "pointerdown", "keydown"]) {
      this.scroller.addEventListener(type, () => this._release(), { passive: true });
    }
    if (typeof ResizeObserver === "function") {
      this.pin = new ResizeObserver(() => this._follow());
      this.pin.observe(this.scroller);
      this.pin.observe(this.scroller.firstElementChild);
    }
    if (session && typeof IntersectionObserver === "function") {
      this.observer = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting) && session.state.hasMore) session.loadOlder();
      }, { root: this.scroller, rootMargin: "200px 0px 0px 0px" });
      this.observer.observe(this.sentinel);
    }
    this.msgActions = {
      edit: (id, text) => session.edit(id, text),
      regenerate: (id, modelId) => session.regenerate(id, modelId),
      continueReply: () => session.continueReply(),
      executePlan: (planId) => { this.stick = true; session.executePlan(planId); },
      switchVersion: (fromId, toId, step) => this.switchVersion(fromId, toId, step),
      textGen: (id, field) => session.textGen(id, field),
      textSince: (id, field, gen, from) => session.textSince(id, field, gen, from),
    };
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

  /** Open or close the header's ⋯ menu; closed, focus goes back to its button when it was inside. */
  _menu(open) {
    if (!open) {
      if (!this.menuEl) return;
      const inside = this.menuEl.contains(document.activeElement);
      this.menuEl.remove();
      this.menuEl = null;
      document.removeEventListener("pointerdown", this.menuOutside, true);
      this.moreBtn.setAttribute("aria-expanded", "false");
      if (inside) this.moreBtn.focus();
      return;
    }
    const pick = (fn) => () => { this._menu(false); fn(); };
    const busy = !!this.session?.compacting;
    this.menuEl = h("div", { class: "menu", role: "menu", "aria-label": "This chat" },
      // Under way, the same item stops it: the chat's stop cancels its summary (the request then
      // answers with the server's sentence, which the toast shows).
      h("button", { type: "button", role: "menuitem", onclick: pick(() => (busy ? this.session?.stop() : this.summarize())) },
        busy ? "Stop summarizing" : "Summarize now"),
      h("button", { type: "button", role: "menuitem", onclick: pick(() => this.actions.inspect()) }, "Inspect request…"));
    menuKeys(this.menuEl, () => this._menu(false));
    this.menuOutside = (e) => { if (!this.more.contains(e.target)) this._menu(false); };
    document.addEventListener("pointerdown", this.menuOutside, true);
    this.more.append(this.menuEl);
    this.moreBtn.setAttribute("aria-expanded", "true");
    this.menuEl.querySelector("button:not(:disabled)")?.focus();
  }

  /** opts.steer: sent while a reply runs, to join it at its next step (Ctrl/⌘+Enter). */
  _send(text, opts = {}) {
    // The person wants to see their message and its answer, whatever was shown before
    // (a message opened from search is let go).
    this._release();
    this.stick = true;
    if (!this.session) return this.actions.createAndSend(text, { research: !!opts.research });
    // A message goes to the active branch: a version looked at meanwhile is left for it.
    if (this.session.state.view) this.session.showLive();
    this.session.send(text, { steer: !!opts.steer && this.session.running && !opts.research, research: !!opts.research });
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
    if (this.keeper) this.keeper.close();
    else keepNewChatDraft(this.composer.kept());
  }

  _setModel(id) {
    if (this.session) this.actions.setModel(this.session.chatId, id);
    else { this.draftModel = id; schedule(); }
  }

  /** The chat's mode (CONTRACT §7); a new chat's is chosen here, else its folder's, else Ask. */
  _currentMode() {
    if (this.session) return this.session.chat?.mode || "ask";
    return this.draftMode || app.folders.find((f) => f.id === app.draft?.folderId)?.mode || "ask";
  }

  /** Switch the chat's mode (PATCH); a new chat is created in the mode chosen. */
  async _setMode(mode) {
    const s = this.session;
    if (!s) { this.draftMode = mode; schedule(); return; }
    try {
      s.setChat(await patch(`/api/chats/${encodeURIComponent(s.chatId)}`, { mode }));
    } catch (err) {
      toast(err.message);
      this.composerIn = null; // the switch goes back to the chat's mode
      schedule();
    }
  }

  /** The model the next message goes to: the chat's (or the new chat's), else the default. */
  _currentModel() {
    const s = this.session;
    const id = s ? s.chat?.model_id : this.draftModel;
    return id || app.settings?.default_model_id || null;
  }

  /**
   * Show version `toId` instead of `fromId` (its sibling). The message keeps its place on
   * screen and the focus stays on the switcher's button that was pressed (step: -1, 1).
   */
  async switchVersion(fromId, toId, step) {
    const el = this.views.get(fromId)?.el;
    if (!el || !this.session) return;
    this._release();
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
    this.stick = false;
    this.scroller.scrollTop += view.el.getBoundingClientRect().top - sw.top;
    this.ownTop = null;
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

  /** The catalog entry of the model the next message goes to (the chat's, else the default). */
  _model() {
    const id = this.session ? this.session.chat?.model_id || app.settings?.default_model_id
      : this.draftModel ?? app.settings?.default_model_id;
    return app.models.find((m) => m.id === id) || null;
  }

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
    if (!view) return;
    this._release();
    const el = view.el;
    el.tabIndex = -1; // focus goes to it, so a screen reader reads what was found
    el.classList.add("msg-found");
    this.found = this.hold = el;
    this.stick = false;
    el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
  }

  _release() {
    this.hold = null;
    this.found?.classList.remove("msg-found");
    this.found = null;
  }

  /** After layout: keep a found message in view, else follow the newest text. */
  _follow() {
    if (this.hold?.isConnected) this.hold.scrollIntoView({ block: "center" });
    else if (this.stick) this._toBottom();
  }

  _toBottom() {
    const s = this.scroller;
    s.scrollTop = s.scrollHeight;
    this.ownTop = s.scrollTop;
  }

  render() {
    const s = this.session;
    const state = s?.state;
    // Skip the frame when none of the inputs changed (compared by identity).
    const parts = [state, s?.connection, s?.chat, s?.loaded, s?.loadError, s?.loadingOlder, app.models, app.settings, this.dismissedNotice, this.target, this.draftModel, this.draftMode,
                   s?.context, s?.contextError, s?.compacting];
    if (this.lastParts && !this.backlog && parts.every((p, i) => p === this.lastParts[i])) return;
    const textOnly = this.backlog ? null : this._textOnly(parts);
    this.lastParts = parts;
    if (textOnly) {
      // Most frames of a streaming reply: only its text grew. That bubble alone is patched.
      textOnly.view?.updateText(textOnly.msg);
      if (!this.pin && this.stick) this._toBottom();
      return;
    }

    this._renderHeader();
    this._renderSearchHint();
    this.composer.picker.update();
    if (!s) {
      this.empty.hidden = false;
      this._updateComposer({ running: false, queue: [], disabled: !app.models.length,
        note: app.models.length ? "" : "Add a model in Settings to start.", model: this._model(),
        mode: this._currentMode() });
      return;
    }
    if (s.loadError) {
      this.empty.hidden = false;
      this.empty.replaceChildren(h("h2", {}, "This chat could not be opened"), h("p", {}, s.loadError.message));
      this._updateComposer({ running: false, disabled: true });
      return;
    }
    if (!s.loaded) return;
    // Older messages going in above must not move what the person is reading: note
    // where the first shown message sits, and put it back there after the frame.
    const anchor = !this.stick && this.list.firstElementChild;
    const anchorTop = anchor ? anchor.getBoundingClientRect().top : 0;
    this._renderMessages(state, s.running);
    this._renderPending(state);
    this._renderApprovals(state);
    this._renderQuestions(state);
    this._renderNotice(state, s.running);
    this._renderMeter(s);
    // Older pages wait until this one is all drawn: a half-drawn page would show the sentinel.
    const more = state.hasMore && !this.backlog;
    const olderKey = `${more}|${!!s.loadingOlder}`;
    if (olderKey !== this.olderKey) {
      this.olderKey = olderKey;
      this.older.hidden = !more;
      this.sentinel.hidden = !more;
      this.older.disabled = !!s.loadingOlder;
      this.older.textContent = s.loadingOlder ? "Loading…" : "Show earlier messages";
    }
    if (anchor?.isConnected && anchor !== this.list.firstElementChild) {
      this.scroller.scrollTop += anchor.getBoundingClientRect().top - anchorTop;
    }
    if (this.switching) this._placeSwitched();
    // A page that ended with the sentinel still in view (short messages) gets no new
    // intersection change: observing afresh reports its current state once.
    if (this.wasLoadingOlder && !s.loadingOlder && !s.olderFailed && this.observer) {
      this.observer.unobserve(this.sentinel);
      this.observer.observe(this.sentinel);
    }
    this.wasLoadingOlder = !!s.loadingOlder;
    const empty = shownMessages(state).length === 0 && state.pending.length === 0;
    if (this.empty.hidden === empty) this.empty.hidden = !empty;
    const model = s.chat?.model_id;
    this._updateComposer({
      running: s.running, queue: state.queue, disabled: false,
      note: !model && app.settings && !app.settings.default_model_id ? "This chat has no model: choose one with “Choose a model”." : "",
      model: this._model(), workspace: s.chat?.workspace || "", mode: this._currentMode(),
    });
    runFor(FIRST_PAINT_BUDGET_MS);
    if (this.target != null) this._showTarget();
    if (!this.pin && this.stick) this._toBottom();
  }

  /**
   * {view, msg} when the only change since the last frame is the text (or reasoning) of
   * one message already shown, with everything else in the state and the frame's other
   * inputs the same objects; else null. Compared by identity, so it costs a few checks.
   */
  _textOnly(parts) {
    const last = this.lastParts;
    if (!last || !last[0] || !parts[0]) return null;
    for (let i = 1; i < parts.length; i++) if (parts[i] !== last[i]) return null;
    const before = last[0];
    const now = parts[0];
    for (const k in now) if (k !== "messages" && k !== "lastEventId" && now[k] !== before[k]) return null;
    const a = before.messages;
    const b = now.messages;
    if (a.length !== b.length) return null;
    let at = -1;
    for (let i = 0; i < b.length; i++) {
      if (a[i] === b[i]) continue;
      if (at >= 0) return null;
      at = i;
    }
    if (at < 0) return null;
    const msg = b[at];
    const old = a[at];
    for (const k in msg) if (k !== "content" && k !== "reasoning" && msg[k] !== old[k]) return null;
    // The reply streams on the active branch while another is looked at: nothing to draw.
    if (now.view && !now.view.messages.includes(msg)) return { msg };
    const view = this.views.get(msg.id);
    return view && view.msg === old && view.lastCtx ? { view, msg } : null;
  }

  /** The composer is told only when its inputs change (each write costs a style pass). */
  _updateComposer(opts) {
    const keys = ["running", "queue", "disabled", "note", "model", "workspace", "mode"];
    if (this.composerIn && keys.every((k) => opts[k] === this.composerIn[k])) return;
    this.composerIn = opts;
    this.composer.update(opts);
  }

  _renderHeader() {
    const s = this.session;
    const title = s ? (s.title || "New chat") : "New chat";
    if (this.title.textContent !== title) this.title.textContent = title;
    const docTitle = s?.title ? `${s.title} — Numi` : "Numi";
    if (document.title !== docTitle) document.title = docTitle;
    this._renderWorkspace(s?.chat?.workspace || "");
    this._renderMarks(s);
    const conn = s?.connection;
    const status = !s || conn === "open" || !s.loaded ? "" : conn === "reconnecting" ? "Reconnecting…" : conn === "gone" ? "This chat was deleted" : "Connecting…";
    if (this.status.textContent !== status) this.status.textContent = status;
  }

  /** The settings mark, and the usage total read again whenever a turn has ended (or the history changed). */
  _renderMarks(s) {
    const active = activeSettings(s?.chat).join(" · ");
    if (active !== (this.settingsMark.title || "")) {
      this.settingsMark.hidden = !active;
      this.settingsMark.title = active;
      this.settingsMark.setAttribute("aria-label", `Chat settings in effect: ${active}. Change them in the chat settings`);
    }
    const st = s?.loaded && !s.running ? s.state : null;
    const last = st?.messages[st.messages.length - 1];
    const sig = st ? `${s.chatId}|${st.messages.length}|${last?.id}|${last?.status}|${st.turn?.status}` : null;
    if (!sig || sig === this.usageSig) return;
    this.usageSig = sig;
    get(`/api/chats/${encodeURIComponent(s.chatId)}/usage`).then((usage) => {
      if (this.usageSig !== sig) return; // a newer read is on its way
      const { text, title } = usageSummary(usage);
      this.usage.hidden = !text;
      this.usage.textContent = text;
      this.usage.title = title;
    }, () => { /* the total waits for the next turn; the chat itself is unaffected */ });
  }

  _renderWorkspace(path) {
    if (path === this.workspacePath) return;
    this.workspacePath = path;
    this.workspace.hidden = !path;
    if (!path) return;
    const name = folderName(path);
    this.workspace.replaceChildren(h("span", { class: "i i-folder", "aria-hidden": "true" }), " ", name);
    this.workspace.title = path;
    this.workspace.setAttribute("aria-label", `Workspace: ${name} (${path}). Change it in the chat settings`);
  }

  /** The empty chat's line on web search, while it is off (CONTRACT §8: the UI says how to add it). */
  _renderSearchHint() {
    const ws = app.settings?.web_search;
    const key = app.settings ? JSON.stringify(ws ?? null) : "";
    if (key === this.searchHintKey) return;
    this.searchHintKey = key;
    const { on, sentence, todo } = searchState(ws);
    this.searchHint.hidden = on || !app.settings;
    const link = h("a", { href: "#/settings/web" }, todo ? "Settings → Web search" : "Open Settings → Web search");
    this.searchHint.replaceChildren(...(todo ? [`${sentence} ${todo} in `, link, "."] : [`${sentence} `, link]));
  }

  _renderMessages(state, busy) {
    // A reply streaming right now has no model id yet: the chat's model is writing it.
    const ownModel = this.session.chat?.model_id || app.settings?.default_model_id;
    const chatModel = state.turn?.modelId || ownModel;
    const shown = shownMessages(state);
    const toolResults = new Map();
    const callIds = new Set();
    let lastAssistant = null;
    for (const m of shown) {
      if (m.role === "tool" && m.toolCallId) toolResults.set(m.toolCallId, m);
      if (m.role === "assistant") { lastAssistant = m; for (const c of m.toolCalls || []) callIds.add(c.id); }
    }
    const waiting = new Set([...state.approvals, ...state.questions].map((a) => a.call_id));
    const plans = newestPlans(shown); // each plan's newest card is the one that executes
    const executions = planExecutions(shown); // and says whether it was executed
    const steps = answerSteps(shown); // a reply of tool steps and an answer reads as one
    const lastUser = shown.findLast((m) => m.role === "user" && m.status !== "queued")?.id ?? null;
    const steer = new Set(state.queue.filter((q) => q.steer).map((q) => q.message_id));
    // The turn this window followed has ended: a call it left "running" will not finish.
    const turnOver = !!state.turn && state.turn.status !== "running";
    // A queued message shows once: as its chip by the composer (with its Remove button)
    // while the queue holds it. Others still queued are answered after the running
    // reply, so they are shown after it.
    const chips = new Set(state.queue.map((q) => q.message_id));
    const queued = (m) => m.status === "queued";
    const order = shown.some(queued)
      ? [...shown.filter((m) => !queued(m)), ...shown.filter((m) => queued(m) && !chips.has(m.id))]
      : shown;
    // A tool result shows inside its call's row; only orphans get a bubble.
    const inCall = (m) => m.role === "tool" && callIds.has(m.toolCallId);
    const hasView = (m) => this.views.get(m.id)?.role === m.role;
    // Messages outside [from, upto) that have no bubble yet wait for a later frame: the
    // newest first; a version switched to and what follows it first (it stays where its
    // sibling was); a message searched for is drawn at once, with everything after it.
    let from = 0;
    let upto = order.length;
    const switched = this.switching ? order.findIndex((m) => m.id === this.switching.toId) : -1;
    if (switched >= 0) {
      from = switched;
      let budget = NEW_VIEWS_PER_FRAME;
      for (let i = from; i < order.length; i++) {
        if (inCall(order[i]) || hasView(order[i])) continue;
        if (budget-- === 0) { upto = i; break; }
      }
    } else if (this.target == null) {
      let budget = NEW_VIEWS_PER_FRAME;
      for (let i = order.length - 1; i >= 0; i--) {
        if (inCall(order[i]) || hasView(order[i])) continue;
        if (budget-- === 0) { from = i + 1; break; }
      }
    }
    // The context's marks go after the bubble each names (web/js/context-marks.js).
    const after = new Map();
    for (const mark of contextMarks(order, (m) => !inCall(m), state)) {
      after.set(mark.afterId, [...(after.get(mark.afterId) || []), this.marks.element(mark.kind, state)]);
    }
    // A research turn's progress strip goes after its question (views/research-progress.js).
    const strip = this.research.element(state);
    const asked = strip ? order.find((m) => m.id === state.research.userMessageId) : null;
    if (asked) after.set(asked.id, [...(after.get(asked.id) || []), strip]);
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
        view?.el.remove();
        view = new MessageView(m, this.msgActions);
        this.views.set(m.id, view);
      }
      view.update(m, { busy, lastAssistant: m === lastAssistant, toolResults, chatModel, ownModel, waiting, steer,
                       turnOver, plans, executions, lastUser, steps });
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
      if (!live.has(id)) { view.el.remove(); this.views.delete(id); }
    }
    for (const el of [this.marks.divider, this.marks.note, this.research.el]) if (!placed.has(el)) el.remove();
    if (this.backlog) schedule();
  }

  _renderPending(state) {
    const key = state.pending.map((p) => p.requestId).join();
    if (key === this.pendingKey) return;
    this.pendingKey = key;
    this.pending.replaceChildren(...state.pending.map((p) =>
      h("article", { class: "msg user pending-msg" }, h("div", { class: "msg-meta" }, "You · sending…"), h("div", { class: "msg-body plain" }, p.content))));
  }

  _renderApprovals(state) {
    // An answer the server refused (an `error` while the card is still up) makes the
    // card answerable again; a card is otherwise kept as it is (an edit in progress).
    if (state.notice !== this.approvalNotice) {
      this.approvalNotice = state.notice;
      if (state.notice?.kind === "error") for (const card of this.cards?.values() || []) card.unlock();
    }
    const key = state.approvals.map((a) => a.approval_id).join();
    if (key === this.approvalKey) return;
    this.approvalKey = key;
    const cards = new Map();
    for (const a of state.approvals) {
      cards.set(a.approval_id, this.cards?.get(a.approval_id)
        || approvalCard(a, (id, decision, reason, args) => this.session.approve(id, decision, reason, args)));
    }
    this.cards = cards;
    this.approvals.replaceChildren(...cards.values());
  }

  _renderQuestions(state) {
    // A refused answer (an `error` while the card is up) makes it answerable again, saying why.
    if (state.notice !== this.questionNotice) {
      this.questionNotice = state.notice;
      if (state.notice?.kind === "error") for (const card of this.questionCards?.values() || []) card.unlock(state.notice.message);
    }
    const key = state.questions.map((q) => q.question_id).join();
    if (key === this.questionKey) return;
    this.questionKey = key;
    const cards = new Map();
    let fresh = null;
    for (const q of state.questions) {
      let card = this.questionCards?.get(q.question_id);
      if (!card) {
        card = questionCard(q, (id, answers) => this.session.answer(id, answers), (id) => this.session.dismissQuestion(id));
        fresh ??= card;
      }
      cards.set(q.question_id, card);
    }
    this.questionCards = cards;
    this.questions.replaceChildren(...cards.values());
    // Keyboard first: a new question takes the focus, unless the person is writing something.
    const active = document.activeElement;
    const writing = active && /^(INPUT|TEXTAREA)$/.test(active.tagName) && active.value && !this.questions.contains(active);
    if (fresh && !writing && !document.querySelector("dialog[open]")) fresh.focusFirst();
  }

  _renderMeter(s) {
    const auto = app.settings?.compaction?.auto !== false;
    const inputs = [s.context, s.contextError, s.compacting, auto];
    if (this.meterIn && inputs.every((x, i) => x === this.meterIn[i])) return;
    this.meterIn = inputs;
    this.meter.update(s.context, { auto, compacting: s.compacting, error: s.contextError });
  }

  /** Retry after an error: answer again when nothing was written, else carry on from the text. */
  _retry() {
    const msgs = this.session.state.messages.filter((m) => m.status !== "queued");
    const last = msgs[msgs.length - 1];
    if (last?.role === "assistant" && !last.content) this.session.regenerate(last.id);
    else this.session.continueReply();
  }

  /** True when the newest reply shows this error itself (with Retry/Continue). */
  _replyShows(state, n) {
    const msgs = shownMessages(state).filter((m) => m.status !== "queued");
    const last = msgs.findLastIndex((m) => m.role === "assistant");
    return last >= 0 && last > msgs.findLastIndex((m) => m.role === "user") && errorText(msgs[last].error) === n.message;
  }

  _renderNotice(state, running) {
    const n = state.notice;
    // A failed turn's reply can arrive after its `error` (a turn that failed before the
    // model wrote anything gets its reply row at the end): whether the reply shows the
    // error is part of what was drawn, or the notice would stay as a second copy.
    const inReply = !!n && n.kind === "error" && this._replyShows(state, n);
    if (n === this.noticeShown && inReply === this.noticeInReply) {
      // The error comes before its turn's end: Retry shows once the turn has ended, the
      // alert itself left alone so it is not read out twice.
      if (this.retryBtn && this.retryBtn.hidden !== running) this.retryBtn.hidden = running;
      return;
    }
    this.noticeShown = n;
    this.noticeInReply = inReply;
    this.retryBtn = null;
    if (!n || n === this.dismissedNotice) { this.notice.replaceChildren(); return; }
    const dismiss = h("button", { type: "button", class: "ghost icon-btn", "aria-label": "Dismiss", onclick: () => { this.dismissedNotice = n; this.noticeShown = null; this.render(); } }, h("span", { class: "i i-close", "aria-hidden": "true" }));
    if (n.kind === "fallback") {
      this.notice.replaceChildren(h("div", { class: "notice info", role: "status" },
        h("span", {}, `${modelLabel(n.from_model_id)} did not answer, so ${modelLabel(n.to_model_id)} is answering instead.`,
          n.message ? h("span", { class: "hint" }, " " + n.message) : null), dismiss));
      return;
    }
    // The failed reply shows this error itself (with Retry/Continue): no second copy below it.
    if (inReply) {
      // Still said aloud once: the reply's own error line is not a live region.
      this.notice.replaceChildren(h("div", { class: "sr-only", role: "alert" }, errorText(n)));
      return;
    }
    if (!["cancelled", "bad_request", "queue_full", "busy"].includes(n.code)) {
      // A limit's sentence says "Continue" (a research that found nothing in its time): the button says the same.
      this.retryBtn = h("button", { type: "button", class: "ghost accent", hidden: running, onclick: () => this._retry() },
        n.code === "limit" ? "Continue" : "Retry");
    }
    this.notice.replaceChildren(h("div", { class: "notice error", role: "alert" },
      h("span", {}, errorText(n) || "Something went wrong."), this.retryBtn, dismiss));
  }
}
