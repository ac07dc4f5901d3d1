// The message box. Enter sends, Shift+Enter is a newline, Esc stops a running reply.
// While a reply runs, sending queues the message (the server keeps the order) and
// the waiting messages show as chips with ✕ to drop one; Ctrl/⌘+Enter sends it to
// steer the running reply instead (it joins at the reply's next step; chip "Steer").
// Files attach by the paperclip button, by dropping them on the chat or by pasting
// (images from the clipboard): each uploads at once and shows as a chip (a thumbnail
// for images, name and size otherwise) with its progress and ✕ to remove it.
// What the chat's model cannot do is said before sending: an image for a model without
// vision (with "Switch model"), a workspace for a model with tools off (with the setting).
// Under the box, the model picker chooses the chat's model and the mode switch its mode
// (Ask, Plan, Edit, Auto: CONTRACT §7; a native select, so keys and screen readers know it);
// the tools button (a saved chat's) opens the switches of the tools it offers (tools-popover.js),
// the Knowledge button the knowledge bases it searches (knowledge-picker.js);
// `/` at the start of the box lists the person's prompts and fills one in (prompts-menu.js);
// Image sends the text to be drawn (CONTRACT §13), held back until Settings → Images has a backend;
// the picker's "Compare models…" sends the next message to 2–4 models at once (a chip says which);
// ↑ in the empty box edits
// the last message sent. A document's selection or a preview's error (the documents panel,
// attachQuote) shows as a chip too and goes at the head of the next message, quoted
// (web/js/doc-quotes.js). What the box holds is counted for the context meter (draft()):
// `draftChanged` is told after each change, to read the count after a pause when typing
// and at once when files come or go. It is also the chat's draft (kept by the chat view with
// chat-draft.js): kept() is what is saved, restore() puts a kept one back.
import { h } from "../dom.js";
import { ModelPicker, rememberModel } from "./model-picker.js";
import { ToolsPopover } from "./tools-popover.js";
import { KnowledgePopover } from "./knowledge-picker.js";
import { PromptMenu } from "./prompts-menu.js";
import { fileUrl, formatSize, icon, isImage, stageAttachments, upload } from "../attachments.js";
import { MODES, modeInfo } from "../../js/plans.js";
import { anyModelSees, noModelSeesSentence } from "../../js/vision.js";
import { app, modelLabel } from "../store.js";
import { composeMessage } from "../../js/doc-quotes.js";
import { imageAction } from "../../js/images.js";
import { stageImage } from "../image-send.js";
import { Dictation } from "./dictation.js";

// A picture (Feather's "image", MIT), as the paperclip beside it is drawn.
const IMAGE_ICON = ["M5 3h14a2 2 0 0 1 2 2v14a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z",
  "M8.5 7a1.5 1.5 0 1 0 0 3a1.5 1.5 0 1 0 0-3z", "M21 15l-5-5L5 21"];

// Under the box while a reply runs.
const MOD = /Mac|iPhone|iPad/.test(globalThis.navigator?.platform || "") ? "⌘" : "Ctrl";
const STEER_HINT = `Enter: queue for after this reply · ${MOD}+Enter: send now, to steer it`;

// What a model can be given of a file, for the sentence shown when it cannot.
const READABLE = "images, text files (code, Markdown, CSV, JSON) and PDFs";
// The empty box's hint: with its keys where it fits on one line, else only its first words
// (at a 420 px window the long one took four lines). The keys stay in aria-keyshortcuts.
const HINT_LONG = "Message Numi…  (Enter to send, Shift+Enter for a new line)";
const HINT_SHORT = "Message Numi…";
const HINT_MARGIN_PX = 8; // room kept beside the long hint, so a rounding never wraps it

// The long hint's width in the box's font, measured once per font (fonts differ by platform).
const hintWidths = new Map();
function longHintWidth(input) {
  const font = getComputedStyle(input).font;
  if (!hintWidths.has(font)) {
    const ctx = document.createElement("canvas").getContext("2d");
    ctx.font = font;
    hintWidths.set(font, ctx.measureText(HINT_LONG).width);
  }
  return hintWidths.get(font);
}

export class Composer {
  /** @param hooks {{send(text): boolean, stop(), discard(messageId), model(): string|null, setModel(id), editLast(): boolean,
   *    switchModel(), draftChanged(typing: boolean), setMode(mode)}} */
  constructor(hooks) {
    this.hooks = hooks;
    this.input = h("textarea", {
      class: "composer-input", rows: 1, placeholder: HINT_LONG,
      "aria-label": "Message", spellcheck: true, "aria-keyshortcuts": "Enter Control+Enter Meta+Enter ArrowUp",
      oninput: () => { this._fit(); this.hooks.draftChanged?.(true); this.prompts.typed(); },
      onkeydown: (e) => this._key(e),
    });
    this.sendBtn = h("button", { type: "button", class: "primary send-btn", "aria-label": "Send message", onclick: () => this._send() }, "Send");
    // Research: the text is a question for a research turn (plan, search, read, cited report).
    this.researchBtn = h("button", { type: "button", class: "ghost research-btn", "aria-label": "Research: search the web and write a cited report",
      title: "Research: plan searches, read the best pages, write a report with citations", onclick: () => this._send({ research: true }) }, "Research");
    // Image: the text describes a picture to draw (an icon: the box keeps room for its one-line hint).
    // aria-disabled (not disabled) without a backend, so it stays in the Tab order and its tooltip,
    // said as its description, tells why.
    this.imageBtn = h("button", { type: "button", class: "ghost icon-btn image-btn", "aria-label": "Image: draw what the message describes",
      onclick: () => this._image() }, icon("image", IMAGE_ICON));
    this.stopBtn = h("button", { type: "button", class: "danger stop-btn", "aria-label": "Stop the reply (Esc)", hidden: true, onclick: () => this.hooks.stop() }, "Stop");
    // A list, so the label is read (a name on a plain div is ignored) with the count.
    this.queue = h("div", { class: "queue", role: "list", hidden: true, "aria-label": "Queued messages" });
    this.note = h("div", { class: "composer-note" });
    this.fileInput = h("input", { type: "file", multiple: true, hidden: true, class: "attach-input",
      "aria-hidden": "true", tabindex: "-1", onchange: () => this._pick() });
    this.attachBtn = h("button", { type: "button", class: "ghost icon-btn attach-btn", "aria-label": "Attach files",
      title: "Attach files (or drop them here, or paste an image)", onclick: () => this.fileInput.click() }, icon("clip"));
    this.attachList = h("div", { class: "attach-list", role: "list", "aria-label": "Attached files", hidden: true });
    this.quotes = []; // {kind, label, text} from the documents panel, sent at the head of the next message
    this.quoteList = h("div", { class: "quote-list", role: "list", "aria-label": "Attached from documents", hidden: true });
    this.attachError = h("div", { class: "attach-error", role: "alert" });
    this.capsWarning = h("div", { class: "caps-warning", role: "alert", hidden: true });
    this.prompts = new PromptMenu({ input: this.input, changed: () => { this._fit(); this.hooks.draftChanged?.(true); } });
    // Dictation (views/dictation.js): the transcript goes in at the cursor, or is sent at once.
    this.dictation = new Dictation({ insert: (text) => this.insertText(text), send: (text) => this._sendText(text),
      say: (text) => this._say(text), disabled: () => this.disabled });
    this.box = h("div", { class: "composer-box" }, this.attachBtn, this.input,
      h("div", { class: "composer-buttons" }, this.stopBtn, this.dictation.button, this.researchBtn, this.imageBtn, this.sendBtn));
    this.picker = new ModelPicker({ label: "Model for this chat", up: true, current: () => hooks.model(),
      onPick: (id) => { hooks.setModel(id); this.focus(); }, onCompare: (ids) => this.setCompare(ids) });
    // The models the next message is compared across (CONTRACT §10), picked in the picker: one send.
    this.compareIds = [];
    this.compareRow = h("div", { class: "compare-row", hidden: true });
    this.modeSelect = h("select", { class: "mode-select", "aria-label": "Mode", dataset: { mode: "ask" },
      onchange: () => { this._drawMode(this.modeSelect.value); this.hooks.setMode?.(this.modeSelect.value); } },
      ...MODES.map((m) => h("option", { value: m.value, title: m.hint }, m.label)));
    // The chat view is made for the session just opened (none for a new chat, not saved yet).
    this.session = app.session;
    this.tools = new ToolsPopover({ session: () => this.session, model: () => this.model, mode: () => this.mode });
    this.tools.el.hidden = !this.session;
    this.knowledge = new KnowledgePopover({ session: () => this.session });
    this.knowledge.el.hidden = !this.session;
    this.foot = h("div", { class: "composer-foot" }, this.picker.el, this.modeSelect, this.tools.el, this.knowledge.el, this.note);
    this.el = h("div", { class: "composer" }, this.queue, this.compareRow, this.quoteList, this.attachList, this.attachError,
      this.capsWarning, this.dictation.el,
      this.prompts.form, this.prompts.el, this.box,
      this.fileInput, this.foot);
    this.queueKey = "";
    this.attachments = []; // {key, file, name, size, state: uploading|ready|error, progress, stored, error, url, el}
    this.input.addEventListener("paste", (e) => this._paste(e));
    this._dropZone(this.el);
    // Dropping anywhere on the chat counts: the chat view puts this composer in its
    // section right after building it, so that section is hooked once it exists.
    queueMicrotask(() => { if (this.el.parentElement) this._dropZone(this.el.parentElement); });
    // The hint in the empty box wraps when the box narrows (200 % zoom, or Stop showing
    // beside Send), and a one-row box would cut its second line in half: fit the height
    // again whenever the width changes. Only on a change, so an idle page does nothing.
    if (typeof ResizeObserver === "function") {
      let width = 0;
      new ResizeObserver(([entry]) => {
        if (entry.contentRect.width === width) return;
        width = entry.contentRect.width;
        const hint = width >= longHintWidth(this.input) + HINT_MARGIN_PX ? HINT_LONG : HINT_SHORT;
        if (this.input.placeholder !== hint) this.input.placeholder = hint;
        this._fit();
      }).observe(this.input);
    }
  }

  _fit() {
    // Grow with the text up to a limit; one layout read per keystroke.
    this.input.style.height = "auto";
    this.input.style.height = Math.min(this.input.scrollHeight, window.innerHeight * 0.4) + "px";
  }

  _key(e) {
    if (this.prompts.key(e)) return;
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !e.altKey) {
      e.preventDefault();
      // Ctrl/⌘+Enter while a reply runs: steer it rather than wait for it to end.
      this._send({ steer: (e.ctrlKey || e.metaKey) && this.running });
    } else if (e.key === "ArrowUp" && !this.input.value && !this.attachments.length && !e.shiftKey && !e.altKey
      && !e.ctrlKey && !e.metaKey && !e.isComposing) {
      // As in other chat apps: ↑ in the empty box goes back to the last message, to fix it.
      if (this.hooks.editLast()) e.preventDefault();
    } else if (e.key === "Escape" && this.running) {
      e.preventDefault();
      this.hooks.stop();
    }
  }

  _send(opts = {}) {
    const text = composeMessage(this.quotes, this.input.value);
    const ready = this.attachments.filter((a) => a.state === "ready");
    if ((!text.trim() && !ready.length) || this.disabled) return;
    if (this.attachments.some((a) => a.state === "uploading")) {
      this._say("Wait a moment: the attached files are still uploading.");
      return;
    }
    // No model can see an image: the server would refuse it, so the draft stays and says why.
    const unseen = this._unseenImage();
    if (unseen) {
      this._say(noModelSeesSentence(unseen.name));
      return;
    }
    // A compare goes with a plain send: an image, research or steering is a turn of its own kind.
    if (this.compareIds.length && !opts.image && !opts.research && !opts.steer) opts = { ...opts, compare: this.compareIds };
    stageAttachments(text, ready.map((a) => a.stored));
    stageImage(text, !!opts.image);
    if (this.hooks.send(text, opts) !== false) {
      if (opts.compare) this.setCompare([]);
      rememberModel(this.hooks.model());
      this.input.value = "";
      this.prompts.close();
      this._fit();
      this._clearAttachments();
      this._setQuotes([]);
      this.hooks.draftChanged?.(false);
    } else {
      stageAttachments(text, []);
      stageImage(text, false);
    }
  }

  /** Put `text` in the box at the cursor (a dictated transcript), spaced from the words around it. */
  insertText(text) {
    const box = this.input;
    const { value } = box;
    const start = box.selectionStart ?? value.length;
    const end = box.selectionEnd ?? start;
    const before = start > 0 && !/\s$/.test(value.slice(0, start)) ? " " : "";
    const after = end < value.length && !/^\s/.test(value.slice(end)) ? " " : "";
    box.value = value.slice(0, start) + before + text + after + value.slice(end);
    const caret = start + before.length + text.length;
    box.focus({ preventScroll: true });
    box.setSelectionRange(caret, caret);
    this._fit();
    this.hooks.draftChanged?.(true);
  }

  /** A dictated transcript with send_dictation: it goes in at the cursor and the message is sent. */
  _sendText(text) {
    this.insertText(text);
    this._send();
  }

  /** Compare the next message across these models (2–4), or stop comparing ([]): a chip says which. */
  setCompare(ids) {
    this.compareIds = [...ids];
    this.compareRow.hidden = !ids.length;
    if (!ids.length) { this.compareRow.replaceChildren(); return; }
    const names = ids.map((id) => modelLabel(id)).join(" · ");
    this.compareRow.replaceChildren(h("span", { class: "chip compare-chip" }, `Compare: ${names}`),
      h("button", { type: "button", class: "ghost icon-btn compare-off", "aria-label": "Stop comparing: send to the chat's model",
        title: "Stop comparing", onclick: () => { this.setCompare([]); this.focus(); } }, "×"));
    this.focus();
  }

  /** The Image action: the text is drawn; without a backend, or words to draw, it says so instead. */
  _image() {
    if (this.disabled) return;
    const action = imageAction(app.settings);
    if (!action.enabled) { this._say(`${action.why}.`); return; }
    if (!composeMessage(this.quotes, this.input.value).trim()) {
      this._say("Describe the picture you want in the message box, then press Image.");
      this.focus();
      return;
    }
    this._say("");
    this._send({ image: true });
  }

  // --- attachments -------------------------------------------------------------------

  _pick() {
    this._addFiles([...this.fileInput.files]);
    this.fileInput.value = ""; // choosing the same file again must fire change again
    this.input.focus();
  }

  _paste(e) {
    const files = [...(e.clipboardData?.files || [])];
    if (!files.length) return;
    // A copied image often comes with HTML or a file path beside it: the file is what
    // the person meant. Text copied with a picture (a web page) still pastes as text.
    if (!e.clipboardData.getData("text/plain")) e.preventDefault();
    this._addFiles(files);
  }

  _dropZone(el) {
    const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes("Files");
    el.addEventListener("dragover", (e) => {
      if (!hasFiles(e) || this.disabled) return;
      e.preventDefault(); // allows the drop
      e.dataTransfer.dropEffect = "copy";
      this.box.classList.add("drop-target");
    });
    el.addEventListener("dragleave", (e) => {
      if (!el.contains(e.relatedTarget)) this.box.classList.remove("drop-target");
    });
    el.addEventListener("drop", (e) => {
      this.box.classList.remove("drop-target");
      if (!hasFiles(e) || this.disabled) return;
      e.preventDefault(); // the browser would otherwise open the file in place of the app
      e.stopPropagation(); // the composer's drop is the chat's drop: handled once
      this._addFiles([...e.dataTransfer.files]);
      this.input.focus();
    });
  }

  _addFiles(files) {
    if (this.disabled || !files.length) return;
    this._say("");
    for (const file of files) {
      const a = { key: `${Date.now()}-${Math.random()}`, file, name: file.name || "pasted-image.png", size: file.size,
        state: "uploading", progress: 0, stored: null, error: "", url: "" };
      // A thumbnail straight from the picked file (a blob: URL, allowed by the page's CSP).
      if (isImage(file.type)) a.url = URL.createObjectURL(file);
      this.attachments.push(a);
      const job = upload(file, (p) => {
        a.progress = p;
        // In place: redrawing the chip on every progress event would take focus off its ✕.
        const bar = a.el?.querySelector("progress");
        if (bar) bar.value = p;
        const size = a.el?.querySelector(".attach-size");
        if (size) size.textContent = `uploading ${Math.round(p * 100)} %`;
      });
      a.abort = job.abort;
      job.promise.then((stored) => {
        a.stored = stored;
        a.name = stored.name;
        a.size = stored.size;
        if (stored.kind === "binary") {
          a.state = "error";
          a.error = `${stored.name} cannot be sent: a model can only read ${READABLE}.`;
        } else {
          a.state = "ready";
          // The server decides what the bytes are; a "picture" that is not one gets no thumbnail.
          if (!isImage(stored.mime) && a.url) { URL.revokeObjectURL(a.url); a.url = ""; }
        }
        this._drawChip(a);
        if (a.state === "ready") this.hooks.draftChanged?.(false);
      }, (err) => {
        if (err.code === "aborted") return;
        a.state = "error";
        a.error = `${a.name} was not attached. ${err.message}`;
        this._drawChip(a);
      });
    }
    this._drawAttachments();
  }

  _remove(a) {
    a.abort?.();
    if (a.url) URL.revokeObjectURL(a.url);
    this.attachments = this.attachments.filter((x) => x !== a);
    this._drawAttachments();
    this._drawCaps();
    this.input.focus();
    if (a.state === "ready") this.hooks.draftChanged?.(false);
  }

  // --- quotes from the documents panel ---------------------------------------------------

  /** Attach `quote` ({kind, label, text}: web/js/doc-quotes.js) to the next message. */
  attachQuote(quote) {
    if (this.quotes.some((q) => q.text === quote.text)) { this.focus(); return; }
    this._setQuotes([...this.quotes, quote]);
    this.hooks.draftChanged?.(false);
    this.focus();
  }

  _setQuotes(quotes) {
    this.quotes = quotes;
    this.quoteList.hidden = !quotes.length;
    this.quoteList.replaceChildren(...quotes.map((q) => h("div", { class: `quote-chip ${q.kind}`, role: "listitem", title: q.text },
      h("span", { class: "quote-kind" }, q.kind === "error" ? "Error" : "Selection"),
      h("span", { class: "quote-label" }, q.label),
      h("button", { type: "button", class: "ghost icon-btn", "aria-label": `Remove ${q.label}`,
        onclick: () => { this._setQuotes(this.quotes.filter((x) => x !== q)); this.hooks.draftChanged?.(false); this.focus(); } },
      h("span", { class: "i i-close", "aria-hidden": "true" })))));
  }

  /** What the next message would be now: its text and the files attached and uploaded. */
  draft() {
    return { draft: composeMessage(this.quotes, this.input.value), file_ids: this.attachments.filter((a) => a.state === "ready").map((a) => a.stored.id) };
  }

  /** What a kept draft holds: the text and the stored files attached (uploaded). */
  kept() {
    return { text: this.input.value, files: this.attachments.filter((a) => a.state === "ready").map((a) => a.stored) };
  }

  /** Fill the box with a kept draft ({text, files: [stored file]}), as the person left it. */
  restore({ text = "", files = [] }) {
    this.input.value = text;
    this._fit();
    for (const stored of files) {
      // Already on the server: ready at once, the thumbnail served from there.
      this.attachments.push({ key: `kept-${stored.id}`, file: null, name: stored.name, size: stored.size, state: "ready",
        progress: 1, stored, error: "", url: isImage(stored.mime) ? fileUrl(stored.id) : "" });
    }
    this._drawAttachments();
    this._drawCaps();
  }

  _clearAttachments() {
    for (const a of this.attachments) if (a.url) URL.revokeObjectURL(a.url);
    this.attachments = [];
    this._say("");
    this._drawAttachments();
    this._drawCaps();
  }

  _say(text) {
    if (this.attachError.textContent !== text) this.attachError.textContent = text;
  }

  _drawAttachments() {
    this.attachList.hidden = !this.attachments.length;
    this.attachList.replaceChildren(...this.attachments.map((a) => {
      if (!a.el) this._drawChip(a);
      return a.el;
    }));
  }

  _drawChip(a) {
    const label = a.state === "uploading" ? `uploading ${Math.round(a.progress * 100)} %`
      : a.state === "error" ? "not attached" : formatSize(a.size);
    const el = h("div", { class: `attach-chip ${a.state}`, role: "listitem", dataset: { state: a.state }, title: a.error || a.name },
      a.url ? h("img", { class: "attach-thumb", src: a.url, alt: "" }) : icon("file"),
      h("span", { class: "attach-text" },
        h("span", { class: "attach-name" }, a.name),
        h("span", { class: "attach-size" }, label)),
      a.state === "uploading" ? h("progress", { class: "attach-progress", max: 1, value: a.progress, "aria-label": `Uploading ${a.name}` }) : null,
      h("button", { type: "button", class: "ghost icon-btn", "aria-label": `Remove ${a.name}`, onclick: () => this._remove(a) }, h("span", { class: "i i-close", "aria-hidden": "true" })));
    const hadFocus = a.el?.contains(document.activeElement);
    if (a.el?.isConnected) a.el.replaceWith(el);
    a.el = el;
    if (hadFocus) el.querySelector("button").focus();
    if (a.state === "error") this._say(a.error);
    this._drawCaps();
  }

  /** The chat's model's missing capabilities that matter for what is about to be sent. */
  _drawCaps() {
    const m = this.model;
    const label = m?.label || m?.api_model || "This model";
    const lines = [];
    const image = this.attachments.find((a) => a.state === "ready" && isImage(a.stored?.mime));
    const sees = anyModelSees(app.models);
    if (image && !sees) {
      // The dead end: no model to switch to, so the way out is turning vision on for one.
      lines.push(h("p", { class: "caps-line caps-vision" }, `${noModelSeesSentence(image.name)} `,
        h("a", { href: "#/settings/models" }, "Open Settings → Models")));
    } else if (m && !m.supports?.vision && image) {
      lines.push(h("p", { class: "caps-line caps-vision" },
        `${label} cannot see images, so ${image.name} would not reach it. `,
        h("button", { type: "button", class: "ghost accent", onclick: () => this.hooks.switchModel?.() }, "Switch model")));
    }
    if (m && !m.supports?.tools && this.workspace) {
      lines.push(h("p", { class: "caps-line caps-tools" },
        `${label} has tools off, so it cannot use this chat's workspace — `,
        h("a", { href: "#/settings/models", title: `Settings → Models → ${label} → Tools` }, "turn them on"), ".",
        m.note ? h("span", { class: "hint" }, ` ${m.note}`) : null));
    }
    const key = `${m?.id}|${m?.supports?.vision}|${m?.supports?.tools}|${m?.note}|${image?.key}|${!!this.workspace}|${sees}`;
    if (key === this.capsKey) return;
    this.capsKey = key;
    this.capsWarning.hidden = !lines.length;
    this.capsWarning.replaceChildren(...lines);
  }

  /** An attached image when no model of the catalog can see images, else null. */
  _unseenImage() {
    if (anyModelSees(app.models)) return null;
    return this.attachments.find((a) => a.state === "ready" && isImage(a.stored?.mime)) || null;
  }

  // The box is always on screen: nothing to scroll into view (that would need a layout).
  focus() { this.input.focus({ preventScroll: true }); }

  /** The switch shows `mode`, and says what it does in its tooltip. */
  _drawMode(mode) {
    const info = modeInfo(mode);
    if (this.modeSelect.value !== info.value) this.modeSelect.value = info.value;
    this.modeSelect.dataset.mode = info.value;
    this.modeSelect.title = `${info.label} mode: ${info.hint}`;
  }

  /** opts: {running, queue: [{message_id, preview, steer}], disabled, note, model, workspace, mode} */
  update({ running, queue, disabled, note, model, workspace, mode }) {
    this._drawMode(mode);
    this.mode = mode;
    this.model = model || null;
    this.workspace = workspace || "";
    this._drawCaps();
    if (this.tools.isOpen) this.tools.drawOnTop();
    this.knowledge.update();
    this.running = running;
    this.disabled = !!disabled;
    this.stopBtn.hidden = !running;
    this.sendBtn.textContent = running ? "Queue" : "Send";
    this.sendBtn.setAttribute("aria-label", running ? "Queue message (it is sent after the running reply)" : "Send message");
    this.sendBtn.disabled = this.disabled;
    this.researchBtn.disabled = this.disabled;
    const image = imageAction(app.settings);
    this.imageBtn.disabled = this.disabled;
    this.imageBtn.setAttribute("aria-disabled", String(!image.enabled));
    if (this.imageBtn.title !== image.why) this.imageBtn.title = image.why;
    this.input.disabled = this.disabled;
    this.attachBtn.disabled = this.disabled;
    if (this.disabled) this.dictation.cancel();
    this.dictation.button.disabled = this.disabled || this.dictation.state === "sending";
    this.modeSelect.disabled = this.disabled;
    // While a reply runs, say what the two ways of sending do (unless there is a note to give).
    const say = note || (running && !this.disabled ? STEER_HINT : "");
    if (this.note.textContent !== say) this.note.textContent = say;
    const key = (queue || []).map((q) => `${q.message_id}${q.steer ? "s" : ""}`).join(",");
    if (key !== this.queueKey) {
      this.queueKey = key;
      this.queue.hidden = !queue?.length;
      this.queue.replaceChildren(...(queue || []).map((q) => h("span", { class: `queue-chip${q.steer ? " steer" : ""}`, role: "listitem", dataset: { steer: q.steer ? "true" : "false" } },
        q.steer ? h("span", { class: "steer-mark", title: "Joins the running reply at its next step" }, "steer") : null,
        h("span", { class: "queue-text", title: q.preview }, (q.steer ? "" : "Queued: ") + q.preview),
        h("button", { type: "button", class: "ghost icon-btn", "aria-label": `Remove ${q.steer ? "steering" : "queued"} message: ${q.preview}`, onclick: () => this.hooks.discard(q.message_id) }, h("span", { class: "i i-close", "aria-hidden": "true" })))));
    }
  }
}
