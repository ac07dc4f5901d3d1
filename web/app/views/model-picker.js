// A model picker: a button that opens a searchable list of the configured models, each
// with its provider's name and what it can do (tools, vision, reasoning), the recently
// used ones first. Used by the composer (the chat's model, or the new chat's), and by
// "with another model…" by a reply's Regenerate. Keyboard: the search box is an ARIA combobox over the
// listbox; ↑/↓ move, Enter picks, Esc closes and gives focus back to the button. With `onCompare`
// the list also picks several models for a compare (CONTRACT §10): "Compare models…" turns it into
// a multi-select (Enter or a click ticks a model), and "Compare N" hands over the 2–4 ticked.

export const COMPARE_MIN = 2;
export const COMPARE_MAX = 4;
import { h } from "../dom.js";
import { app } from "../store.js";
import { icon } from "../attachments.js";
import { uiChoices, saveUiChoices } from "../ui-choices.js";

const RECENT_MAX = 5;

// Line icons drawn in the page (paths from Feather, MIT): no emoji font needed.
const CAPS = [
  ["tools", "Tools", ["M14.7 6.3a1 1 0 0 0 0 1.4l1.6 1.6a1 1 0 0 0 1.4 0l3.77-3.77a6 6 0 0 1-7.94 7.94l-6.91 6.91a2.12 2.12 0 0 1-3-3l6.91-6.91a6 6 0 0 1 7.94-7.94l-3.76 3.76z"]],
  ["vision", "Vision", ["M1 12s4-8 11-8 11 8 11 8-4 8-11 8-11-8-11-8z", "M12 9a3 3 0 1 0 0 6 3 3 0 1 0 0-6z"]],
  ["reasoning", "Reasoning", ["M9 18h6", "M10 22h4", "M12 2a7 7 0 0 0-4 12.7V17h8v-2.3A7 7 0 0 0 12 2z"]],
];

/** The capability marks of a model: an icon each, with its name for hover and for screen readers. */
export function capabilityIcons(model) {
  const on = CAPS.filter(([key]) => model?.supports?.[key]);
  return h("span", { class: "caps", title: on.map(([, name]) => name).join(", ") },
    ...on.map(([key, name, paths]) => h("span", { class: "cap", dataset: { cap: key } }, icon(key, paths, "cap-icon"),
      h("span", { class: "sr-only" }, name))));
}

/** The recently used model ids, most recent first (kept by the server: ui-choices.js). */
export function recentModels() {
  return uiChoices().recent_models;
}

/** Note a model as just used: it goes to the top of the picker. */
export function rememberModel(id) {
  if (!id) return;
  const ids = [id, ...recentModels().filter((x) => x !== id)].slice(0, RECENT_MAX);
  if (ids.join("\n") !== recentModels().join("\n")) saveUiChoices({ recent_models: ids });
}

function providerName(model) {
  return app.providers?.find((p) => p.id === model.provider_id)?.name || "";
}

/** The models in picking order: recently used first (most recent on top), then the rest as configured. */
export function orderedModels(models = app.models) {
  const recent = recentModels();
  const rank = (m) => { const i = recent.indexOf(m.id); return i < 0 ? recent.length : i; };
  return models.map((m, i) => [m, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]).map(([m]) => m);
}

function matches(model, query) {
  if (!query) return true;
  const hay = `${model.label || ""} ${model.api_model || ""} ${providerName(model)}`.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((w) => hay.includes(w));
}

let seq = 0;

export class ModelPicker {
  /**
   * @param opts {{label: string, current(): string|null, onPick(id), text?: string, up?: boolean, buttonClass?: string}}
   *   `text` is a fixed button text (regenerate-with); without it the button shows the current model.
   *   `up` opens the list above the button (by the composer, at the bottom of the window).
   */
  constructor(opts) {
    this.opts = opts;
    const n = ++seq;
    this.listId = `model-list-${n}`;
    this.optPrefix = `model-opt-${n}-`;
    this.button = h("button", { type: "button", class: `model-picker-btn ${opts.buttonClass || "ghost"}`, "aria-haspopup": "listbox",
      "aria-expanded": "false", "aria-label": opts.label, title: opts.label, onclick: () => (this.isOpen ? this.close() : this.open()) });
    this.search = h("input", { type: "text", class: "model-search", role: "combobox", "aria-expanded": "true", "aria-autocomplete": "list",
      "aria-controls": this.listId, "aria-label": "Search models", placeholder: "Search models…", autocomplete: "off", spellcheck: false,
      oninput: () => { this.active = 0; this._drawList(); }, onkeydown: (e) => this._key(e) });
    this.list = h("ul", { class: "model-list", role: "listbox", id: this.listId, "aria-label": "Models" });
    this.empty = h("p", { class: "hint model-none", hidden: true }, "No model matches.");
    this.ticked = []; // the models ticked for a compare, in the order they were ticked
    this.comparing = false;
    this.compareFoot = opts.onCompare ? this._compareFoot() : null;
    this.popup = h("div", { class: `model-popup${opts.up ? " up" : ""}`, hidden: true }, this.search, this.list, this.empty,
      this.compareFoot);
    this.el = h("div", { class: "model-picker" }, this.button, this.popup);
    this.el.addEventListener("focusout", (e) => { if (this.isOpen && !this.el.contains(e.relatedTarget)) this.close(false); });
    this.isOpen = false;
    this.shown = [];
    this.active = 0;
    this.update();
  }

  /** Redraw the button when the models or the current one changed. */
  update() {
    if (this.opts.text) {
      if (this.button.textContent !== this.opts.text) this.button.textContent = this.opts.text;
      return;
    }
    const id = this.opts.current();
    const key = `${id}|${app.models.map((m) => m.id + m.label + JSON.stringify(m.supports)).join()}`;
    if (key === this.key) return;
    this.key = key;
    const model = app.models.find((m) => m.id === id);
    const name = model ? model.label || model.api_model : id ? `${id} (removed)` : "Choose a model";
    this.button.replaceChildren(h("span", { class: "model-name" }, name), ...(model ? [capabilityIcons(model)] : []));
    this.button.setAttribute("aria-label", `${this.opts.label}: ${name}`);
    this.button.title = this.button.getAttribute("aria-label");
  }

  open() {
    if (this.isOpen || !app.models.length) return;
    this.isOpen = true;
    if (!this.opts.up) {
      // A reply's picker near the window's bottom opens upwards, where there is room.
      const r = this.button.getBoundingClientRect();
      this.popup.classList.toggle("up", window.innerHeight - r.bottom < 320 && r.top > window.innerHeight - r.bottom);
    }
    this.popup.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.search.value = "";
    const order = orderedModels();
    this.active = Math.max(0, order.findIndex((m) => m.id === this.opts.current?.()));
    this._drawList();
    this.search.focus();
  }

  /** @param refocus give focus back to the button (Esc, a pick), not when focus left on its own */
  close(refocus = true) {
    if (!this.isOpen) return;
    this.isOpen = false;
    if (this.comparing) this._markComparing(false);
    this.popup.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    this.search.removeAttribute("aria-activedescendant");
    if (refocus) this.button.focus();
  }

  /** The popup's foot: "Compare models…", then the count ticked and the button that compares them. */
  _compareFoot() {
    this.compareToggle = h("button", { type: "button", class: "ghost compare-toggle", "aria-pressed": "false",
      onmousedown: (e) => e.preventDefault(), onclick: () => this._setComparing(!this.comparing) }, "Compare models…");
    this.compareNote = h("span", { class: "hint compare-note", "aria-live": "polite" });
    this.compareGo = h("button", { type: "button", class: "primary compare-go", hidden: true,
      onmousedown: (e) => e.preventDefault(), onclick: () => this._compare() }, "Compare");
    return h("div", { class: "model-compare-foot" }, this.compareToggle, this.compareNote, this.compareGo);
  }

  _setComparing(on) {
    this._markComparing(on);
    this._drawList();
    this.search.focus();
  }

  _markComparing(on) {
    this.comparing = on;
    if (!on) this.ticked = [];
    this.compareToggle.setAttribute("aria-pressed", String(on));
    this.compareToggle.textContent = on ? "Pick one model" : "Compare models…";
    this.list.setAttribute("aria-multiselectable", String(on));
  }

  _tick(model) {
    const i = this.ticked.indexOf(model.id);
    if (i >= 0) this.ticked.splice(i, 1);
    else if (this.ticked.length < COMPARE_MAX) this.ticked.push(model.id);
    this._drawList();
  }

  _compare() {
    if (this.ticked.length < COMPARE_MIN) return;
    const ids = [...this.ticked];
    this.close();
    this.opts.onCompare(ids);
  }

  _pick(model) {
    if (this.comparing) { this._tick(model); return; }
    this.close();
    rememberModel(model.id);
    this.opts.onPick(model.id);
    this.update();
  }

  _key(e) {
    const n = this.shown.length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!n) return;
      this.active = (this.active + (e.key === "ArrowDown" ? 1 : -1) + n) % n;
      this._markActive();
    } else if (e.key === "Home" || e.key === "End") {
      if (!n || this.search.value) return; // in typed text they move the caret
      e.preventDefault();
      this.active = e.key === "Home" ? 0 : n - 1;
      this._markActive();
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (n) this._pick(this.shown[this.active]);
    } else if (e.key === "Escape") {
      // Handled here: the window's Esc would otherwise stop a running reply.
      e.preventDefault();
      e.stopPropagation();
      this.close();
    } else if (e.key === "Tab" && !this.comparing) {
      this.close(false); // while ticking, Tab goes on to the compare buttons below the list
    }
  }

  _drawList() {
    const query = this.search.value.trim();
    this.shown = orderedModels().filter((m) => matches(m, query));
    this.active = Math.min(this.active, Math.max(0, this.shown.length - 1));
    const current = this.opts.text ? null : this.opts.current();
    const picked = (m) => (this.comparing ? this.ticked.includes(m.id) : m.id === current);
    this.list.replaceChildren(...this.shown.map((m, i) => {
      const provider = providerName(m);
      return h("li", { role: "option", id: this.optPrefix + i, class: `model-option${this.comparing ? " tickable" : ""}`,
        dataset: { id: m.id }, "aria-selected": String(picked(m)),
        // Picking with the mouse: keep focus in the search box (a blur would close the list first).
        onmousedown: (e) => e.preventDefault(), onclick: () => this._pick(m) },
      h("span", { class: "model-option-name" }, m.label || m.api_model),
      provider ? h("span", { class: "model-provider" }, provider) : null,
      capabilityIcons(m));
    }));
    this.empty.hidden = this.shown.length > 0;
    if (this.compareFoot) {
      const n = this.ticked.length;
      this.compareGo.hidden = !this.comparing;
      this.compareGo.disabled = n < COMPARE_MIN;
      this.compareGo.textContent = `Compare ${n || ""}`.trim();
      this.compareNote.textContent = !this.comparing ? ""
        : n < COMPARE_MIN ? `Tick ${COMPARE_MIN}–${COMPARE_MAX} models.`
        : n === COMPARE_MAX ? `${n} ticked (the most a compare asks).` : `${n} ticked.`;
    }
    this._markActive();
  }

  _markActive() {
    [...this.list.children].forEach((li, i) => li.classList.toggle("active", i === this.active));
    const li = this.list.children[this.active];
    if (li) {
      this.search.setAttribute("aria-activedescendant", li.id);
      li.scrollIntoView({ block: "nearest" });
    } else {
      this.search.removeAttribute("aria-activedescendant");
    }
  }
}
