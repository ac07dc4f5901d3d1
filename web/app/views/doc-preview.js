// A document's preview (CONTRACT §9, docs/PROTOCOL.md "Document previews"): the address
// GET /api/documents/{id}/preview?version=N gives, in an <iframe sandbox="allow-scripts"> —
// never allow-same-origin (with scripts the page could lift its own sandbox), popups, forms,
// modals or top navigation. A new version is a new address, asked for a moment after the last
// change (a stream's versions come close together). The page's uncaught errors arrive as
// `numi-preview-error` messages; one is taken only from the frame shown (`event.source`: its
// origin is "null" whatever sent it) and is as untrusted as the document: shown as text, and
// "Ask the model to fix this" attaches it to the next message as data.
import { h } from "../dom.js";
import { get } from "../api.js";
import { previewError } from "../../js/doc-quotes.js";

const REFRESH_MS = 250;
const ERRORS_KEPT = 20;

export class DocPreview {
  /** @param hooks {{ask(error)}}: attach an error to the next message */
  constructor(hooks) {
    this.hooks = hooks;
    this.want = null;   // {id, version, title} to show
    this.shown = null;  // what the frame shows
    this.errors = [];
    this.frame = null;
    this.host = h("div", { class: "doc-preview-frame" });
    this.note = h("p", { class: "doc-preview-note hint", hidden: true });
    this.list = h("ul", { class: "doc-preview-errors", "aria-label": "Errors in the preview", hidden: true });
    this.el = h("div", { class: "doc-preview" }, this.note, this.host, this.list);
    this.onMessage = (e) => this._message(e);
    addEventListener("message", this.onMessage);
  }

  /** Show version `version` of document `id` (its latest known when null): asked after a short pause. */
  show(id, version, title) {
    const want = { id, version, title };
    if (this.want && this.want.id === id && this.want.version === version) return;
    this.want = want;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this._load(want), this.shown ? REFRESH_MS : 0);
  }

  async _load(want) {
    const q = want.version ? `?version=${want.version}` : "";
    let url;
    try {
      ({ url } = await get(`/api/documents/${encodeURIComponent(want.id)}/preview${q}`));
    } catch (err) {
      if (this.want !== want) return;
      this._say(err.message);
      return;
    }
    if (this.want !== want) return;
    this._say("");
    this.errors = [];
    this._drawErrors();
    // A new frame for each address: the old page's messages can no longer pass as the new one's.
    const frame = h("iframe", { class: "doc-preview-iframe", sandbox: "allow-scripts", referrerpolicy: "no-referrer",
      title: `Preview of ${want.title || "the document"}${want.version ? `, version ${want.version}` : ""}`, src: url });
    this.frame = frame;
    this.host.replaceChildren(frame);
    this.shown = want;
  }

  _say(text) {
    this.note.hidden = !text;
    this.note.textContent = text;
  }

  _message(e) {
    if (!this.frame || e.source !== this.frame.contentWindow) return;
    const error = previewError(e.data);
    if (!error) return;
    this.errors = [...this.errors, error].slice(-ERRORS_KEPT);
    this._drawErrors();
  }

  _drawErrors() {
    this.list.hidden = !this.errors.length;
    const doc = this.shown;
    this.list.replaceChildren(...this.errors.map((err) => h("li", { class: "doc-preview-error" },
      h("span", { class: "doc-error-text" }, err.message,
        Number.isInteger(err.line) ? h("span", { class: "hint" }, ` (line ${err.line}${Number.isInteger(err.column) ? `, column ${err.column}` : ""})`) : null),
      h("button", { type: "button", class: "ghost accent", onclick: () => this.hooks.ask(doc, err) }, "Ask the model to fix this"))));
  }

  close() {
    clearTimeout(this.timer);
    removeEventListener("message", this.onMessage);
  }
}
