// The viewer of a knowledge source (CONTRACT §8): a reply's `[n]` for a passage of a knowledge
// base, a search result in Settings → Knowledge or a listed document opens it here, inside the
// app, at its place. It reads GET /api/knowledge/{id}/documents/{doc_id} (the document's text as
// located chunks) and shows it read-only: a PDF page by page, the page drawn as an image
// (GET …/pages/{page_index}, backend/features/knowledge/viewer.py) beside its text; Markdown,
// HTML, Word and EPUB by heading; text and code as numbered lines. The place cited is
// highlighted and scrolled to. "Open file" hands a document given by path to the system's own
// app (POST …/open).
//
// Everything shown comes from the person's file: it goes in as text (h() sets textContent),
// never as markup, and the file's own links or scripts are never live.
import { h } from "../dom.js";
import { get, post } from "../api.js";
import { sheet } from "./dialogs.js";
import {
  byLines, byPages, documentBlocks, documentLines, locatorKind, locatorLabel, matchingChunks, snippetRanges,
} from "../../js/knowledge.js";

const enc = encodeURIComponent;
// Lines shown around the place cited in a long text or code file: a whole 100 000-line log
// would be as many rows to lay out.
const LINES_AROUND = 1500;

/**
 * Open the viewer for `source`: {title, snippet?, knowledge: {knowledge_id, document_id, locator?}}
 * (a reply's shown source, a query result or a document of a base). Resolves with the dialog.
 */
export function openKnowledgeViewer(source) {
  const where = source.knowledge;
  const base = `/api/knowledge/${enc(where.knowledge_id)}/documents/${enc(where.document_id)}`;
  const place = h("span", { class: "kv-place" }, locatorLabel(where.locator));
  const path = h("span", { class: "kv-path mono hint" });
  const status = h("p", { class: "kv-status hint", role: "status" }, "Loading…");
  const openBtn = h("button", { type: "button", class: "ghost kv-open", hidden: true }, "Open file");
  const main = h("div", { class: "kv-main" });
  const d = sheet(source.title || "Source", h("div", { class: "kv-bar" }, place, path, h("span", { class: "spacer" }), openBtn),
    status, main);
  d.classList.add("kv-sheet");
  openBtn.addEventListener("click", async () => {
    openBtn.disabled = true;
    try {
      await post(`${base}/open`);
      say(status, "Opened in its app.");
    } catch (err) {
      say(status, err.message, true);
    } finally {
      openBtn.disabled = false;
    }
  });
  get(base).then((doc) => {
    if (!d.open) return;
    say(status, "");
    if (typeof doc.path === "string") {
      path.textContent = doc.path;
      openBtn.hidden = false;
      openBtn.setAttribute("aria-label", `Open ${fileName(doc.path)} in its app`);
    }
    const chunks = Array.isArray(doc.chunks) ? doc.chunks : [];
    const view = !chunks.length ? null
      : byPages(chunks) ? pagesView(doc, chunks, where, source.snippet, base)
        : byLines(chunks) ? linesView(doc, chunks, where)
          : blocksView(doc, chunks, where, source.snippet);
    if (!view) {
      say(status, "Nothing was read from this document (it may still be waiting to be read).");
      return;
    }
    main.replaceChildren(view.el);
    if (where.locator && !view.found) {
      say(status, `${locatorLabel(where.locator) || "This place"} is no longer in the document: it changed since. `
        + "It is shown from the start.");
    }
    // The place cited at the top of the text, and the text focused so the keys scroll it.
    view.target?.scrollIntoView({ block: "start" });
    view.focus.focus({ preventScroll: true });
  }, (err) => say(status, err.status === 404
    ? "This document is no longer in its knowledge base (the file was removed, or the base deleted)." : err.message, true));
  return d;
}

function say(el, text, error = false) {
  el.textContent = text;
  el.classList.toggle("field-error", error);
  el.setAttribute("role", error ? "alert" : "status");
}

function fileName(path) {
  return path.split(/[\\/]/).pop() || path;
}

/** `text` as nodes, the given [start, end] ranges in <mark>. */
function marked(text, ranges) {
  if (!ranges.length) return [text];
  const out = [];
  let at = 0;
  for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0])) {
    if (s > at) out.push(text.slice(at, s));
    out.push(h("mark", { class: "kv-snippet" }, text.slice(s, e)));
    at = e;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

/** A scrolling, focusable region of the document's text (the keys scroll it). */
function textRegion(doc, ...children) {
  return h("div", { class: "kv-text", tabindex: "0", role: "region", "aria-label": `Text of ${doc.title || "the document"}` },
    ...children);
}

/** Markdown, HTML, Word, EPUB: a block per heading, the cited heading's highlighted. */
function blocksView(doc, chunks, where, snippet) {
  const hits = new Set(where.locator ? matchingChunks(chunks, where.locator) : []);
  let target = null;
  const blocks = documentBlocks(chunks).map((b) => {
    const hit = b.chunks.some((i) => hits.has(i));
    const heading = locatorKind(b.locator) === "heading" ? locatorLabel(b.locator) : "";
    const el = h("section", { class: `kv-block${hit ? " kv-hit" : ""}`, dataset: hit ? { hit: "true" } : undefined },
      heading ? h("h3", { class: "kv-heading" }, heading) : null,
      h("div", { class: "kv-body" }, ...marked(b.text, hit ? snippetRanges(b.text, snippet) : [])));
    if (hit && !target) target = el;
    return el;
  });
  const region = textRegion(doc, ...blocks);
  return { el: region, target, focus: region, found: !!target };
}

/** Text and code: numbered lines, the cited lines in one <mark>. */
function linesView(doc, chunks, where) {
  const lines = documentLines(chunks);
  const range = locatorKind(where.locator) === "lines" ? where.locator.lines : null;
  const found = !!range && range[0] <= lines.length;
  const [a, b] = found ? [range[0], Math.min(range[1], lines.length)] : [1, 0];
  const from = Math.max(1, (found ? a : 1) - LINES_AROUND);
  const to = Math.min(lines.length, (found ? b : 1) + LINES_AROUND);
  const row = (l) => h("div", { class: "kv-line", dataset: { n: String(l.n) } },
    h("span", { class: "kv-ln", "aria-hidden": "true" }, String(l.n)), h("span", { class: "kv-lt" }, l.text || "\u200b"));
  const before = lines.slice(from - 1, found ? a - 1 : to).map(row);
  const hit = found ? h("mark", { class: "kv-hit kv-lines-hit", dataset: { hit: "true" } }, ...lines.slice(a - 1, b).map(row)) : null;
  const after = found ? lines.slice(b, to).map(row) : [];
  const note = from > 1 || to < lines.length
    ? h("p", { class: "hint kv-window" }, `Lines ${from}–${to} of ${lines.length} are shown.`) : null;
  const region = textRegion(doc, note, h("div", { class: "kv-code" }, ...before, hit, ...after));
  region.classList.add("kv-text-lines");
  return { el: region, target: hit, focus: region, found };
}

/** A PDF: one page at a time, its image beside its text; the cited page first. */
function pagesView(doc, chunks, where, snippet, base) {
  const pages = documentBlocks(chunks).filter((b) => locatorKind(b.locator) === "page");
  const hits = new Set(where.locator ? matchingChunks(chunks, where.locator) : []);
  const cited = pages.findIndex((p) => p.chunks.some((i) => hits.has(i)));
  const img = h("img", { class: "kv-page-img", alt: "", decoding: "async" });
  const imgError = h("p", { class: "field-error kv-page-error", role: "alert" });
  const caption = h("figcaption", { class: "kv-page-label" });
  const prev = h("button", { type: "button", class: "ghost kv-prev", "aria-label": "Previous page with text" }, "‹ Previous");
  const next = h("button", { type: "button", class: "ghost kv-next", "aria-label": "Next page with text" }, "Next ›");
  const text = h("div", { class: "kv-body" });
  const region = textRegion(doc, text);
  const figure = h("figure", { class: "kv-page" }, h("div", { class: "kv-page-nav" }, prev, caption, next), img, imgError);
  let at = -1;
  const show = (i) => {
    at = i;
    const page = pages[i];
    const label = locatorLabel(page.locator);
    const hit = i === cited;
    caption.textContent = `${label} (${i + 1} of ${pages.length} with text)`;
    prev.disabled = i === 0;
    next.disabled = i === pages.length - 1;
    imgError.textContent = "";
    img.hidden = false;
    img.alt = `Page ${label.replace(/^p\. /, "")} of ${doc.title || "the document"}, as printed`;
    img.src = `${base}/pages/${page.locator.page_index}`;
    region.classList.toggle("kv-hit", hit);
    region.dataset.hit = String(hit);
    region.setAttribute("aria-label", `Text of ${label}`);
    text.replaceChildren(...marked(page.text, hit ? snippetRanges(page.text, snippet) : []));
    region.scrollTop = 0;
  };
  // The image's failure is a JSON sentence (a changed or removed file): read it to say it.
  img.addEventListener("error", async () => {
    const shown = at;
    let message = "The page could not be drawn.";
    try {
      const res = await fetch(img.src, { credentials: "same-origin" });
      message = (await res.json())?.error?.message || message;
    } catch { /* keep the general sentence */ }
    if (shown !== at) return;
    img.hidden = true;
    imgError.textContent = message;
  });
  prev.addEventListener("click", () => at > 0 && show(at - 1));
  next.addEventListener("click", () => at < pages.length - 1 && show(at + 1));
  show(Math.max(cited, 0));
  const el = h("div", { class: "kv-pages" }, figure, region);
  return { el, target: null, focus: region, found: cited >= 0 };
}
