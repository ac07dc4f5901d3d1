// Settings → Personal (settings.personal, CONTRACT §12): what every chat is told. The
// instructions go first in each request's system text, before a folder's and a chat's own
// prompts; what the person says about themself and today's date follow as data. Each field is
// saved when it changes (a text field when it loses focus); what the server refuses is said under
// the field and the saved value comes back.
import { h } from "../dom.js";
import { patch } from "../api.js";
import { app, schedule } from "../store.js";

const TEXTS = [
  { key: "instructions", label: "Instructions for every chat", max: 8000, rows: 5,
    placeholder: "e.g. Answer briefly. Use metric units. Say when you are unsure.",
    hint: "Sent first in every chat, before a folder's and the chat's own system prompt." },
  { key: "about", label: "About me", max: 4000, rows: 4,
    placeholder: "e.g. I teach chemistry in Lyon and write in French and English.",
    hint: "Sent as facts about you, not as instructions." },
];

export class PersonalSection {
  constructor() {
    this.fields = new Map();
    const rows = TEXTS.map((f) => {
      const id = `set-personal-${f.key}`;
      const error = h("p", { class: "field-error", id: `${id}-error`, role: "alert" });
      const input = h("textarea", { id, rows: f.rows, maxlength: f.max, placeholder: f.placeholder,
        "aria-describedby": `${id}-hint ${id}-error`, onchange: () => this._save({ [f.key]: input.value }) });
      this.fields.set(f.key, { input, error });
      return h("div", { class: "field" }, h("label", { for: id }, f.label), input,
        h("p", { class: "hint", id: `${id}-hint` }, f.hint), error);
    });
    const dateError = h("p", { class: "field-error", role: "alert" });
    const date = h("input", { type: "checkbox", id: "set-personal-date", "aria-describedby": "set-personal-date-hint",
      onchange: () => this._save({ date: date.checked }) });
    this.fields.set("date", { input: date, error: dateError });
    this.status = h("p", { class: "hint", role: "status" });
    this.el = h("div", { class: "card personal-settings" },
      h("p", { class: "hint" }, "What every chat is told, temporary ones too. The inspector (a chat's context) shows it as sent."),
      ...rows,
      h("div", { class: "field" }, h("label", { for: "set-personal-date" }, date, " Tell the model today's date"),
        h("p", { class: "hint", id: "set-personal-date-hint" }, "The date, weekday and time zone of this computer, at each message."),
        dateError),
      this.status);
  }

  async _save(change) {
    const [key] = Object.keys(change);
    const { error } = this.fields.get(key);
    error.textContent = "";
    this.status.textContent = "";
    try {
      app.settings = await patch("/api/settings", { personal: change });
      schedule();
      this.status.textContent = "Saved.";
    } catch (err) {
      error.textContent = err.fields?.[`personal.${key}`] || err.message;
    }
    // Only the field saved is put back as stored: another may be changing meanwhile.
    this._show(key);
  }

  _show(key) {
    const saved = app.settings?.personal;
    const { input } = this.fields.get(key);
    if (!saved) return;
    if (key === "date") input.checked = !!saved.date;
    else if (input.value !== saved[key]) input.value = saved[key];
  }

  /** Show what is saved, except in the field being edited. */
  update() {
    for (const [key, { input }] of this.fields) {
      if (document.activeElement !== input) this._show(key);
    }
  }
}
