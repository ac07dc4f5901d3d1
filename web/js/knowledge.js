// Knowledge bases and their sources as the page shows them (CONTRACT §8): a locator in words
// ("p. iv", "Tomatoes > Soup", "lines 3–10"), which of a document's chunks a locator names,
// a document's text put back together from its overlapping chunks (one block per page,
// heading or run of lines), where a snippet lies in it, a base's status in words, and the
// paths typed in Settings. Pure, no DOM (node-tested): the viewer is
// views/knowledge-viewer.js, Settings → Knowledge views/knowledge-settings.js.
//
// Everything here comes from the person's files: it is only ever read as strings, and the
// views put it in as text.

// Chunks overlap by ~400 characters (backend/features/knowledge/chunks.py): an overlap is
// looked for in the last this many characters of a chunk.
const OVERLAP_MAX = 2000;
const OVERLAP_MIN = 16;

const str = (v) => (typeof v === "string" ? v : v == null ? "" : String(v));
const int = (v) => (Number.isInteger(v) ? v : null);

/** The lines of a {lines: [a, b]} locator as whole numbers from 1, else null. */
function lineRange(locator) {
  const l = locator?.lines;
  if (!Array.isArray(l) || l.length !== 2) return null;
  const [a, b] = l.map(int);
  if (a === null || b === null || a < 1 || b < a) return null;
  return [a, b];
}

/** What kind of place a locator names: "page", "heading", "lines", or null. */
export function locatorKind(locator) {
  if (!locator || typeof locator !== "object") return null;
  if (int(locator.page_index) !== null || (typeof locator.page === "string" && locator.page)) return "page";
  if (lineRange(locator)) return "lines";
  if (typeof locator.heading === "string") return "heading";
  return null;
}

/** A locator in words: "p. iv", "Tomatoes > Soup" ("Beginning" before the first heading), "lines 3–10", "line 7". */
export function locatorLabel(locator) {
  switch (locatorKind(locator)) {
    case "page": {
      const label = str(locator.page).trim() || String(int(locator.page_index) + 1);
      return `p. ${label}`;
    }
    case "lines": {
      const [a, b] = lineRange(locator);
      return a === b ? `line ${a}` : `lines ${a}–${b}`;
    }
    case "heading":
      return str(locator.heading).trim() || "Beginning";
    default:
      return "";
  }
}

/** Whether a source is a passage of a knowledge base the viewer can open. */
export function isKnowledge(source) {
  return !!source && (source.kind === "knowledge" || source.knowledge_id != null)
    && typeof source.knowledge_id === "string" && source.knowledge_id !== ""
    && Number.isInteger(source.document_id);
}

/** A knowledge source as the list under a reply names it: "manual.pdf · p. iv". */
export function sourcePlace(title, locator) {
  const where = locatorLabel(locator);
  return where ? `${title} · ${where}` : title;
}

/** Whether a chunk's locator is at the place `locator` names (same page, heading, or overlapping lines). */
export function atLocator(chunkLocator, locator) {
  const kind = locatorKind(locator);
  if (!kind || locatorKind(chunkLocator) !== kind) return false;
  if (kind === "page") {
    const want = int(locator.page_index);
    return want !== null ? int(chunkLocator.page_index) === want : str(chunkLocator.page) === str(locator.page);
  }
  if (kind === "lines") {
    const [a, b] = lineRange(locator);
    const [c, d] = lineRange(chunkLocator);
    return c <= b && d >= a;
  }
  return str(chunkLocator.heading) === str(locator.heading);
}

/** The indexes of the chunks at `locator`, in order. */
export function matchingChunks(chunks, locator) {
  const out = [];
  (Array.isArray(chunks) ? chunks : []).forEach((c, i) => { if (atLocator(c?.locator, locator)) out.push(i); });
  return out;
}

/**
 * What of `next` is new after `prev`: consecutive chunks overlap (the next one starts a little
 * before the previous one ends), so the overlap is shown once. Chunks that do not overlap are
 * given whole.
 */
export function newPart(prev, next) {
  const a = str(prev), b = str(next);
  if (!a || !b) return b;
  // The overlap is an end of `a` that `b` begins with; the longest such end near a's end is it.
  // Shorter than OVERLAP_MIN, a match is more likely chance (a word both have) than an overlap.
  if (b.length < OVERLAP_MIN) return b;
  const probe = b.slice(0, OVERLAP_MIN);
  for (let at = a.indexOf(probe, Math.max(0, a.length - OVERLAP_MAX)); at >= 0; at = a.indexOf(probe, at + 1)) {
    const tail = a.length - at;
    if (tail <= b.length && b.startsWith(a.slice(at))) return b.slice(tail);
  }
  return b;
}

/**
 * A document's chunks as blocks to show: one per page (PDF) or heading (Markdown, HTML, Word,
 * EPUB), consecutive chunks of a place joined without their overlap: [{locator, text, chunks: [i…]}].
 * Text and code (`lines` locators) are lines instead (documentLines).
 */
export function documentBlocks(chunks) {
  const list = Array.isArray(chunks) ? chunks : [];
  const blocks = [];
  list.forEach((c, i) => {
    const last = blocks[blocks.length - 1];
    const text = str(c?.text);
    if (last && samePlace(last.locator, c?.locator)) {
      const more = newPart(str(list[last.chunks[last.chunks.length - 1]]?.text), text);
      // No overlap found: the two are shown as paragraphs of their own.
      last.text = more === text ? `${last.text.replace(/\s+$/, "")}\n\n${text}` : last.text + more;
      last.chunks.push(i);
    } else {
      blocks.push({ locator: c?.locator || {}, text, chunks: [i] });
    }
  });
  return blocks;
}

function samePlace(a, b) {
  const kind = locatorKind(a);
  if (!kind || kind !== locatorKind(b)) return false;
  if (kind === "page") return int(a.page_index) === int(b.page_index) && str(a.page) === str(b.page);
  if (kind === "heading") return str(a.heading) === str(b.heading);
  return false;
}

/**
 * A text or code document's lines, put back together from its chunks: [{n, text}] from line 1
 * (a line no chunk covers is ""). Chunks overlap, and one may begin mid-line: each line keeps
 * the longest text any chunk gives it.
 */
export function documentLines(chunks) {
  const lines = [];
  for (const c of Array.isArray(chunks) ? chunks : []) {
    const range = lineRange(c?.locator);
    if (!range) continue;
    str(c.text).split("\n").forEach((piece, k) => {
      const n = range[0] + k;
      if (n > range[1]) return;
      if ((lines[n - 1]?.length ?? -1) < piece.length) lines[n - 1] = piece;
    });
  }
  return Array.from(lines, (text, i) => ({ n: i + 1, text: text ?? "" }));
}

/** Whether the document is read by lines (text, code) rather than by pages or headings. */
export function byLines(chunks) {
  return Array.isArray(chunks) && chunks.length > 0 && chunks.every((c) => locatorKind(c?.locator) === "lines");
}

/** Whether the document is a PDF's pages. */
export function byPages(chunks) {
  return Array.isArray(chunks) && chunks.length > 0 && chunks.some((c) => locatorKind(c?.locator) === "page");
}

/**
 * Where a search snippet lies in `text`: [[start, end]…] of its pieces (a snippet is cut from
 * the chunk with "…" where it skips), the longest first, only pieces of at least 12 characters
 * that are found; [] when none is.
 */
export function snippetRanges(text, snippet) {
  const body = str(text);
  const pieces = str(snippet).split("…").map((p) => p.trim()).filter((p) => p.length >= 12);
  pieces.sort((a, b) => b.length - a.length);
  const out = [];
  for (const p of pieces) {
    const at = body.indexOf(p);
    if (at >= 0 && !out.some(([s, e]) => at < e && at + p.length > s)) out.push([at, at + p.length]);
  }
  return out;
}

/** A base's state in words: "Ready · 3 documents · 42 chunks", "Reading 2 of 5: /x/a.pdf". */
export function baseStatus(base) {
  const docs = Number(base?.documents) || 0;
  const chunks = Number(base?.chunks) || 0;
  const counts = `${docs} document${docs === 1 ? "" : "s"} · ${chunks.toLocaleString("en")} chunk${chunks === 1 ? "" : "s"}`;
  if (base?.status !== "indexing") return `Ready · ${counts}`;
  const p = base.progress;
  if (p && Number.isInteger(p.total) && p.total > 0) {
    return `Reading ${Math.min(p.done, p.total)} of ${p.total}${p.current ? `: ${str(p.current)}` : ""} · ${counts}`;
  }
  return `Looking over its files… · ${counts}`;
}

/**
 * A base's embeddings in words ("" when search by meaning is off): ready, being made (how many
 * chunks so far), or failing with the endpoint's sentence.
 */
export function embeddingsStatus(base) {
  const e = base?.embeddings;
  if (!e || typeof e !== "object") return "";
  const model = str(e.model);
  if (e.status === "error") return `Search by meaning (${model}) is paused: ${str(e.error)} Searching by words meanwhile.`;
  if (e.status === "embedding") {
    const done = Number(e.embedded) || 0;
    const total = Number(base.chunks) || 0;
    return `Embedding with ${model}: ${done.toLocaleString("en")} of ${total.toLocaleString("en")} chunks. Searching by words until done.`;
  }
  return `Searched by words and by meaning (${model}).`;
}

/** Whether the list should be read again soon: a base being read, or being embedded. */
export function busy(bases) {
  return (Array.isArray(bases) ? bases : []).some((b) => b?.status === "indexing" || b?.embeddings?.status === "embedding");
}

/**
 * The paths typed in Settings, one per line: {paths, error}. Blank lines are skipped and
 * repeats dropped; a path must be absolute ("/home/me/notes", "C:\\Notes", "\\\\server\\share").
 */
export function parsePaths(text) {
  const paths = [...new Set(str(text).split(/\r?\n/).map((l) => l.trim()).filter(Boolean))];
  const relative = paths.find((p) => !/^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p));
  if (relative) return { paths, error: `“${relative}” is not a full path: give it from the top, like /home/me/notes.` };
  return { paths, error: "" };
}
