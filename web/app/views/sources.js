// A reply's sources in the page: its `[n]` markers as superscript links, and the list
// under the reply (title, site, snippet). Every string of a source comes from a web
// page, a search service or a person's file, so it goes in as text (h() sets textContent
// and attributes, never markup), and a link opens outside the app's window the way every
// link of a reply does: target=_blank with rel=noopener noreferrer, which the desktop
// shell hands to the system browser (desktop/app.py) and a browser opens in a new tab.
// A passage of a knowledge base is no link: its marker and its title in the list are
// buttons opening the app's own viewer at its place (views/knowledge-viewer.js, loaded
// on first use). A memory the request carried is no link out either: it leads to Settings →
// Memory (views/memory-link.js).
import { h } from "../dom.js";
import { markerLabel, markerParts, MAY_CITE } from "../../js/citations.js";
import { memoryLink, MEMORY_ROUTE } from "./memory-link.js";

/** Open a knowledge source in the viewer (its module is loaded the first time). */
function openKnowledge(source) {
  import("./knowledge-viewer.js").then((m) => m.openKnowledgeViewer(source));
}

// Where a `[n]` is not a citation: code, a link's own text (a model's "[1]" link or a
// marker already made), math placeholders and KaTeX's output, and history text still
// waiting for its Markdown (stream-render.js's .md-pending).
const LITERAL_TAGS = new Set(["CODE", "PRE", "A", "KBD", "SAMP", "SCRIPT", "STYLE", "TEXTAREA"]);
const LITERAL_CLASSES = ["cite", "math-inline", "math-display", "katex", "md-pending", "code-bar"];

function literal(el) {
  return LITERAL_TAGS.has(el.tagName) || LITERAL_CLASSES.some((c) => el.classList.contains(c));
}

/** A marker for `source` ({n, title, url, site}, from shownSources): a superscript link reading n. */
export function citeMarker(source) {
  const label = markerLabel(source);
  const n = String(source.n);
  const inner = source.memory
    ? memoryLink(source.memory, n, { class: "cite-link cite-memory", "aria-label": label, title: `${label} — opens Settings → Memory` })
    : source.knowledge
    ? h("button", { type: "button", class: "cite-link cite-knowledge", "aria-label": label, title: `${label} — opens in the viewer`,
                    "aria-haspopup": "dialog", dataset: { where: JSON.stringify(source.knowledge) }, onclick: () => openKnowledge(source) }, n)
    : source.url
      ? h("a", { class: "cite-link", href: source.url, target: "_blank", rel: "noopener noreferrer", "aria-label": label,
                 title: `${label} — opens in your browser` }, n)
      : h("span", { class: "cite-link", title: label }, n);
  return h("sup", { class: "cite", dataset: { n } }, inner);
}

function sameMarker(el, source) {
  const a = el.firstElementChild;
  return a && a.getAttribute("href") === (source.memory ? MEMORY_ROUTE : source.url) && a.getAttribute("aria-label") === markerLabel(source)
    && (a.dataset.memory ?? null) === (source.memory ?? null)
    && (a.dataset.where ?? null) === (source.knowledge ? JSON.stringify(source.knowledge) : null);
}

/**
 * The `[n]` markers in `root` (nodes rendered from a reply's Markdown) linked to `byN`
 * (n → a shown source): plain text `[n]` naming a source becomes a marker. `raw` is the
 * Markdown fresh nodes were rendered from (text citing nothing skips the walk); null
 * means `root` was drawn before and the sources changed: then a marker whose source
 * changed is made again, and one whose source is gone is text again. Returns `root`.
 */
export function linkCitations(root, byN, raw = null) {
  if (!root || root.nodeType === Node.TEXT_NODE) return root;
  if (raw !== null && (!byN.size || !MAY_CITE.test(raw))) return root;
  let unmarked = false;
  if (raw === null) {
    for (const el of root.querySelectorAll("sup.cite[data-n]")) {
      const source = byN.get(Number(el.dataset.n));
      if (!source) { el.replaceWith(`[${el.dataset.n}]`); unmarked = true; }
      else if (!sameMarker(el, source)) el.replaceWith(citeMarker(source));
    }
    if (unmarked) root.normalize(); // text put back beside text: one node again
    if (!byN.size) return root;
  }
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => node.nodeType === Node.TEXT_NODE ? NodeFilter.FILTER_ACCEPT
      : literal(node) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_SKIP,
  });
  const texts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (MAY_CITE.test(node.data)) texts.push(node);
  }
  const has = (n) => byN.has(n);
  for (const node of texts) {
    const parts = markerParts(node.data, has);
    if (!parts.some((p) => typeof p === "number")) continue;
    node.replaceWith(...parts.map((p) => (typeof p === "number" ? citeMarker(byN.get(p)) : p)));
  }
  return root;
}

/** The list of a reply's sources, under its text; hidden while it has none. */
export class SourceList {
  constructor() {
    this.count = h("span", { class: "sources-count" });
    this.list = h("ol", { class: "source-list" });
    this.el = h("details", { class: "msg-sources", open: true, hidden: true },
      h("summary", {}, "Sources ", this.count), this.list);
    this.key = "";
  }

  /** @param sources shownSources(...) of the reply */
  update(sources) {
    const key = JSON.stringify(sources);
    if (key === this.key) return;
    this.key = key;
    this.el.hidden = !sources.length;
    this.count.textContent = `(${sources.length})`;
    this.list.replaceChildren(...sources.map((s) => h("li", { class: s.memory ? "source source-memory" : "source", value: s.n, dataset: { n: String(s.n) } },
      s.memory ? memoryLink(s.memory, s.title, { class: "source-title source-memory-link", title: "A memory you saved — opens Settings → Memory" })
      : s.knowledge ? h("button", { type: "button", class: "source-title source-knowledge", "aria-haspopup": "dialog",
                                  title: `${s.knowledge.path || s.title} — opens in the viewer`, onclick: () => openKnowledge(s) }, s.title)
        : s.url ? h("a", { class: "source-title", href: s.url, target: "_blank", rel: "noopener noreferrer",
                           title: `${s.url} — opens in your browser` }, s.title)
          : h("span", { class: "source-title" }, s.title),
      s.place ? h("span", { class: "source-place" }, s.place) : null,
      s.site && s.site !== s.title ? h("span", { class: "source-site" }, s.site) : null,
      s.snippet ? h("p", { class: "source-snippet" }, s.snippet) : null)));
  }
}
