// The context meter by the message box: used / window ("≈12.4k / 128k") over a thin bar,
// amber near the summary threshold, red when the next message cannot fit (then a line
// above the box says so, with "Summarize now"; for a draft the server refuses, its own
// sentence). Hovering or clicking it shows the split by part (system prompt, summary,
// messages, attachments, tools) and notes. The words come from web/js/context-meter.js;
// everything is set as text.
import { h } from "../dom.js";
import { meterView, sentences } from "../../js/context-meter.js";

let meters = 0;

export class ContextMeter {
  /** @param hooks {{summarize(), stopSummary()}}: a summary under way can be stopped from the same button */
  constructor(hooks) {
    const id = `context-split-${++meters}`;
    this.label = h("span", { class: "meter-label" });
    this.fill = h("span", { class: "meter-fill" });
    this.button = h("button", { type: "button", class: "ghost meter-btn", "aria-expanded": "false", "aria-controls": id,
      onclick: () => this._pin(!this.pinned) },
    this.label, h("span", { class: "meter-bar", "aria-hidden": "true" }, this.fill));
    this.rows = h("tbody");
    this.total = h("td");
    this.levelLine = h("p", { class: "meter-level" });
    this.notes = h("ul", { class: "meter-notes" });
    const summarize = () => (this.compacting ? hooks.stopSummary() : hooks.summarize());
    this.compacting = false;
    this.panelButton = h("button", { type: "button", class: "ghost accent summarize-btn", onclick: summarize }, "Summarize now");
    this.panel = h("div", { class: "meter-panel", id, role: "group", "aria-label": "What the next request carries", hidden: true },
      h("table", { class: "meter-split" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Part"), h("th", { scope: "col" }, "Tokens"))),
        this.rows,
        h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, "Total"), this.total))),
      this.levelLine, this.notes, h("div", { class: "row" }, this.panelButton));
    this.el = h("div", { class: "context-meter", hidden: true, dataset: { level: "ok" } }, this.button, this.panel);
    // Above the message box when the next message cannot fit: said once, with the way out.
    this.warningText = h("span");
    this.warningButton = h("button", { type: "button", class: "ghost accent summarize-btn", onclick: summarize }, "Summarize now");
    this.warning = h("div", { class: "context-warning", role: "status", hidden: true }, this.warningText, this.warningButton);
    this.pinned = false;
    this.hovered = false;
    this.el.addEventListener("mouseenter", () => { this.hovered = true; this._show(); });
    this.el.addEventListener("mouseleave", () => { this.hovered = false; this._show(); });
    this.el.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || this.panel.hidden) return;
      e.preventDefault();
      e.stopPropagation(); // Esc here closes the split, not the running reply
      this.hovered = false;
      this._pin(false);
      this.button.focus();
    });
    this.outside = (e) => { if (!this.el.contains(e.target)) { this.hovered = false; this._pin(false); } };
  }

  _pin(on) {
    this.pinned = on;
    if (on) document.addEventListener("pointerdown", this.outside, true);
    else document.removeEventListener("pointerdown", this.outside, true);
    this._show();
  }

  _show() {
    const open = this.pinned || this.hovered;
    this.panel.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
  }

  /**
   * @param ctx the newest /context answer (null: none yet, or none to be had)
   * @param opts.auto settings.compaction.auto; opts.compacting "Summarize now" under way;
   *   opts.error why the last read failed: a draft the server refuses (422, it cannot fit
   *   whatever is left out) turns the meter red with the server's sentence
   */
  update(ctx, { auto = true, compacting = false, error = null } = {}) {
    const v = meterView(ctx, { auto });
    const refused = error?.status === 422 ? error.message : "";
    const level = refused ? "over" : v?.level;
    const warning = refused || v?.warning || "";
    this.el.hidden = !v;
    this.warning.hidden = level !== "over";
    this.warningText.textContent = level === "over" ? `${warning} ` : "";
    // Summarizing makes room for older messages, not for a message too long on its own.
    this.compacting = compacting;
    for (const b of [this.panelButton, this.warningButton]) {
      b.hidden = !!refused;
      b.textContent = compacting ? "Stop summarizing" : "Summarize now";
      b.setAttribute("aria-busy", String(compacting));
    }
    if (!v) { this._pin(false); return; }
    this.el.dataset.level = level;
    this.label.textContent = v.label;
    this.fill.style.width = `${(refused ? 100 : v.fraction * 100).toFixed(1)}%`;
    this.button.setAttribute("aria-label", sentences(v.name, warning, "Show what it is made of"));
    this.button.title = warning || v.name;
    this.rows.replaceChildren(...v.rows.map((r) => h("tr", { dataset: { part: r.key } },
      h("th", { scope: "row" }, r.name), h("td", {}, r.text))));
    this.total.textContent = v.total;
    this.levelLine.textContent = warning;
    this.levelLine.hidden = !warning;
    this.notes.replaceChildren(...v.notes.map((n) => h("li", {}, n)));
  }
}
