// Settings → Long conversations (settings.compaction, CONTRACT §6): summarize older
// messages on their own or not, at what share of the model's context window (50–95 %),
// and with which model. Built once and updated in place, so a redraw never takes the
// focus off the slider while it is moved by keyboard; each change is saved at once.
import { h } from "../dom.js";
import { patch } from "../api.js";
import { app, schedule } from "../store.js";
import { toast } from "./toast.js";

// What the server uses when settings carry no `compaction` (CONTRACT §6 defaults).
const DEFAULTS = { auto: true, threshold: 0.8, model_id: null };

export class CompactionSection {
  constructor() {
    this.auto = h("input", { type: "checkbox", id: "set-compaction-auto", onchange: () => this._save({ auto: this.auto.checked }) });
    this.threshold = h("input", { type: "range", id: "set-compaction-threshold", min: 50, max: 95, step: 5,
      "aria-describedby": "set-compaction-threshold-hint",
      oninput: () => this._say(), onchange: () => this._save({ threshold: Number(this.threshold.value) / 100 }) });
    this.out = h("output", { for: "set-compaction-threshold" });
    this.model = h("select", { id: "set-compaction-model", onchange: () => this._save({ model_id: this.model.value || null }) });
    this.el = h("div", { class: "card compaction" },
      h("p", { class: "hint" }, "When a chat grows past what its model can read at once, Numi sends a summary of the older messages "
        + "instead of leaving them out. Your messages are never changed; only what is sent gets shorter."),
      h("div", { class: "field s-row" }, h("label", { class: "check", for: this.auto.id }, this.auto,
        " Summarize older messages automatically")),
      h("div", { class: "field s-row" },
        h("label", { for: this.threshold.id }, "Summarize when the context window is ", this.out, " full"),
        this.threshold,
        h("p", { class: "hint", id: "set-compaction-threshold-hint" }, "The meter by the message box turns amber from here.")),
      h("div", { class: "field s-row" }, h("label", { for: this.model.id }, "Summary model"), this.model,
        h("p", { class: "hint" }, "A summary is one request to this model; a small, fast one does well.")));
  }

  _settings() {
    return { ...DEFAULTS, ...(app.settings?.compaction || {}) };
  }

  _say() {
    this.out.textContent = `${this.threshold.value} %`;
    this.threshold.setAttribute("aria-valuetext", `${this.threshold.value} %`);
  }

  async _save(change) {
    try {
      app.settings = await patch("/api/settings", { compaction: change });
      schedule();
    } catch (err) {
      toast(err.message, { ms: 8000 });
      this.update(true);
    }
  }

  /** Show the saved settings (and the models to choose from); `force` also over what is being changed. */
  update(force = false) {
    const c = this._settings();
    this.auto.checked = !!c.auto;
    if (force || document.activeElement !== this.threshold) {
      this.threshold.value = String(Math.round(Number(c.threshold) * 100));
      this._say();
    }
    const options = [h("option", { value: "" }, "The chat's own model"),
      ...app.models.map((m) => h("option", { value: m.id }, m.label || m.api_model))];
    // A model that is gone from the catalog still shows as chosen, by its id.
    if (c.model_id && !app.models.some((m) => m.id === c.model_id)) options.push(h("option", { value: c.model_id }, c.model_id));
    this.model.replaceChildren(...options);
    this.model.value = c.model_id || "";
  }
}
