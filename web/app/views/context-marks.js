// The marks the context leaves in the thread (where: web/js/context-marks.js): the divider
// "Earlier messages summarized" after a summary checkpoint's boundary, which opens the
// summary (sanitized Markdown), and a turn's note that older messages were left out.
// Each is one element kept across frames, so an open summary stays open.
import { h } from "../dom.js";
import { fillMarkdown, hasMarkdown } from "../markdown-loader.js";
import { formatTokens, trimmedSentence } from "../../js/context-meter.js";

let dividers = 0;

export class ContextMarks {
  constructor() {
    const id = `summary-text-${++dividers}`;
    this.summaryBody = h("div", { class: "summary-text md", id });
    this.summaryInfo = h("p", { class: "hint" });
    this.summaryPanel = h("div", { class: "summary-panel", hidden: true }, this.summaryInfo, this.summaryBody);
    this.summaryToggle = h("button", { type: "button", class: "ghost summary-toggle", "aria-expanded": "false", "aria-controls": id,
      onclick: () => this._open(this.summaryPanel.hidden) }, "Earlier messages summarized");
    this.divider = h("div", { class: "context-divider", dataset: { mark: "summary" } },
      h("div", { class: "divider-line" }, this.summaryToggle), this.summaryPanel);
    this.note = h("p", { class: "context-note", role: "status", dataset: { mark: "trimmed" } });
    this.summaryKey = null;
  }

  _open(open) {
    this.summaryPanel.hidden = !open;
    this.summaryToggle.setAttribute("aria-expanded", String(open));
  }

  /** The element of mark `kind` ("summary" or "trimmed"), brought up to date with `state`. */
  element(kind, state) {
    if (kind === "trimmed") {
      const text = trimmedSentence(state.trimmed);
      if (this.note.textContent !== text) this.note.textContent = text;
      return this.note;
    }
    const c = state.compaction;
    // Drawn again once the Markdown renderer is in (until then the text shows as written).
    const key = c.summary == null ? null : `${hasMarkdown() ? "md" : "text"}:${c.summary}`;
    if (key !== this.summaryKey) {
      this.summaryKey = key;
      // Until the /context read after a `compacted` brings the text.
      if (c.summary == null) this.summaryBody.replaceChildren(h("p", { class: "hint" }, "Reading the summary…"));
      else fillMarkdown(this.summaryBody, c.summary);
    }
    const saved = c.tokensBefore != null && c.tokensAfter != null
      ? ` (${formatTokens(c.tokensBefore)} → ${formatTokens(c.tokensAfter)} tokens)` : "";
    const info = `The messages above stay as they are; the model is sent this summary of them instead${saved}.`;
    if (this.summaryInfo.textContent !== info) this.summaryInfo.textContent = info;
    return this.divider;
  }
}
