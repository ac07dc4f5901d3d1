// Settings' frame: a nav of sections (one shown at a time, its id in the address as
// #/settings/<id>) and a search box that shows the matching rows of every section.
// A "row" is one setting or one listed thing (a provider, a model, a tool's policy…);
// a section whose title matches shows all its rows.
import { h } from "../dom.js";

const ROWS = ".s-row, .card.provider, .card.model, .mcp-server, .mcp-add, .policy-row, .rule-row";

/** The section named in the address (#/settings/<id>), if any. */
function sectionInHash() {
  return location.hash.match(/^#\/settings\/(\w+)$/)?.[1] || null;
}

export class SettingsSections {
  /** @param sections [{id, title, body: [Node]}], the first is shown when the address names none */
  constructor(sections) {
    this.sections = sections;
    this.links = new Map();
    this.panels = new Map();
    for (const s of sections) {
      const link = h("a", { href: `#/settings/${s.id}`, class: "s-link", onclick: (e) => { e.preventDefault(); this.open(s.id, true); } }, s.title);
      this.links.set(s.id, link);
      this.panels.set(s.id, h("section", { class: "s-panel", id: `settings-${s.id}`, "aria-labelledby": `settings-${s.id}-title`, dataset: { section: s.id } },
        h("h2", { id: `settings-${s.id}-title` }, s.title), ...s.body));
    }
    this.search = h("input", { type: "search", class: "s-search", placeholder: "Search settings", "aria-label": "Search settings",
      autocomplete: "off", spellcheck: false, oninput: () => this.filter() });
    this.search.addEventListener("keydown", (e) => { if (e.key === "Escape" && this.search.value) { e.stopPropagation(); this.search.value = ""; this.filter(); } });
    this.none = h("p", { class: "s-none", role: "status" });
    const content = h("div", { class: "s-content" }, ...this.panels.values());
    // Lists (providers, MCP servers, policies) redraw as their data comes in: filter those rows too.
    new MutationObserver(() => { if (this.query()) this.filter(); }).observe(content, { childList: true, subtree: true });
    this.el = h("div", { class: "s-layout" },
      h("div", { class: "s-side" }, this.search,
        h("nav", { class: "s-nav", "aria-label": "Settings sections" }, ...this.links.values())),
      h("div", { class: "s-main" }, this.none, content));
    const wanted = sectionInHash();
    this.open(this.panels.has(wanted) ? wanted : sections[0].id, false);
  }

  query() { return this.search.value.trim().toLowerCase(); }

  /** Show one section; `remember` puts it in the address (replaced, so Close still goes back). */
  open(id, remember) {
    this.current = id;
    if (this.search.value) this.search.value = "";
    for (const [sid, link] of this.links) {
      if (sid === id) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
    }
    this.filter();
    if (remember) history.replaceState(history.state, "", `#/settings/${id}`);
  }

  filter() {
    const q = this.query();
    let shown = 0;
    for (const [id, panel] of this.panels) {
      const rows = [...panel.querySelectorAll(ROWS)];
      if (!q) {
        rows.forEach((r) => r.classList.remove("s-miss"));
        panel.hidden = id !== this.current;
        continue;
      }
      const all = this.sections.find((s) => s.id === id).title.toLowerCase().includes(q);
      let hits = 0;
      for (const row of rows) {
        const hit = all || row.textContent.toLowerCase().includes(q);
        row.classList.toggle("s-miss", !hit);
        if (hit) hits += 1;
      }
      panel.hidden = !hits;
      shown += hits;
    }
    this.el.classList.toggle("searching", !!q);
    this.none.textContent = q && !shown ? `No setting matches “${this.search.value.trim()}”. Try another word, or pick a section.` : "";
  }
}
