// A document's versions: the list (number, who wrote it, when, its size), newest first, and the
// changes between any two — GET /api/documents/{id}/diff?from=A&to=B, computed on the server and
// drawn by the diff view the tool rows use (views/diff.js).
import { h, formatTime } from "../dom.js";
import { get } from "../api.js";
import { diffView } from "./diff.js";
import { authorWord } from "../../js/doc-quotes.js";

export class DocVersions {
  constructor() {
    this.docId = null;
    this.versions = null;
    this.from = h("select", { class: "doc-from", "aria-label": "Compare from version", onchange: () => this._compare() });
    this.to = h("select", { class: "doc-to", "aria-label": "Compare to version", onchange: () => this._compare() });
    this.list = h("ol", { class: "doc-version-list", "aria-label": "Versions", reversed: true });
    this.diff = h("div", { class: "doc-diff", "aria-live": "polite" });
    this.el = h("div", { class: "doc-versions" },
      h("div", { class: "doc-compare" }, h("span", {}, "Changes from"), this.from, h("span", {}, "to"), this.to),
      this.diff, this.list);
  }

  /** Show `versions` ([{version, author, created_at, size}], oldest first) of document `id`. */
  show(id, versions) {
    if (id === this.docId && versions === this.versions) return;
    const newDoc = id !== this.docId;
    this.docId = id;
    this.versions = versions || [];
    const numbers = this.versions.map((v) => v.version);
    const keep = (select, fallback) => {
      const now = Number(select.value);
      return !newDoc && numbers.includes(now) ? now : fallback;
    };
    const latest = numbers[numbers.length - 1] ?? 0;
    const to = keep(this.to, latest);
    const from = keep(this.from, Math.max(0, to - 1));
    const option = (n) => h("option", { value: String(n) }, n === 0 ? "nothing (empty)" : `version ${n}`);
    this.from.replaceChildren(option(0), ...numbers.map(option));
    this.to.replaceChildren(...numbers.map(option));
    this.from.value = String(from);
    this.to.value = String(to);
    this.list.replaceChildren(...[...this.versions].reverse().map((v) => h("li", { class: "doc-version" },
      h("span", { class: "doc-version-no" }, `Version ${v.version}`),
      h("span", { class: "doc-version-meta" }, ` · ${authorWord(v.author)} · `,
        h("time", { datetime: v.created_at, title: v.created_at ? new Date(v.created_at).toLocaleString() : "" },
          formatTime(v.created_at)),
        Number.isInteger(v.size) ? ` · ${v.size.toLocaleString()} characters` : ""),
      v.version > 1 ? h("button", { type: "button", class: "ghost doc-version-changes",
        "aria-label": `Changes in version ${v.version}`, onclick: () => this.pick(v.version - 1, v.version) }, "Changes") : null)));
    if (latest) this._compare();
    else this.diff.replaceChildren();
  }

  /** Show the changes from version `from` to `to`. */
  pick(from, to) {
    this.from.value = String(from);
    this.to.value = String(to);
    this._compare();
  }

  async _compare() {
    const id = this.docId;
    const from = Number(this.from.value), to = Number(this.to.value);
    if (!id || !to) return;
    const ask = this.asked = `${id}:${from}:${to}`;
    try {
      const res = await get(`/api/documents/${encodeURIComponent(id)}/diff?from=${from}&to=${to}`);
      if (this.asked !== ask) return;
      this.diff.replaceChildren(diffView(res.diff));
    } catch (err) {
      if (this.asked === ask) this.diff.replaceChildren(h("p", { class: "diff diff-note" }, err.message));
    }
  }
}
