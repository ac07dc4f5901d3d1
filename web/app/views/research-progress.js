// A research turn's progress strip (docs/PROTOCOL.md "Research"): the phase, the counts of
// searches, sources found and pages read, what is being searched or read, and the sentence
// of a limit reached. One element kept across frames; every text goes in as textContent, so
// a page's title or a query can never become markup.
import { h } from "../dom.js";

const PHASES = ["planning", "searching", "reading", "writing"];
const LABELS = { planning: "Planning searches", searching: "Searching the web", reading: "Reading pages",
                 writing: "Writing the report" };

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

export class ResearchProgress {
  constructor() {
    this.phase = h("span", { class: "research-phase" });
    this.counts = h("span", { class: "research-counts" });
    this.detail = h("span", { class: "research-detail" });
    this.steps = PHASES.map((p) => h("li", { dataset: { phase: p } }, LABELS[p]));
    this.notice = h("p", { class: "research-notice", hidden: true });
    this.el = h("div", { class: "research-progress", role: "status", "aria-live": "polite", dataset: { phase: "" } },
      h("ol", { class: "research-steps", "aria-hidden": "true" }, ...this.steps),
      h("p", { class: "research-line" }, this.phase, " · ", this.counts, this.detail),
      this.notice);
  }

  /** The strip brought up to date with `state.research`, or null when there is none to show. */
  element(state) {
    const r = state.research;
    const turn = state.turn;
    if (!r || (turn && r.turnId && turn.id !== r.turnId)) return null;
    const running = !!turn && turn.status === "running";
    // Drawn on every frame of a streaming report: touch the DOM only when the progress changed.
    if (r === this.shown && running === this.shownRunning) return this.el;
    this.shown = r;
    this.shownRunning = running;
    const at = PHASES.indexOf(r.phase);
    this.el.dataset.phase = running ? r.phase : "done";
    this.steps.forEach((li, i) => { li.className = i < at || !running ? "done" : i === at ? "current" : ""; });
    set(this.phase, running ? `${LABELS[r.phase] || r.phase}…` : "Research");
    set(this.counts, `${plural(r.searches, "search", "searches")} · ${plural(r.found, "source")} found · ${r.read} read`);
    let detail = "";
    if (running && r.phase === "searching" && r.query) detail = ` · “${r.query}”`;
    if (running && r.phase === "reading" && (r.title || r.url)) detail = ` · ${r.title || r.url}`;
    set(this.detail, detail);
    set(this.notice, r.notice || "");
    this.notice.hidden = !r.notice;
    return this.el;
  }
}

function set(el, text) {
  if (el.textContent !== text) el.textContent = text;
}
