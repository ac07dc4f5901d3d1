// Where the chat's documents go (CONTRACT §9): the header's "Documents" button with their count,
// and the dock beside the conversation that holds the panel (views/doc-panel.js, loaded with
// import() the first time it opens, CodeMirror with it: a chat's first paint loads neither).
//
// The list is read after the chat's first paint (GET /api/chats/{id}/documents) and again when
// the events say a document was added or changed; a call that starts writing a document
// (`doc_open`, web/js/documents.js) opens the panel on it, once: whether the panel is open, and
// the calls it opened for, are kept for the chat in this tab (sessionStorage), so a reload shows
// it as it was and a turn's events sent again do not open what the person closed. The dock's
// width is dragged by its edge (or moved with the arrow keys on it) and remembered in this
// browser; under 900 px the panel is a full-screen sheet (documents.css). The ChatView calls
// render() each frame it draws.
import { h } from "../dom.js";
import { get } from "../api.js";
import { afterPaint, schedule } from "../store.js";
import { toast } from "./toast.js";
import { Inputs } from "../../js/view-inputs.js";
import { documentTabs } from "../../js/documents.js";
import { documentsLabel } from "../../js/doc-quotes.js";

const WIDTH_KEY = "numi.docPanelWidth";
const MIN_WIDTH = 320;
const KEY_STEP = 32; // px an arrow key moves the edge
const CALLS_KEPT = 50;
const NARROW_PX = 900; // documents.css: under this the panel is a full-screen sheet

/** What this tab keeps of a chat's panel: {open, calls: [the call ids it opened for]}. */
function kept(chatId) {
  try {
    const v = JSON.parse(sessionStorage.getItem(`numi.docs.${chatId}`) || "null");
    return { open: v?.open === true, calls: Array.isArray(v?.calls) ? v.calls.filter((c) => typeof c === "string") : [] };
  } catch { return { open: false, calls: [] }; }
}

function storedWidth() {
  try {
    const n = Number(localStorage.getItem(WIDTH_KEY));
    return Number.isFinite(n) && n >= MIN_WIDTH ? n : 0;
  } catch { return 0; }
}

export class DocDock {
  /**
   * @param session the chat's ChatSession
   * @param hooks {{attach(quote)}}: a selection or an error quoted, for the composer
   */
  constructor(session, hooks) {
    this.session = session;
    this.hooks = hooks;
    this.listed = null;     // GET …/documents items, oldest first (null until read)
    const was = kept(session.chatId);
    this.seenCalls = new Set(was.calls);
    this.reopen = was.open; // open again once the chat is drawn
    this.rev = 0;           // bumped when the panel must draw again without a state change
    this.isOpen = false;
    this.count = h("span", { class: "doc-count" });
    this.button = h("button", { type: "button", class: "ghost doc-toggle", hidden: true, "aria-expanded": "false",
      "aria-controls": "doc-panel", onclick: () => (this.isOpen ? this.close() : this.open()) },
      h("span", { class: "i i-file", "aria-hidden": "true" }), " Documents ", this.count);
    this.handle = h("div", { class: "doc-handle", role: "separator", tabindex: "0", "aria-orientation": "vertical",
      "aria-label": "Resize the documents panel (its width in pixels)", "aria-valuemin": String(MIN_WIDTH), onpointerdown: (e) => this._drag(e), onkeydown: (e) => this._key(e) });
    this.body = h("div", { class: "doc-dock-body" });
    this.el = h("aside", { class: "doc-dock", hidden: true, "aria-label": "Documents", onkeydown: (e) => {
      // The narrow window's sheet closes with Esc, unless the editor took the key (its search, a selection).
      if (e.key === "Escape" && !e.defaultPrevented && matchMedia(`(max-width: ${NARROW_PX}px)`).matches) this.close();
    } }, this.handle, this.body);
    this.inputs = new Inputs({
      documents: ({ state }) => state.documents,
      rev: () => this.rev,
      workspace: ({ s }) => s.chat?.workspace || "",
    });
  }

  /** The dock goes in `section` (the chat view's), which lays the two side by side while it is open. */
  mount(section) {
    this.section = section;
    section.append(this.el);
  }

  /** Draw again on the next frame: something the state does not hold changed (a read, a save). */
  changed() {
    this.rev += 1;
    schedule();
  }

  render(source) {
    const inp = this.inputs.read(source);
    if (!inp) return;
    if (this.listed === null && !this.listing) this._readSoon();
    let opened = null;
    for (const d of inp.documents) {
      if (d.openedBy && !this.seenCalls.has(d.openedBy)) { this.seenCalls.add(d.openedBy); opened = d.id; }
    }
    if (this.reopen) {
      this.reopen = false;
      if (!opened) this.open();
    }
    // A document added or changed, or a stream over: the list says its title, size, version.
    const key = inp.documents.map((d) => `${d.id}:${d.version}:${d.callId || ""}`).join("|");
    if (key !== this.key) {
      const first = this.key === undefined;
      this.key = key;
      if (!first && (this.listed !== null || this.reading)) this.read();
    }
    this.tabs = documentTabs(this.listed || [], inp.documents);
    const n = this.tabs.length;
    const label = `${n}|${this.isOpen}`;
    if (label !== this.label) {
      this.label = label;
      this.button.hidden = n === 0 && !this.isOpen;
      this.count.textContent = String(n);
      this.button.setAttribute("aria-label", `${documentsLabel(n)} — ${this.isOpen ? "hide" : "show"} the documents panel`);
    }
    if (opened) this.open(opened);
    this.panel?.render(this.tabs, inp.documents, { workspace: inp.workspace });
  }

  /** Read the list once the chat has painted. */
  _readSoon() {
    this.listing = afterPaint().then(() => this.read());
  }

  /** Read the chat's documents (one read at a time; a change meanwhile reads again after it). */
  async read() {
    if (this.reading) { this.readAgain = true; return this.reading; }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        try {
          const { items } = await get(`/api/chats/${encodeURIComponent(this.session.chatId)}/documents`);
          if (this.session.closed) return;
          this.listed = items;
        } catch (err) {
          if (this.listed === null) this.listed = [];
          if (err.status !== 404) toast(`The chat's documents could not be read. ${err.message}`);
          return;
        }
      } while (this.readAgain);
    })();
    try { await this.reading; } finally { this.reading = null; this.changed(); }
  }

  /** Keep the panel's state for the chat in this tab (see the module's note). */
  _keep() {
    try {
      sessionStorage.setItem(`numi.docs.${this.session.chatId}`,
        JSON.stringify({ open: this.isOpen, calls: [...this.seenCalls].slice(-CALLS_KEPT) }));
    } catch { /* kept for this page only */ }
  }

  /** Open the panel (on document `docId`, else the one shown last, else the newest). */
  async open(docId = null) {
    this.isOpen = true;
    this._keep();
    this.button.setAttribute("aria-expanded", "true");
    this.section?.classList.add("has-docs");
    this.el.hidden = false;
    const width = storedWidth();
    if (width) {
      this.section?.style.setProperty("--doc-w", `${width}px`);
      this.handle.setAttribute("aria-valuenow", String(width));
    }
    this.changed();
    if (!this.panel) {
      this.panelLoad ??= import("./doc-panel.js").then(({ DocPanel }) => {
        this.panel = new DocPanel(this.session, {
          attach: (q) => this.hooks.attach(q), close: () => this.close(), changed: () => this.changed(),
          reread: () => this.read(),
        });
        this.body.append(this.panel.el);
      }).catch((err) => {
        this.panelLoad = null;
        toast(`The documents panel could not be loaded. Reload the window to try again. (${err.message})`, { ms: 8000 });
        this.close();
      });
      await this.panelLoad;
    }
    if (this.panel && this.isOpen) this.panel.select(docId);
  }

  close() {
    if (!this.isOpen) return;
    this.isOpen = false;
    this._keep();
    this.panel?.flush();
    const inside = this.el.contains(document.activeElement);
    this.el.hidden = true;
    this.section?.classList.remove("has-docs");
    this.button.setAttribute("aria-expanded", "false");
    if (inside) this.button.focus();
    this.changed();
  }

  /** The chat view is replaced: the person's unsaved edits are saved now. */
  leave() {
    this.panel?.flush();
    this.panel?.close();
  }

  _setWidth(px) {
    // The thread keeps its 24rem (documents.css), whatever is dragged.
    const max = Math.max(MIN_WIDTH, (this.section?.clientWidth || innerWidth) - 24 * 16);
    const width = Math.round(Math.min(max, Math.max(MIN_WIDTH, px)));
    this.section?.style.setProperty("--doc-w", `${width}px`);
    this.handle.setAttribute("aria-valuenow", String(width));
    try { localStorage.setItem(WIDTH_KEY, String(width)); } catch { /* kept for this page only */ }
  }

  _drag(e) {
    if (e.button !== 0) return;
    e.preventDefault();
    const right = this.el.getBoundingClientRect().right;
    this.handle.setPointerCapture(e.pointerId);
    const move = (m) => this._setWidth(right - m.clientX);
    const up = () => {
      this.handle.removeEventListener("pointermove", move);
      this.handle.removeEventListener("pointerup", up);
      this.handle.removeEventListener("pointercancel", up);
    };
    this.handle.addEventListener("pointermove", move);
    this.handle.addEventListener("pointerup", up);
    this.handle.addEventListener("pointercancel", up);
  }

  _key(e) {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    e.preventDefault();
    const now = this.el.getBoundingClientRect().width;
    this._setWidth(now + (e.key === "ArrowLeft" ? KEY_STEP : -KEY_STEP));
  }
}
