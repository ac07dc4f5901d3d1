// A reply's sources (CONTRACT §8 `sources`) and the `[n]` markers its text cites them
// with, and the `sources` event that brings them (`sourceEvents`, registered into the fold
// by web/js/reducer.js). Pure, no DOM (node-tested): the page's markers and list are
// views/sources.js.
//
// A source comes from a web page or a search backend: every field of it is untrusted
// text. Here it is only ever read as strings; an address becomes a link only when it
// is http(s).

import { mergeSources, updateMessage } from "./chat-state.js";
import { isKnowledge, locatorLabel } from "./knowledge.js";

// `[n]` with n a whole number from 1 (three digits at most: a turn's sources are counted
// in tens). `[1][2]` is two markers; `[1, 2]`, `[0]` and `[01]` are none.
const MARKER = /\[([1-9]\d{0,2})\]/g;

/** Cheap test for "may cite a source": text without it needs no marker pass. */
export const MAY_CITE = /\[[1-9]\d{0,2}\]/;

/**
 * `text` cut at its `[n]` markers whose n `has(n)`: an array of strings (text as it
 * stands) and numbers (a marker for source n), in order, with no empty strings. A
 * marker naming no known source stays text.
 */
export function markerParts(value, has) {
  const text = String(value);
  const parts = [];
  let from = 0;
  for (const m of text.matchAll(MARKER)) {
    const n = Number(m[1]);
    if (!has(n)) continue;
    if (m.index > from) parts.push(text.slice(from, m.index));
    parts.push(n);
    from = m.index + m[0].length;
  }
  if (from < text.length) parts.push(text.slice(from));
  return parts;
}

/** `url` when it is an absolute http(s) address, else null (javascript:, file:, junk). */
export function webUrl(url) {
  if (typeof url !== "string" || !/^https?:\/\//i.test(url.trim())) return null;
  try {
    return new URL(url.trim()).href;
  } catch {
    return null;
  }
}

/** The site a source is on, as a person reads it: the host name without "www.", or "". */
export function siteOf(url) {
  const href = webUrl(url);
  if (!href) return "";
  return new URL(href).hostname.replace(/^www\./i, "");
}

const text = (value) => (typeof value === "string" ? value : value == null ? "" : String(value));

/**
 * A reply's sources as the page shows them: one per n (the last given for an n wins),
 * by n, each {n, title, url (http(s) or null), site, snippet, place?, knowledge?} with only
 * strings in the text fields. A source without a title is named by its site (or "Source n").
 * A passage of a knowledge base (kind "knowledge") has no url: it opens in the app's viewer
 * from `knowledge` {knowledge_id, document_id, locator, path, file_id}, and `place` says where
 * in its file it is ("p. iv"); other sources have neither. A memory (kind "memory") has
 * `memory`, its id, and is named by its whole text.
 */
export function shownSources(sources) {
  const byN = new Map();
  for (const s of Array.isArray(sources) ? sources : []) {
    const n = Number(s?.n);
    if (!Number.isInteger(n) || n < 1) continue;
    const kb = isKnowledge(s);
    const url = kb ? null : webUrl(s.url);
    const site = siteOf(url);
    const title = text(s.title).trim() || site || `Source ${n}`;
    const shown = { n, title, url, site, snippet: text(s.snippet).trim() };
    if (kb) {
      shown.place = locatorLabel(s.locator);
      shown.knowledge = { knowledge_id: s.knowledge_id, document_id: s.document_id, locator: s.locator ?? null,
                          path: typeof s.path === "string" ? s.path : null,
                          file_id: typeof s.file_id === "string" ? s.file_id : null };
    }
    // A memory the request carried (kind "memory"): opens Settings → Memory, named by its text.
    if (!kb && s.kind === "memory" && typeof s.memory_id === "string" && s.memory_id) {
      shown.memory = s.memory_id;
      shown.title = shown.snippet || shown.title;
      shown.snippet = "";
    }
    byN.set(n, shown);
  }
  return [...byN.values()].sort((a, b) => a.n - b.n);
}

/** What a marker says to a screen reader and in its tooltip: "Source 2: Title (site)", "Source 1: Title · p. iv". */
export function markerLabel(source) {
  if (source.place) return `Source ${source.n}: ${source.title} · ${source.place}`;
  return `Source ${source.n}: ${source.title}${source.site && source.site !== source.title ? ` (${source.site})` : ""}`;
}

/**
 * A reply's text as Copy gives it: with the sources its markers cite listed after it
 * ("[2] Title — https://…", by n), so the numbers still lead somewhere once pasted.
 * Text that cites none is given as it is.
 */
export function withCitedSources(value, sources) {
  const body = text(value);
  const byN = new Map(shownSources(sources).map((s) => [s.n, s]));
  if (!byN.size || !MAY_CITE.test(body)) return body;
  const cited = [...new Set(markerParts(body, (n) => byN.has(n)).filter((p) => typeof p === "number"))].sort((a, b) => a - b);
  if (!cited.length) return body;
  const lines = cited.map((n) => {
    const s = byN.get(n);
    const where = s.url || s.knowledge?.path;
    return `[${n}] ${s.title}${s.place ? ` · ${s.place}` : ""}${where ? ` — ${where}` : ""}`;
  });
  return `${body.replace(/\s+$/, "")}\n\nSources:\n${lines.join("\n")}\n`;
}

export const sourceEvents = {
  /**
   * Sources a tool of the turn brought in (CONTRACT §8), numbered per turn: kept on the turn
   * and shown on its newest reply (`message.sources`, as GET …/messages gives them), one per n.
   */
  sources(state, e) {
    if (!state.turn || state.turn.id !== e.turn_id) return state;
    const items = (e.items || []).map((item) => ({ ...item, kind: e.kind }));
    const sources = mergeSources(state.turn.sources || [], items);
    if (sources === state.turn.sources) return state;
    const next = { ...state, turn: { ...state.turn, sources } };
    return updateMessage(next, state.turn.messageId, (m) => ({ ...m, sources }));
  },
};
