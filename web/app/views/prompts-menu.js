// The message box's prompt list (CONTRACT §12): `/` at the start of the box opens the person's
// prompts, filtered as they type on command and name (web/js/prompts.js). ↑/↓ move, Enter or Tab
// chooses, Esc closes; the mouse works too. Choosing fills the box with the prompt's text; when it
// asks for {{variables}}, a small form under the list asks for each (Tab between fields, Enter
// fills them in, Esc leaves the text as it is). The box keeps the focus while the list is open
// (aria-activedescendant names the option), so typing goes on filtering.
// A prompt's text is the person's own: it goes into the box as text and is shown as text.
import { h } from "../dom.js";
import { get } from "../api.js";
import { fillIn, matchPrompts, preview, promptVariables, slashQuery } from "../../js/prompts.js";

let seq = 0;
// The library as last read, shared by every message box: the list opens on it at once (so Enter
// right after "/tr" takes the prompt) and is read again each time it opens.
let library = null;
let reading = null;

/** Read the library (once at a time); the list as read. */
function readLibrary() {
  reading ||= get("/api/prompts").then(({ items }) => { library = items; return items; })
    .finally(() => { reading = null; });
  return reading;
}

export class PromptMenu {
  /** @param input the message box (a textarea); changed(): its text was replaced (fit it, count the draft) */
  constructor({ input, changed }) {
    const n = ++seq;
    this.box = input;
    this.changed = changed;
    this.listId = `prompt-list-${n}`;
    this.list = h("ul", { class: "prompt-list", id: this.listId, role: "listbox", "aria-label": "Prompts" });
    this.status = h("p", { class: "prompt-status", role: "status" });
    this.menu = h("div", { class: "prompt-menu", hidden: true }, this.list, this.status,
      h("p", { class: "prompt-keys hint", "aria-hidden": "true" }, "↑↓ to move · Enter or Tab to use · Esc to close"));
    this.el = h("div", { class: "prompt-anchor" }, this.menu);
    this.form = h("form", { class: "prompt-vars", hidden: true, novalidate: true });
    this.form.addEventListener("submit", (e) => { e.preventDefault(); this._fill(); });
    this.form.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); this._closeForm(); }
    });
    this.prompts = null; // the library as last read, while the list is open
    this.shown = [];
    this.active = 0;
    this.dismissed = false; // Esc closed the list: it stays closed until the box no longer starts with /
    this.reading = 0;
    input.setAttribute("aria-autocomplete", "list");
    input.addEventListener("blur", () => this.close());
    // Read before the first `/`: the list then opens with the prompts already there.
    input.addEventListener("focus", () => { if (library === null) readLibrary().catch(() => {}); }, { once: true });
  }

  get isOpen() { return !this.menu.hidden; }

  /** The box's text changed (typed): open, filter or close the list. */
  typed() {
    const q = slashQuery(this.box.value);
    if (q === null) { this.dismissed = false; this.close(); return; }
    if (this.dismissed) return;
    if (!this.isOpen) this._open();
    this._draw(q);
  }

  /** A key in the box: true when the list took it. */
  key(e) {
    if (!this.isOpen || e.isComposing) return false;
    const choosable = this.shown.length > 0;
    if ((e.key === "ArrowDown" || e.key === "ArrowUp") && choosable && !e.altKey && !e.ctrlKey && !e.metaKey) {
      this._move(e.key === "ArrowDown" ? 1 : -1);
    } else if ((e.key === "Enter" || (e.key === "Tab" && !e.shiftKey)) && choosable && !e.ctrlKey && !e.metaKey && !e.altKey) {
      this.choose(this.shown[this.active]);
    } else if (e.key === "Escape") {
      this.dismissed = true;
      this.close();
    } else {
      return false;
    }
    e.preventDefault();
    e.stopPropagation();
    return true;
  }

  close() {
    if (this.menu.hidden) return;
    this.menu.hidden = true;
    this.prompts = null;
    this.shown = [];
    this.box.removeAttribute("aria-controls");
    this.box.removeAttribute("aria-activedescendant");
  }

  async _open() {
    this.menu.hidden = false;
    this.box.setAttribute("aria-controls", this.listId);
    this.active = 0;
    this.shown = [];
    this.query = null;
    this.prompts = library;
    this.list.hidden = true;
    if (!library) this.status.textContent = "Reading your prompts…";
    // Read again each time the list opens: a prompt made in Settings a moment ago is there.
    const mine = ++this.reading;
    let items;
    try {
      items = await readLibrary();
    } catch (err) {
      if (mine === this.reading && this.isOpen && !this.prompts) this.status.textContent = `Your prompts could not be read: ${err.message}`;
      return;
    }
    if (mine !== this.reading || !this.isOpen) return;
    this.prompts = items;
    const q = slashQuery(this.box.value);
    if (q === null) this.close(); else this._draw(q);
  }

  _draw(q) {
    if (!this.prompts) return;
    const before = this.shown[this.active];
    this.shown = matchPrompts(this.prompts, q);
    const kept = this.shown.indexOf(before);
    this.active = kept >= 0 && q === this.query ? kept : 0;
    this.query = q;
    this.list.replaceChildren(...this.shown.map((p, i) => h("li", {
      class: "prompt-option", role: "option", id: `${this.listId}-${i}`, "aria-selected": "false",
      dataset: { command: p.command },
      // The box keeps the focus: a press on an option must not take it away.
      onmousedown: (e) => e.preventDefault(),
      onclick: () => this.choose(p),
    }, h("span", { class: "prompt-command mono" }, `/${p.command}`), h("span", { class: "prompt-name" }, p.name),
    h("span", { class: "prompt-preview hint" }, preview(p.content)))));
    this.list.hidden = !this.shown.length;
    this.status.textContent = !this.prompts.length ? "No prompts yet: make them in Settings → Prompts."
      : this.shown.length ? "" : `No prompt matches /${q}. Enter sends it as it is.`;
    this._mark();
  }

  _move(step) {
    this.active = (this.active + step + this.shown.length) % this.shown.length;
    this._mark();
  }

  _mark() {
    [...this.list.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === this.active)));
    const li = this.list.children[this.active];
    if (li) {
      this.box.setAttribute("aria-activedescendant", li.id);
      li.scrollIntoView?.({ block: "nearest" });
    } else {
      this.box.removeAttribute("aria-activedescendant");
    }
  }

  /** Fill the box with the prompt's text, then ask for its variables if it has any. */
  choose(p) {
    this.close();
    this._setText(p.content);
    const names = Array.isArray(p.variables) ? p.variables : promptVariables(p.content);
    if (names.length) this._openForm(p, names); else this.box.focus();
  }

  _setText(text) {
    this.box.value = text;
    this.box.setSelectionRange(text.length, text.length);
    this.changed();
  }

  _openForm(p, names) {
    const n = ++seq;
    const fields = names.map((name, i) => {
      const id = `prompt-var-${n}-${i}`;
      const input = h("input", { type: "text", id, autocomplete: "off", dataset: { name } });
      return { name, input, row: h("div", { class: "field prompt-var" }, h("label", { for: id }, name), input) };
    });
    const title = h("p", { class: "prompt-vars-title", id: `prompt-vars-title-${n}` }, `Fill in “${p.name}”`);
    this.form.setAttribute("aria-labelledby", title.id);
    this.form.replaceChildren(title, ...fields.map((f) => f.row),
      h("div", { class: "form-row" }, h("button", { type: "submit", class: "primary" }, "Fill in"),
        h("button", { type: "button", class: "ghost", onclick: () => this._closeForm() }, "Cancel"),
        h("span", { class: "hint" }, "Tab to move between fields · Enter to fill in · Esc to leave them")));
    this.fields = fields;
    this.form.hidden = false;
    fields[0].input.focus();
  }

  /** Put the answers into the box's text (as it is now: it may have been edited meanwhile). */
  _fill() {
    const values = Object.fromEntries(this.fields.map((f) => [f.name, f.input.value]));
    this._setText(fillIn(this.box.value, values));
    this._closeForm();
  }

  _closeForm() {
    this.form.hidden = true;
    this.form.replaceChildren();
    this.fields = [];
    this.box.focus();
  }
}
