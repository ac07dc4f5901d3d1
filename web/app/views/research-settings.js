// Settings → Research (settings.research, docs/PROTOCOL.md "Research"): how long a research
// turn may gather, and how many searches it runs and pages it reads. The sentences of a
// limit reached point here. Each field is saved when it changes; a value out of range is
// said under the field and not sent, and what the server refuses puts the saved value back.
import { h } from "../dom.js";
import { patch } from "../api.js";
import { app, schedule } from "../store.js";

// What the server accepts (docs/PROTOCOL.md "Research"); the input's own min, max and step check it.
const FIELDS = [
  { key: "max_minutes", label: "Time limit (minutes)", min: 0.05, max: 240, step: "any", whole: false,
    hint: "Searching and reading stop here; the report is then written from what was found." },
  { key: "max_searches", label: "Searches", min: 1, max: 50, step: 1, whole: true,
    hint: "At most this many of the planned searches run." },
  { key: "max_pages", label: "Pages read", min: 1, max: 50, step: 1, whole: true,
    hint: "The best results are read, up to this many pages; the others count by their snippets." },
];

export class ResearchSection {
  constructor() {
    this.inputs = new Map();
    this.errors = new Map();
    const rows = FIELDS.map((f) => {
      const id = `set-research-${f.key.replace("max_", "")}`;
      const error = h("p", { class: "field-error", id: `${id}-error`, role: "alert" });
      const input = h("input", { type: "number", id, min: f.min, max: f.max, step: f.step, inputmode: f.whole ? "numeric" : "decimal",
        "aria-describedby": `${id}-hint ${id}-error`, onchange: () => this._change(f, input, error) });
      this.inputs.set(f.key, input);
      this.errors.set(f.key, error);
      return h("div", { class: "field s-row" }, h("label", { for: id }, f.label), input,
        h("p", { class: "hint", id: `${id}-hint` }, f.hint), error);
    });
    this.el = h("div", { class: "card research-settings" },
      h("p", { class: "hint" }, "Research (the Research button by the message box) plans web searches, reads the best pages "
        + "and writes a report with citations. These limits bound each research; when one is reached, the report says so."),
      ...rows);
  }

  _change(f, input, error) {
    // Empty, not a number, out of range or (step 1 from a whole min) not whole: the browser's own check.
    if (input.value === "" || !input.checkValidity()) {
      error.textContent = `${f.label}: ${f.whole ? "a whole number" : "a number"} from ${f.min} to ${f.max}.`;
      input.setAttribute("aria-invalid", "true");
      return;
    }
    this._save({ [f.key]: Number(input.value) });
  }

  async _save(change) {
    try {
      app.settings = await patch("/api/settings", { research: change });
      schedule();
      this.update(true);
    } catch (err) {
      this.update(true);
      const [key] = Object.keys(change);
      this.errors.get(key).textContent = err.message;
    }
  }

  /** Show the saved limits; `force` also over a field being typed in, and clears what was said. */
  update(force = false) {
    // GET /api/settings always carries `research`, defaults filled in.
    const saved = app.settings?.research;
    if (!saved) return;
    for (const [key, input] of this.inputs) {
      // A value being typed, or one said to be out of range, stays until it is changed.
      if (!force && (document.activeElement === input || input.hasAttribute("aria-invalid"))) continue;
      input.value = String(saved[key]);
      input.removeAttribute("aria-invalid");
      this.errors.get(key).textContent = "";
    }
  }
}
