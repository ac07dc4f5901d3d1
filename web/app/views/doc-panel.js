// The documents panel (CONTRACT §9, docs/UI.md "Documents"): a tab per document of the chat, the
// editor (views/doc-editor.js), its preview (doc-preview.js) and versions (doc-versions.js), and
// what is done with a document: copy, download, save to the workspace, ask about a selection.
//
// A document the model is writing streams into the editor as it comes (read-only meanwhile):
// the fold keeps the text (web/js/documents.js) and each frame appends what came since the last
// one, one editor transaction a frame. When the stream ends the document is read again (its
// versions, and the saved text: a failed call's text goes). The person's edits are saved after a
// pause, and at once with Ctrl/⌘+S, as a new version built on the version they started from
// (PATCH with base_version); when another version came first (409) the panel offers "Reload
// theirs" (drop the edits, show the newest) or "Keep both" (save the edits as the newest version
// on top of it: the other stays among the versions).
import { h, copyText } from "../dom.js";
import { get, patch, post } from "../api.js";
import { toast } from "./toast.js";
import { DocEditor } from "./doc-editor.js";
import { DocPreview } from "./doc-preview.js";
import { DocVersions } from "./doc-versions.js";
import { errorQuote, fileName, previewable, selectionQuote } from "../../js/doc-quotes.js";

const SAVE_PAUSE_MS = 1200;
const APPEND_MS = 100;
// A save sent as the window closes rides `keepalive`, whose bodies the browser caps at 64 KB.
const KEEPALIVE_MAX = 60_000;
const path = (id) => `/api/documents/${encodeURIComponent(id)}`;

export class DocPanel {
  /** @param hooks {{attach(quote), close(), changed(), reread()}} */
  constructor(session, hooks) {
    this.session = session;
    this.hooks = hooks;
    this.docs = new Map(); // id → what the panel knows of it (_ds)
    this.activeId = null;
    this.mode = "text";
    this.tabs = [];
    this.workspace = "";
    this.tabList = h("div", { class: "doc-tabs", role: "tablist", "aria-label": "Documents of this chat" });
    this.viewButtons = Object.fromEntries(["text", "preview", "versions"].map((m) => [m,
      h("button", { type: "button", class: "ghost doc-view-btn", "aria-pressed": "false", onclick: () => this.setMode(m) },
        { text: "Text", preview: "Preview", versions: "Versions" }[m])]));
    this.status = h("span", { class: "doc-status", role: "status" });
    this.askBtn = h("button", { type: "button", class: "ghost doc-ask", title: "Attach the selected lines to your next message",
      onclick: () => this.askSelection() }, "Ask about selection");
    this.copyBtn = h("button", { type: "button", class: "ghost doc-copy", onclick: () => this.copy() }, "Copy");
    this.downloadBtn = h("button", { type: "button", class: "ghost doc-download", onclick: () => this.download() }, "Download");
    this.saveWsBtn = h("button", { type: "button", class: "ghost doc-save-ws", hidden: true, onclick: () => this.openSaveForm() },
      "Save to workspace");
    this.conflict = h("div", { class: "doc-conflict", role: "alert", hidden: true });
    this.saveForm = h("form", { class: "doc-save-form", hidden: true, onsubmit: (e) => { e.preventDefault(); this.saveToWorkspace(false); } });
    this.editorHost = h("div", { class: "doc-editor", role: "tabpanel" },
      h("p", { class: "hint doc-loading" }, "Loading the editor…"));
    this.preview = new DocPreview({ ask: (doc, err) => this.hooks.attach(errorQuote(doc, err)) });
    this.versions = new DocVersions();
    this.body = h("div", { class: "doc-body" }, this.editorHost, this.preview.el, this.versions.el);
    this.el = h("div", { class: "doc-panel", id: "doc-panel" },
      h("div", { class: "doc-bar" }, this.tabList,
        h("button", { type: "button", class: "ghost icon-btn doc-close", "aria-label": "Close the documents panel",
          onclick: () => this.hooks.close() }, h("span", { class: "i i-close", "aria-hidden": "true" }))),
      h("div", { class: "doc-tools" },
        h("div", { class: "doc-views", role: "group", "aria-label": "Show" }, ...Object.values(this.viewButtons)),
        this.status, h("span", { class: "spacer" }), this.askBtn, this.copyBtn, this.downloadBtn, this.saveWsBtn),
      this.conflict, this.saveForm, this.body);
    // The window closing within the pause: unsaved edits go now, if they fit a keepalive request.
    this.onHide = () => this._saveOnHide();
    addEventListener("pagehide", this.onHide);
    DocEditor.create(this.editorHost, {
      changed: () => this._edited(), save: () => this.save(this.active), selected: () => {},
    }).then((editor) => {
      this.editor = editor;
      this.editorHost.querySelector(".doc-loading")?.remove();
      this.hooks.changed();
    }, (err) => {
      this.editorHost.replaceChildren(h("p", { class: "doc-error" },
        `The editor could not be loaded. Reload the window to try again. (${err.message})`));
    });
  }

  get active() {
    return this.docs.get(this.activeId) || null;
  }

  /** What the panel keeps of document `tab.id`, made on first sight. */
  _ds(tab) {
    let ds = this.docs.get(tab.id);
    if (!ds) {
      ds = { id: tab.id, title: tab.title, language: tab.language, extension: tab.extension, content: null, base: null,
             latest: null, versions: [], loaded: false, loading: false, loadAgain: false, dirty: false, edits: 0,
             saving: false, saveAgain: false, timer: 0, conflict: null, error: "", streamCall: null, shownCall: null,
             shownLen: 0, appendedAt: -Infinity };
      this.docs.set(tab.id, ds);
    }
    if (tab.title) ds.title = tab.title;
    if (tab.extension) ds.extension = tab.extension;
    if (tab.language && tab.language !== ds.language) {
      ds.language = tab.language;
      this.editor?.setLanguage(tab.language, tab.id);
    }
    return ds;
  }

  /** Show document `id` (null: keep the one shown, else the newest). */
  select(id) {
    if (id && id !== this.activeId) {
      this.activeId = id;
      this.saveFormFor = null;
    }
    this.hooks.changed();
  }

  setMode(mode) {
    this.mode = mode;
    this.hooks.changed();
  }

  /** Each frame the chat view draws: `tabs` from documentTabs, `documents` the fold's. */
  render(tabs, documents, { workspace }) {
    this.tabs = tabs;
    this.workspace = workspace;
    for (const tab of tabs) this._ds(tab);
    for (const id of this.docs.keys()) if (!tabs.some((t) => t.id === id)) this._forget(id);
    if (!tabs.some((t) => t.id === this.activeId)) {
      // The shown document has no tab any more (a create that failed): the newest one instead.
      this.activeId = tabs.length ? tabs[tabs.length - 1].id : null;
    }
    this._drawTabs();
    const ds = this.active;
    if (this.editor && ds) {
      this.editor.show(ds.id, ds.content ?? "", ds.language, !ds.loaded || !!ds.streamCall);
      for (const tab of tabs) this._follow(tab, this.docs.get(tab.id), tab.id === ds.id);
      if (!ds.loaded && !ds.loading && !ds.streamCall && !ds.gone) this._load(ds);
    }
    this._drawTools();
    this._drawView();
  }

  /** A document streaming, ended, or changed elsewhere: what the editor must do about it. */
  _follow(tab, ds, active) {
    const doc = tab.doc;
    const call = doc?.callId || null;
    if (call) {
      if (ds.streamCall !== call) {
        ds.streamCall = call;
        // The model's text takes the editor's place: the person's edits are saved first.
        if (ds.dirty) this.save(ds);
        this.editor.setReadOnly(true, ds.id);
      }
      if (!active) return;
      const text = doc.text || "";
      if (ds.shownCall !== call) {
        ds.shownCall = call;
        ds.shownLen = text.length;
        this.editor.setText(text);
      } else if (text.length > ds.shownLen) {
        // At most one append per APPEND_MS: each costs the editor a parse, a measure and a repaint
        // whatever its size, and ten a second read as a continuous stream.
        const wait = ds.appendedAt + APPEND_MS - performance.now();
        if (wait > 0) {
          if (!this.appendTimer) this.appendTimer = setTimeout(() => { this.appendTimer = 0; this.hooks.changed(); }, wait);
          return;
        }
        ds.appendedAt = performance.now();
        this.editor.append(text.slice(ds.shownLen));
        ds.shownLen = text.length;
      } else if (text.length < ds.shownLen) {
        ds.shownLen = text.length;
        this.editor.setText(text);
      }
      return;
    }
    if (ds.streamCall) {
      // The stream is over: its version (or, failed, the saved text) is read.
      ds.streamCall = ds.shownCall = null;
      ds.shownLen = 0;
      ds.loaded = false;
      this._load(ds);
      return;
    }
    const behind = doc && doc.version != null && ds.base != null && doc.version > ds.base;
    if (behind && !ds.dirty && !ds.saving && !ds.conflict && !ds.gone) this._load(ds);
  }

  /** Read document `ds` (its latest version, its versions); the editor gets the text unless the person is editing it. */
  async _load(ds) {
    if (ds.loading) { ds.loadAgain = true; return; }
    ds.loading = true;
    try {
      do {
        ds.loadAgain = false;
        let doc;
        try {
          doc = await get(path(ds.id));
        } catch (err) {
          if (err.status === 404) { this._gone(ds); return; }
          ds.error = `This document could not be read. ${err.message}`;
          return;
        }
        if (this.docs.get(ds.id) !== ds) return;
        Object.assign(ds, { title: doc.title, extension: doc.extension, versions: doc.versions, latest: doc.latest_version,
                            error: "" });
        if (doc.language !== ds.language) { ds.language = doc.language; this.editor?.setLanguage(doc.language, ds.id); }
        if (!ds.dirty && !ds.streamCall) {
          ds.content = doc.content;
          ds.base = doc.version;
          this.editor?.setText(doc.content, ds.id);
          this.editor?.setReadOnly(false, ds.id);
          ds.loaded = true;
        }
      } while (ds.loadAgain);
    } finally {
      ds.loading = false;
      this.hooks.changed();
    }
  }

  /** The document is not there (a create that failed): its tab goes once the list is read again. */
  _gone(ds) {
    ds.gone = true;
    ds.error = "This document is no longer there.";
    this.hooks.reread();
  }

  _forget(id) {
    const ds = this.docs.get(id);
    if (!ds || ds.loading || ds.saving) return;
    clearTimeout(ds.timer);
    this.docs.delete(id);
    this.editor?.drop(id);
  }

  /** The person changed the shown document: saved after a pause. */
  _edited() {
    const ds = this.active;
    if (!ds || ds.streamCall || !ds.loaded) return;
    ds.dirty = true;
    ds.edits += 1;
    clearTimeout(ds.timer);
    if (!ds.conflict) ds.timer = setTimeout(() => this.save(ds), SAVE_PAUSE_MS);
    this._drawTools();
  }

  /**
   * Save the person's text of `ds` as a new version built on `base` (its version by default).
   * One save at a time; one asked for meanwhile follows it.
   */
  async save(ds, base = ds?.base) {
    if (!ds || !ds.loaded || !this.editor) return;
    clearTimeout(ds.timer);
    if (ds.saving) { ds.saveAgain = true; return; }
    if (!ds.dirty) return;
    const text = this.editor.textOf(ds.id);
    if (text == null) return;
    const edits = ds.edits;
    ds.saving = true;
    ds.error = "";
    this._drawTools();
    try {
      const doc = await patch(path(ds.id), { content: text, base_version: base });
      Object.assign(ds, { base: doc.version, latest: doc.latest_version, versions: doc.versions, content: text, conflict: null });
      if (ds.edits === edits) ds.dirty = false;
    } catch (err) {
      if (err.status === 409 && err.code === "conflict") ds.conflict = { latest: err.latestVersion, message: err.message };
      else ds.error = `Not saved: ${err.message}`;
    } finally {
      ds.saving = false;
      const again = ds.saveAgain || (ds.dirty && ds.edits !== edits);
      ds.saveAgain = false;
      if (again && ds.dirty && !ds.conflict && !ds.error) ds.timer = setTimeout(() => this.save(ds), SAVE_PAUSE_MS);
      this.hooks.changed();
    }
  }

  /** Unsaved edits of every document are saved now (the panel closes, the chat is left). */
  flush() {
    for (const ds of this.docs.values()) if (ds.dirty && !ds.conflict && !ds.streamCall) this.save(ds);
  }

  _saveOnHide() {
    for (const ds of this.docs.values()) {
      if (!ds.dirty || ds.saving || ds.conflict || ds.streamCall || !ds.loaded) continue;
      const body = JSON.stringify({ content: this._textOf(ds), base_version: ds.base });
      if (body.length > KEEPALIVE_MAX) continue;
      fetch(path(ds.id), { method: "PATCH", keepalive: true, credentials: "same-origin",
                           headers: { "Content-Type": "application/json" }, body }).catch(() => {});
    }
  }

  /** "Reload theirs": the person's edits go; the newest version is shown. */
  reloadTheirs(ds) {
    ds.dirty = false;
    ds.conflict = null;
    ds.error = "";
    this._load(ds);
  }

  /** "Keep both": the person's text becomes the newest version, on top of the one that came first. */
  keepBoth(ds) {
    const latest = ds.conflict?.latest;
    ds.conflict = null;
    this.save(ds, latest ?? ds.base);
  }

  _textOf(ds) {
    return this.editor?.textOf(ds.id) ?? ds.content ?? "";
  }

  async copy() {
    const ds = this.active;
    if (!ds) return;
    toast(await copyText(this._textOf(ds)) ? `Copied ${ds.title}.` : "The text could not be copied.");
  }

  download() {
    const ds = this.active;
    if (!ds) return;
    const url = URL.createObjectURL(new Blob([this._textOf(ds)], { type: "text/plain;charset=utf-8" }));
    const a = h("a", { href: url, download: fileName(ds.title, ds.extension), hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }

  /** "Ask about selection": the selected lines go with the next message, quoted. */
  askSelection() {
    const ds = this.active;
    const sel = ds && this.editor?.selection();
    if (!sel) { toast("Select part of the document first, then ask about it."); return; }
    this.hooks.attach(selectionQuote({ id: ds.id, title: ds.title, language: ds.language, version: ds.dirty ? null : ds.base },
      sel.fromLine, sel.toLine, sel.text));
  }

  // --- save to the workspace --------------------------------------------------------

  openSaveForm() {
    const ds = this.active;
    if (!ds) return;
    this.saveFormFor = { id: ds.id, path: fileName(ds.title, ds.extension), exists: false, error: "" };
    this._drawSaveForm(true);
  }

  async saveToWorkspace(overwrite) {
    const form = this.saveFormFor;
    const ds = form && this.docs.get(form.id);
    if (!ds) return;
    form.path = this.saveForm.querySelector("input").value;
    try {
      const res = await post(`/api/chats/${encodeURIComponent(this.session.chatId)}/workspace/files`,
        { path: form.path, content: this._textOf(ds), ...(overwrite ? { overwrite: true } : {}) });
      this.saveFormFor = null;
      this._drawSaveForm();
      toast(`Saved ${res.path} in the workspace.`);
    } catch (err) {
      form.exists = err.code === "exists";
      form.error = err.message;
      this._drawSaveForm(true);
    }
  }

  _drawSaveForm(focus = false) {
    const form = this.saveFormFor;
    const shown = !!form && form.id === this.activeId && !!this.workspace;
    // Drawn again only when it changed: a frame of a stream elsewhere must not take the caret out of its box.
    if (!focus && shown === !this.saveForm.hidden && this.saveFormDrawn === form) return;
    this.saveFormDrawn = form;
    this.saveForm.hidden = !shown;
    if (!shown) { this.saveForm.replaceChildren(); return; }
    const input = h("input", { type: "text", value: form.path, "aria-label": "File name in the workspace", spellcheck: false,
      oninput: () => { form.path = input.value; form.exists = false; } });
    this.saveForm.replaceChildren(
      h("label", {}, "Save in the workspace as ", input),
      form.exists
        ? h("button", { type: "button", class: "danger", onclick: () => this.saveToWorkspace(true) }, "Replace it")
        : h("button", { type: "submit", class: "primary" }, "Save"),
      h("button", { type: "button", class: "ghost", onclick: () => { this.saveFormFor = null; this._drawSaveForm(); } }, "Cancel"),
      form.error ? h("p", { class: "doc-error", role: "alert" }, form.error) : null);
    if (focus) input.focus();
  }

  // --- drawing ------------------------------------------------------------------------

  _drawTabs() {
    const key = this.tabs.map((t) => `${t.id}\u0000${t.title}\u0000${t.streaming}`).join("\u0001") + this.activeId;
    if (key === this.tabKey) return;
    this.tabKey = key;
    this.tabList.replaceChildren(...this.tabs.map((t) => h("button", {
      type: "button", role: "tab", class: "doc-tab", "aria-selected": String(t.id === this.activeId),
      "aria-controls": "doc-panel", title: `${t.title} (${t.language})`, dataset: { docId: t.id, streaming: String(t.streaming) },
      onclick: () => this.select(t.id),
    }, t.title, t.streaming ? h("span", { class: "doc-writing", "aria-label": " — being written" }) : null)));
  }

  _drawTools() {
    const ds = this.active;
    const none = !ds;
    for (const b of [this.askBtn, this.copyBtn, this.downloadBtn, this.saveWsBtn]) b.disabled = none || !!ds?.streamCall;
    this.saveWsBtn.hidden = !this.workspace;
    const canPreview = !!ds && previewable(ds.language);
    this.viewButtons.preview.hidden = !canPreview;
    if (this.mode === "preview" && !canPreview) this.mode = "text";
    for (const [m, b] of Object.entries(this.viewButtons)) b.setAttribute("aria-pressed", String(m === this.mode));
    const say = !ds ? "No documents yet." : ds.streamCall ? "The model is writing…" : !ds.loaded ? "Loading…"
      : ds.saving ? "Saving…" : ds.error ? ds.error : ds.dirty ? "Unsaved changes"
        : `Version ${ds.base}${ds.latest > ds.base ? ` (version ${ds.latest} is the newest)` : ""} · saved`;
    if (this.status.textContent !== say) this.status.textContent = say;
    this.status.classList.toggle("doc-error", !!ds?.error);
    this._drawConflict(ds);
    this._drawSaveForm();
  }

  _drawConflict(ds) {
    const c = ds?.conflict;
    const key = c ? `${ds.id}:${c.latest}` : "";
    if (key === this.conflictKey) return;
    this.conflictKey = key;
    this.conflict.hidden = !c;
    if (!c) { this.conflict.replaceChildren(); return; }
    this.conflict.replaceChildren(
      h("p", {}, `${ds.title} changed while you edited it: version ${c.latest} is the newest. Your edits are not saved yet.`),
      h("button", { type: "button", class: "ghost", onclick: () => this.reloadTheirs(ds) }, "Reload theirs"),
      h("button", { type: "button", class: "primary", onclick: () => this.keepBoth(ds) }, "Keep both"));
  }

  _drawView() {
    const ds = this.active;
    this.editorHost.hidden = this.mode !== "text";
    this.preview.el.hidden = this.mode !== "preview";
    this.versions.el.hidden = this.mode !== "versions";
    if (!ds) return;
    if (this.mode === "preview" && ds.loaded) this.preview.show(ds.id, ds.base, ds.title);
    if (this.mode === "versions") this.versions.show(ds.id, ds.versions);
  }

  close() {
    clearTimeout(this.appendTimer);
    removeEventListener("pagehide", this.onHide);
    this.preview.close();
    for (const ds of this.docs.values()) clearTimeout(ds.timer);
    this.editor?.destroy();
  }
}
