// What is said of a reply when it is read aloud (CONTRACT §14): its Markdown turned into plain
// sentences, handed out one by one as the reply streams. A code block is one "Code block."
// sentence, inline code and links are read as their text, math as "formula"; images, tags,
// emphasis markers, table pipes and heading marks are dropped; think tags are never read.
// A sentence ends at . ! ? … followed by white space (not after "e.g.", "Mr." or an initial;
// "3.14", URLs and file names have no space after their dots), and at the end of a paragraph,
// a list item, a heading or a table row. Long sentences are cut at about MAX_SENTENCE
// characters so no speech request is too long.
//
// Chunking never changes what is said: every decision looks only at text that can no longer
// change (a line's kind once its first characters rule out the others, a construct once it is
// closed or too long to be one), so feeding a text in any pieces yields the sentences feeding
// it whole does. Pure, node-tested (tests/js/speech-text.test.mjs).
import { inlineMath } from "./markdown-math.js";

export const MAX_SENTENCE = 300;
const MIN_CUT = 80; // a cut this early would leave a stub: look for a later one
export const CODE_BLOCK = "Code block.";
export const FORMULA_BLOCK = "Formula.";
const FORMULA = "formula";

// "Mr. Smith", "e.g. this": a dot after these is not the end of a sentence.
const ABBREVIATIONS = new Set(["mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "cf", "approx", "fig",
  "e.g", "i.e", "al", "inc", "ltd", "mt", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
  "nov", "dec", "vol", "ch", "sec", "pp", "resp"]);
// How far a construct may reach: an opener with no close within this many characters is text.
const WINDOW = { code: 1000, link: 500, tag: 200, comment: 2000, math: 200, display: 1000 };
const THINK_OPEN = /<(think|thinking)>/i;
const THINK_CLOSE = /<\/(think|thinking)>/i;

/** The sentences of a growing reply: feed(text so far) → new ones; finish() → the rest. */
export class SpeechText {
  constructor() {
    this.reset();
  }

  reset() {
    this.text = "";
    this.given = 0; // sentences handed out
    // Where the text is settled: parsing starts again there, in that state, with `count` sentences before it.
    this.base = { offset: 0, state: freshState(), count: 0 };
  }

  /** The sentences complete in `text` (the reply so far) not handed out yet. */
  feed(text) {
    return this._take(text, false);
  }

  /** Every sentence not handed out yet, the reply being complete (`text`, or the last fed). */
  finish(text = this.text) {
    return this._take(text, true);
  }

  _take(text, final) {
    // A reply started over (not a continuation of what was settled): read it afresh. Per token, so
    // only the end of what was read is compared, not the whole reply (a streaming reply only grows).
    if (!continues(text, this.text)) this.reset();
    this.text = text;
    const { sentences, commit } = parse(text, this.base, final);
    this.base = commit;
    const first = commit.first; // the global index of sentences[0]
    const out = sentences.slice(Math.max(0, this.given - first));
    this.given = Math.max(this.given, first + sentences.length);
    return out;
  }
}

const SEAM = 64; // characters compared where a growing text must go on from the one read before

function continues(text, before) {
  if (text.length < before.length) return false;
  const from = Math.max(0, before.length - SEAM);
  return text.startsWith(before.slice(from), from) && text.startsWith(before.slice(0, Math.min(SEAM, before.length)));
}

/** All the sentences of a whole text (the same as feeding it and finishing). */
export function speechSentences(text) {
  return new SpeechText().finish(text);
}

function freshState() {
  return { fence: null, think: false, math: null, code: false, list: false, block: null };
}

function copyState(s) {
  return { ...s, block: s.block ? { ...s.block } : null };
}

/**
 * Parse from base.offset: the sentences found there on (the first being sentence number
 * base.count of the text), and the new settled point (after the last whole line that left
 * no block open).
 */
function parse(text, base, final) {
  const st = copyState(base.state);
  const out = [];
  let commit = { offset: base.offset, state: base.state, count: base.count, first: base.count };
  let pos = base.offset;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(pos, end);
    if (nl < 0 && !final) {
      partialLine(line, st, out);
      break;
    }
    wholeLine(line, st, out);
    pos = nl < 0 ? text.length : nl + 1;
    if (nl >= 0 && !st.block) commit = { offset: pos, state: copyState(st), count: base.count + out.length };
  }
  if (final) endBlock(st, out);
  else if (st.block) out.push(...blockSentences(st.block, false));
  commit.first = base.count;
  return { sentences: out, commit };
}

// --- lines ---------------------------------------------------------------------------------

const BLANK = /^\s*$/;
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const RULE = /^ {0,3}(?:(?:[-*_][ \t]*){3,}|-+|=+)[ \t]*$/;
const ITEM = /^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const QUOTE = /^ {0,3}>[ \t]?/;
const TABLE_ROW = /^\s*\|/;
const TABLE_RULE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
const MATH_OPEN = /^\s*(\$\$|\\\[)/;
// A line's start that could still become more than one kind of line: wait for more of it.
const UNDECIDED = [/^\s*$/, /^\s*(?:[-*_=+][ \t]*)*$/, /^\s*\d{1,9}[.)]?$/, /^ {0,3}#{1,6}$/, /^\s*(`{1,2}|~{1,2})$/,
  /^\s*(`{3,}|~{3,})/, /^\s*\$\$?$/, /^\s*\\\[?$/, /^\s*\$\$/, /^\s*\\\[/, /^\s*\|/, /^ {0,3}>\s*$/];

const indentOf = (line) => {
  let n = 0;
  for (const c of line) {
    if (c === " ") n += 1;
    else if (c === "\t") n += 4 - (n % 4);
    else break;
  }
  return n;
};

/** The visible part of a line with think tags cut out (null: nothing of it shows); moves st.think. */
function unthink(line, st) {
  let rest = line;
  let shown = "";
  let hidden = false;
  for (;;) {
    if (st.think) {
      const close = THINK_CLOSE.exec(rest);
      hidden = true;
      if (!close) return shown.trim() ? shown : null;
      st.think = false;
      rest = rest.slice(close.index + close[0].length);
      continue;
    }
    const open = THINK_OPEN.exec(rest);
    if (!open) return hidden && !(shown + rest).trim() ? null : shown + rest;
    shown += rest.slice(0, open.index);
    rest = rest.slice(open.index + open[0].length);
    st.think = true;
  }
}

/** A whole line: its block ends, continues or starts; code and math become their sentence. */
function wholeLine(raw, st, out) {
  const line = unthink(raw, st);
  if (line === null) return;
  if (st.fence) {
    const m = FENCE.exec(line);
    if (m && m[1][0] === st.fence.ch && m[1].length >= st.fence.len && !m[2].trim()) st.fence = null;
    return;
  }
  if (st.math) {
    if (!BLANK.test(line)) {
      if (line.includes(st.math)) st.math = null;
      return;
    }
    st.math = null; // a blank line ends any block (markdown-math.js)
  }
  if (st.code) {
    if (BLANK.test(line) || indentOf(line) >= 4) return;
    st.code = false;
  }
  if (BLANK.test(line)) {
    endBlock(st, out);
    return;
  }
  const quote = QUOTE.exec(line);
  if (quote) { wholeLine(line.slice(quote[0].length), st, out); return; }
  const fence = FENCE.exec(line);
  if (fence && !(fence[1][0] === "`" && fence[2].includes("`"))) {
    endBlock(st, out);
    st.fence = { ch: fence[1][0], len: fence[1].length };
    out.push(CODE_BLOCK);
    return;
  }
  if (indentOf(line) >= 4 && !st.block && !st.list) {
    st.code = true;
    out.push(CODE_BLOCK);
    return;
  }
  const math = MATH_OPEN.exec(line);
  if (math) {
    endBlock(st, out);
    const close = math[1] === "$$" ? "$$" : "\\]";
    if (!line.slice(math.index + math[0].length).includes(close)) st.math = close;
    out.push(FORMULA_BLOCK);
    return;
  }
  if (TABLE_ROW.test(line)) {
    endBlock(st, out);
    st.list = false;
    if (!TABLE_RULE.test(line)) {
      const cells = splitRow(line).map((c) => cleanInline(c, true).text.trim()).filter(Boolean);
      if (cells.length) out.push(...finalSentences(cells.join(", ")));
    }
    return;
  }
  lineOfText(line, st, out, true);
}

/** A heading, a rule, a list item or text: the block it ends, starts or continues. */
function lineOfText(line, st, out, whole) {
  if (whole && RULE.test(line)) { endBlock(st, out); return; }
  const heading = HEADING.exec(line);
  if (heading) {
    endBlock(st, out);
    st.list = false;
    st.block = { kind: "heading", raw: (heading[2] || "").replace(/[ \t]+#+$/, "").replace(/^#+$/, "") };
    if (whole) endBlock(st, out);
    return;
  }
  const item = ITEM.exec(line);
  if (item) {
    endBlock(st, out);
    st.list = true;
    st.block = { kind: "item", raw: "" };
    line = item[1] || "";
  } else if (!st.block) {
    // A line after a list and a blank line, not indented, leaves the list.
    if (indentOf(line) === 0) st.list = false;
    st.block = { kind: "text", raw: "" };
  }
  st.block.raw += whole ? `${line}\n` : line;
}

/** The last line, still arriving: taken only once its kind can no longer change. */
function partialLine(raw, st, out) {
  const line = unthink(raw, st);
  if (line === null || st.fence || st.math) return;
  if (st.code && (BLANK.test(line) || indentOf(line) >= 4)) return;
  if (st.code) st.code = false;
  const quote = QUOTE.exec(line);
  const body = quote ? line.slice(quote[0].length) : line;
  if (UNDECIDED.some((r) => r.test(body))) return;
  if (quote && QUOTE.test(body)) { partialLine(body, st, out); return; }
  if (indentOf(body) >= 4 && !st.block && !st.list) {
    st.code = true;
    out.push(CODE_BLOCK);
    return;
  }
  lineOfText(body, st, out, false);
}

function splitRow(line) {
  const cells = [];
  let cell = "";
  const s = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "");
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "\\" && s[i + 1] === "|") { cell += "|"; i++; } else if (s[i] === "|") { cells.push(cell); cell = ""; } else cell += s[i];
  }
  cells.push(cell);
  return cells;
}

function endBlock(st, out) {
  if (!st.block) return;
  out.push(...blockSentences(st.block, true));
  st.block = null;
}

// --- sentences -------------------------------------------------------------------------------

/** A block's sentences: all of them when it ended, else those that can no longer change. */
function blockSentences(block, ended) {
  let raw = block.raw;
  if (!ended) {
    // The last word may still grow (a URL, an emphasis mark): only text up to a space counts.
    const space = Math.max(raw.lastIndexOf(" "), raw.lastIndexOf("\n"), raw.lastIndexOf("\t"));
    raw = raw.slice(0, space + 1);
  }
  const text = cleanInline(raw, ended).text.replace(/\s+/g, " ").replace(/^ /, "");
  return sentencesOf(text, ended);
}

function finalSentences(text) {
  return sentencesOf(text.replace(/\s+/g, " ").trim(), true);
}

const TERMINATOR = /([.!?…]+)(["'”’»)\]]*)(?=\s)/g;
const SAYABLE = /[\p{L}\p{N}]/u;

function sentencesOf(text, complete) {
  const found = [];
  let start = 0;
  TERMINATOR.lastIndex = 0;
  for (let m; (m = TERMINATOR.exec(text));) {
    if (m[1] === "." && !endsSentence(text.slice(start, m.index))) continue;
    found.push(text.slice(start, m.index + m[0].length).trim());
    start = m.index + m[0].length;
  }
  let rest = text.slice(start).replace(/^\s+/, "");
  const out = [];
  for (const s of found) out.push(...cutLong(s));
  if (complete) {
    out.push(...cutLong(rest.trim()));
  } else {
    // A long sentence still being written: its first parts can go already.
    while (rest.length > MAX_SENTENCE + 1) {
      const [head, tail] = cut(rest);
      out.push(head);
      rest = tail;
    }
  }
  // A dropped image or marker leaves "and ." behind: the mark goes back to its word.
  return out.filter((s) => SAYABLE.test(s)).map((s) => s.replace(/ +([.,!?;:…])/g, "$1"));
}

/** Whether a "." after `before` ends a sentence (not an abbreviation, nor an initial). */
function endsSentence(before) {
  const word = /([\p{L}.]+)$/u.exec(before)?.[1];
  if (!word) return true;
  const w = word.toLowerCase();
  if (ABBREVIATIONS.has(w)) return false;
  if (/^\p{Lu}$/u.test(word)) return false; // "J. R. R. Tolkien"
  if (/^(\p{L}\.)+\p{L}$/u.test(word)) return false; // "e.g", "U.S" before the last dot
  return true;
}

function cutLong(s) {
  const out = [];
  let rest = s;
  while (rest.length > MAX_SENTENCE) {
    const [head, tail] = cut(rest);
    out.push(head);
    rest = tail;
  }
  if (rest) out.push(rest);
  return out;
}

/** A long sentence's first part (after a comma, else a space, near MAX_SENTENCE) and the rest. */
function cut(s) {
  const head = s.slice(0, MAX_SENTENCE + 1);
  let at = head.lastIndexOf(", ");
  if (at >= MIN_CUT) return [s.slice(0, at + 1), s.slice(at + 2).replace(/^\s+/, "")];
  at = head.lastIndexOf(" ");
  if (at >= MIN_CUT) return [s.slice(0, at), s.slice(at + 1).replace(/^\s+/, "")];
  return [s.slice(0, MAX_SENTENCE), s.slice(MAX_SENTENCE)];
}

// --- inline Markdown -----------------------------------------------------------------------------

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
const WORD = /[\p{L}\p{N}]/u;
const PUNCT = /[!-/:-@[-`{-~]/;
const URL_START = /^(?:https?:\/\/|www\.)[^\s<>"'`]+/i;
const TAG = /^<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/;
const AUTOLINK = /^<((?:https?|mailto):[^\s<>]*)>/i;
const LINK = /^\[([^[\]]*)\](?:\(\s*<?[^()\s<>]*(?:\([^()\s]*\)[^()\s]*)*>?(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)|\[[^[\]]*\])?/;

/**
 * Markdown inline text → what is said. `complete`: the text is all there. Else an opener whose
 * close may still come (within its window) stops the text there: {text, stopped}.
 */
export function cleanInline(src, complete = true) {
  let out = "";
  let i = 0;
  const n = src.length;
  // A construct at i that needs `window` characters to be decided: the match, or "wait", or null (text).
  const decide = (match, window) => {
    if (complete || n - i >= window) return match || null;
    if (match && i + match.length < n) return match;
    return "wait";
  };
  // "[text]" before "(" or "[" may still become a link whose address is on its way.
  const linkEnd = (m) => (m && m[0].length === m[1].length + 2 && "([".includes(src[i + m[0].length + (c0() === "!" ? 1 : 0)] || "x")
    && !complete && n - i < WINDOW.link ? null : m);
  const c0 = () => src[i];
  while (i < n) {
    const c = src[i];
    const rest = src.slice(i);
    if (c === "\\") {
      const math = rest[1] === "(" || rest[1] === "[" ? inlineMath(rest.slice(0, WINDOW.display)) : null;
      const got = decide(math?.raw, WINDOW.display);
      if (got === "wait") return { text: out, stopped: true };
      if (got) { out += ` ${FORMULA} `; i += got.length; continue; }
      if (PUNCT.test(rest[1] || "")) { out += rest[1]; i += 2; continue; }
      if (!complete && i + 1 >= n) return { text: out, stopped: true };
      out += c; i++; continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(rest)[0];
      const close = closingRun(src, i + run.length, run.length, WINDOW.code);
      const match = close >= 0 ? src.slice(i, close + run.length) : null;
      const got = decide(match, WINDOW.code + run.length);
      if (got === "wait") return { text: out, stopped: true };
      if (got) { out += got.slice(run.length, got.length - run.length).replace(/^ (.*) $/s, "$1"); i += got.length; continue; }
      i += run.length; continue; // stray backticks are not said
    }
    if (c === "!" && src[i + 1] === "[") {
      const m = linkEnd(LINK.exec(rest.slice(1, WINDOW.link)));
      const got = decide(m && m[0].length > m[1].length + 2 ? `!${m[0]}` : null, WINDOW.link);
      if (got === "wait") return { text: out, stopped: true };
      if (got) { i += got.length; continue; } // an image is not said
      out += c; i++; continue;
    }
    if (c === "[") {
      const m = linkEnd(LINK.exec(rest.slice(0, WINDOW.link)));
      const got = decide(m?.[0], WINDOW.link);
      if (got === "wait") return { text: out, stopped: true };
      if (got) {
        const label = m[1];
        // [3] citation markers and [^1] footnotes are not said; a link is its text.
        if (!/^\^|^\d+$/.test(label.trim()) || got.length > label.length + 2) out += cleanInline(label, true).text;
        i += got.length;
        continue;
      }
      out += c; i++; continue;
    }
    if (c === "<") {
      if (rest.startsWith("<!--")) {
        const end = rest.indexOf("-->", 4);
        const got = decide(end >= 0 && end < WINDOW.comment ? rest.slice(0, end + 3) : null, WINDOW.comment);
        if (got === "wait") return { text: out, stopped: true };
        if (got) { i += got.length; continue; }
      }
      const auto = AUTOLINK.exec(rest.slice(0, WINDOW.tag));
      const tag = auto || TAG.exec(rest.slice(0, WINDOW.tag));
      const got = decide(tag?.[0], WINDOW.tag);
      if (got === "wait") return { text: out, stopped: true };
      if (got) { out += auto ? ` ${host(auto[1])} ` : " "; i += got.length; continue; }
      out += c; i++; continue;
    }
    if (c === "$") {
      // "$5": a price, never math here (it would hold a paragraph back to its end).
      if (/[0-9]/.test(src[i + 1] || "") || (!complete && i + 1 >= n)) {
        if (!complete && i + 1 >= n) return { text: out, stopped: true };
        out += c; i++; continue;
      }
      const math = inlineMath(rest.slice(0, rest[1] === "$" ? WINDOW.display : WINDOW.math));
      const got = decide(math?.raw, rest[1] === "$" ? WINDOW.display : WINDOW.math);
      if (got === "wait") return { text: out, stopped: true };
      if (got) { out += ` ${FORMULA} `; i += got.length; continue; }
      out += c; i++; continue;
    }
    if ((c === "h" || c === "H" || c === "w" || c === "W") && !WORD.test(src[i - 1] || "")) {
      const url = URL_START.exec(rest);
      if (url) {
        const u = url[0].replace(/[.,;:!?)\]'"”’]+$/, "");
        out += host(u);
        i += u.length;
        continue;
      }
    }
    if (c === "*") { i++; continue; }
    if (c === "~" && src[i + 1] === "~") { i += 2; continue; }
    if (c === "_") {
      const run = /^_+/.exec(rest)[0];
      const inWord = WORD.test(src[i - 1] || "") && WORD.test(src[i + run.length] || "");
      if (!inWord) { i += run.length; continue; }
      out += run; i += run.length; continue;
    }
    if (c === "&") {
      const m = /^&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/i.exec(rest);
      const ch = m && entity(m[1]);
      if (ch) { out += ch; i += m[0].length; continue; }
    }
    out += c;
    i++;
  }
  return { text: out, stopped: false };
}

/** The index of the closing run of exactly `len` backticks from `from` within `window`, or -1. */
function closingRun(src, from, len, window) {
  const limit = Math.min(src.length, from + window);
  for (let i = from; i < limit; i++) {
    if (src[i] !== "`") continue;
    let j = i;
    while (j < src.length && src[j] === "`") j++;
    if (j - i === len && j <= limit) return i;
    i = j - 1;
  }
  return -1;
}

function entity(name) {
  if (name[0] === "#") {
    const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : null;
  }
  return ENTITIES[name.toLowerCase()] ?? null;
}

/** What is said of an address: its host ("docs.python.org"), not every slash of it. */
function host(url) {
  const m = /^(?:[a-z]+:\/\/)?(?:[^@/\s]*@)?([^/?#:\s]+)/i.exec(url.replace(/^mailto:/i, ""));
  return (m?.[1] || url).replace(/^www\./i, "");
}
