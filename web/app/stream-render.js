// Markdown for a reply, in pieces, so a streaming reply costs O(new text) and a long
// one never blocks the page.
//
// The text is cut only where Markdown itself must end a block: after a blank line
// (outside a code fence or a raw HTML block) when the next line starts with
// something that cannot continue what came before (not a space, not a list marker).
// Rendering the pieces one by one then gives the same HTML as rendering the whole
// text at once — except a reference-style link whose definition sits in another
// piece, which stays plain text. So a finished piece is rendered once and kept; only
// the open tail after the last cut is redrawn (the caller batches updates to one per
// animation frame), and a reply shown from history is drawn piece by piece through
// the render queue, newest first, instead of in one long task.

import { fillMarkdown, markdownNodes, renderAway, hasMarkdown, codeBar } from "./markdown-loader.js";
import { later, held } from "./render-queue.js";

const CHECK = 64;    // how many trailing characters prove the new text extends the old
// Finished text goes into pieces: a piece closes at the first cut at least this far
// from its start, so a reply is cut into the same pieces whether it streamed in or
// came from history. Pieces off screen are skipped by layout and paint (CSS).
const PIECE = 2000;
const SYNC = 4000;   // a live update renders up to this much finished text at once
// How often the open tail's Markdown is redrawn. At a cloud model's rates (50–400
// tokens a second) every 100 ms, so formatting keeps up with the words. Past
// FAST_CHARS_PER_S (about 500 tokens a second: a fast local GPU, an inference
// accelerator) a 100 ms redraw already puts lines, not words, on the screen, and
// redrawing half as often costs the page less (docs/BENCHMARKS.md).
const TAIL_MS = 100;
const TAIL_FAST_MS = 200;
const FAST_CHARS_PER_S = 2500;
// Text that can only extend the words before it: no line break and nothing Markdown
// gives a meaning to (emphasis, code, links, HTML, entities, tables, autolinks, math).
const PLAIN = /^[^\n\r`*_~\[\]<>&\\!|:@#$]*$/;
const PLAIN_PARENTS = new Set(["P", "LI", "H1", "H2", "H3", "H4", "H5", "H6", "TD", "TH"]);
const OPEN_FENCE = /^ {0,3}(`{3,}|~{3,})([^\n]*)/;
function closesFence(text, marker) {
  for (const line of text.split("\n").slice(1)) {
    const m = line.match(/^ {0,3}(`{3,}|~{3,})\s*$/);
    if (m && m[1][0] === marker[0] && m[1].length >= marker.length) return true;
  }
  return false;
}

function lastText(root) {
  let node = root.lastChild;
  while (node && node.nodeType === Node.ELEMENT_NODE) node = node.lastChild;
  return node && node.nodeType === Node.TEXT_NODE ? node : null;
}

export class StreamRenderer {
  /**
   * @param onSettled called when a finished text, drawn away (see settling), is all in
   * @param annotate  (nodes, markdown) → nodes: applied to every render before it goes in
   *                  (a reply's citation markers, views/sources.js)
   */
  constructor(container, onSettled = null, annotate = null) {
    this.el = container;
    this.onSettled = onSettled;
    this.annotate = annotate || ((nodes) => nodes);
    this.head = document.createElement("div");
    this.head.className = "md-head";
    this.tail = document.createElement("div");
    this.tail.className = "md-tail";
    this.el.replaceChildren(this.head, this.tail);
    this._reset();
  }

  /**
   * The text is complete but its last render is still away (a worker): what shows
   * lacks its end until onSettled.
   */
  get settling() { return this.final && this.job !== null; }

  /** Annotate all that is drawn again: what `annotate` adds changed (a reply's sources came). */
  reannotate() {
    this.annotate(this.el, null);
  }

  /** How much of the text is shown (or waiting for the next flush). */
  get length() { return this.text.length; }

  /** Show `text`; `done` means it is complete (the whole of it is then kept). */
  update(text, done) {
    if (text === this.text && done === this.final) return;
    // A finished reply that goes on (Continue) is drawn afresh: rare, and simplest.
    if (!this._extends(text) || (this.final && !done)) this._reset();
    const fresh = this.text === "";
    this.text = text;
    this.open = text.slice(this.stable);
    this.final = done;
    // A reply first seen complete (history) is drawn through the queue.
    if (done) return this._flush(fresh);
    this._grown();
  }

  /**
   * The streaming path: `added` follows the text shown so far, and `text` is the whole
   * text with it — the caller's string, kept as it is (this builds no copy of it). Nothing
   * here reads the whole text, only the open part after the last cut: a long reply's text
   * is never copied again per delta (slicing a string built by appends copies all of it).
   */
  append(added, text) {
    if (!added || this.final) return;
    this.text = text;
    this.open += added;
    this._grown();
  }

  _grown() {
    // Plain words go onto the open tail at once. Anything else waits for the next
    // flush, at most every tailMs: a fast model then costs ten parses a second (five
    // past FAST_CHARS_PER_S), each with a sanitizer run's fixed cost, not one per frame.
    if (this.job) return; // the render under way shows what came since when it lands
    if (this._appendPlain(this.open)) return;
    const wait = this.tailMs - (performance.now() - this.tailAt);
    if (wait <= 0) this._flush(false);
    else if (!this.timer) this.timer = setTimeout(() => this._flush(false), wait);
  }

  /** Note a redraw at `now`, and how long the next one waits. */
  _pace(now) {
    const elapsed = this.tailAt > 0 ? now - this.tailAt : Infinity;
    this.tailMs = redrawInterval(this.text.length - this.tailLength, elapsed);
    this.tailAt = now;
    this.tailLength = this.text.length;
  }

  /** Move finished blocks into the head and redraw the open tail. */
  _flush(defer) {
    clearTimeout(this.timer);
    this.timer = null;
    this._pace(performance.now());
    const base = this.stable;
    const cuts = safeCuts(this.open, 0).map((c) => c + base);
    const end = this.final ? this.text.length : cuts.length ? cuts[cuts.length - 1] : base;
    if (!defer && hasMarkdown() && !held() && end - this.stable <= SYNC) {
      this._flushAway(end, cuts);
      return;
    }
    this.job = null; // what it would draw is drawn now
    if (end > this.stable) this._finish(end, cuts, defer);
    this._drawTail();
  }

  /**
   * The live flush: the finished blocks and the open tail are rendered in one go
   * through renderAway (a worker), and put in, together, when that is done. Meanwhile
   * the page shows what it showed; text that arrives is drawn after it lands. The end
   * of a live reply goes the same way: the page's own copy of the Markdown code, unused
   * while a reply streams, has gone cold by then (docs/BENCHMARKS.md) where the
   * worker's is warm.
   */
  _flushAway(end, cuts) {
    if (this.job) return;
    const from = this.stable;
    const open = this.open.slice(end - from);
    const parts = this._parts(end, cuts);
    const fence = open.match(OPEN_FENCE);
    const code = fence && !closesFence(open, fence[1]) ? fence : null;
    if (!parts.length && (code || !open || this._appendPlain(open))) {
      if (code || !open) this._drawTail(); // drawn as it comes (code) or emptied: no Markdown
      return;
    }
    const texts = parts.map((p) => this.open.slice(p.from - from, p.to - from));
    if (open && !code) texts.push(open);
    const job = this.job = {};
    renderAway(texts, (nodes) => {
      if (this.job !== job) return; // reset, or drawn by a final flush since
      this.job = null;
      parts.forEach((p, i) => {
        this._openPiece(p.from).append(this.annotate(nodes[i], texts[i]));
        if (p.closes) this.piece = null;
      });
      this.open = this.open.slice(end - from);
      this.stable = end;
      this.openCode = null;
      this.drawn = null;
      if (code) this._drawOpenCode(open, code);
      else if (!open) this.tail.replaceChildren();
      else {
        this.tail.replaceChildren(this.annotate(nodes[parts.length], open));
        this.tail.classList.remove("plain");
        this._notePlainEnd(open);
      }
      if (!this.final) {
        if (this.open.length > open.length) this._grown();
      } else if (this.stable < this.text.length) this._flush(false);
      else this.onSettled?.();
    });
  }

  _drawTail() {
    const open = this.open;
    if (this._appendPlain(open)) return;
    this.drawn = null;
    if (!open) {
      if (this.tail.firstChild) this.tail.replaceChildren();
      return;
    }
    const fence = open.match(OPEN_FENCE);
    if (fence && hasMarkdown() && !closesFence(open, fence[1])) {
      this._drawOpenCode(open, fence);
      return;
    }
    fillMarkdown(this.tail, open);
    this.annotate(this.tail, open);
    this._notePlainEnd(open);
  }

  /**
   * Where the next plain words may go without parsing again (the tail was just drawn
   * from `open`): its last text, when it ends a block (a paragraph, an item, a heading
   * or a cell), not a link or emphasis.
   */
  _notePlainEnd(open) {
    this.drawn = null;
    const last = lastText(this.tail);
    if (last && PLAIN_PARENTS.has(last.parentNode.nodeName) && !/\s$/.test(open)) {
      this.drawn = { node: last, from: this.stable, length: open.length };
    }
  }

  /**
   * Words without any Markdown in them that extend the last drawn paragraph are added
   * as text: most deltas, at the cost of a string append. Autolinks (www.…) in them
   * show as links at the next full draw, at the latest when the block is finished.
   */
  _appendPlain(open) {
    const d = this.drawn;
    if (!d || d.from !== this.stable || open.length < d.length || !d.node.isConnected) return false;
    const added = open.slice(d.length);
    if (!PLAIN.test(added)) return false;
    if (added) d.node.appendData(added);
    d.length = open.length;
    return true;
  }

  /** A code block still being written: its text as is, highlighted once it is finished. */
  _drawOpenCode(open, fence) {
    const nl = open.indexOf("\n");
    const code = nl === -1 ? "" : open.slice(nl + 1);
    let c = this.openCode;
    if (!c || c.from !== this.stable || !c.el.isConnected) {
      const bar = codeBar((fence[2] || "").trim().split(/\s+/)[0]);
      const el = document.createElement("code");
      const pre = document.createElement("pre");
      pre.append(el);
      const wrap = document.createElement("div");
      wrap.className = "code-wrap";
      wrap.append(bar, pre);
      this.tail.replaceChildren(wrap);
      this.tail.classList.remove("plain");
      c = this.openCode = { el, from: this.stable, shown: "" };
    }
    if (code.startsWith(c.shown)) c.el.append(code.slice(c.shown.length));
    else c.el.textContent = code;
    c.shown = code;
  }

  /** Move text[stable:end] into the head, split into pieces only at `cuts`. */
  _finish(end, cuts, defer) {
    const deferred = defer || end - this.stable > SYNC;
    for (const p of this._parts(end, cuts)) {
      this._add(p.from, p.to, deferred);
      if (p.closes) this.piece = null;
    }
    this.open = this.open.slice(end - this.stable);
    this.stable = end;
  }

  /**
   * text[stable:end] as the pieces it goes into: {from, to, closes}, cut only at `cuts`;
   * a piece closes at the first cut at least PIECE from its start.
   */
  _parts(end, cuts) {
    const parts = [];
    let start = this.stable;
    let pieceStart = this.piece ? this.pieceStart : start;
    if (end <= start) return parts;
    for (const at of cuts.filter((c) => c > start && c < end).concat(end)) {
      const closes = at - pieceStart >= PIECE;
      if (!closes && at !== end) continue;
      parts.push({ from: start, to: at, closes });
      start = at;
      if (closes) pieceStart = at;
    }
    return parts;
  }

  /** The piece text goes into now: the open one, else a new one starting at `from`. */
  _openPiece(from) {
    if (!this.piece) {
      this.piece = document.createElement("div");
      this.piece.className = "md-chunk";
      this.pieceStart = from;
      this.head.append(this.piece);
    }
    return this.piece;
  }

  /** Append text[from:to] to the open piece (opening one if none is). */
  _add(from, to, deferred) {
    this._openPiece(from);
    const raw = this.open.slice(from - this.stable, to - this.stable); // _finish moves stable after
    // Until the Markdown module is in, history waits for it (showing its text).
    deferred ||= held();
    if (!deferred) {
      this.piece.append(this.annotate(markdownNodes(raw), raw));
      this.piece.classList.toggle("plain", !hasMarkdown());
      return;
    }
    // Until its turn comes the text stands as it is, so nothing jumps far.
    const stand = document.createElement("div");
    stand.className = "md-pending";
    stand.textContent = raw;
    this.piece.append(stand);
    const gen = this.gen;
    const piece = this.piece;
    later(() => {
      if (gen !== this.gen || !stand.isConnected) return;
      stand.replaceWith(this.annotate(markdownNodes(raw), raw));
      piece.classList.toggle("plain", !hasMarkdown()); // the module failed: text as written
    });
  }

  _extends(text) {
    const old = this.text;
    if (text.length < old.length) return false;
    const from = Math.max(0, old.length - CHECK);
    return text.slice(from, old.length) === old.slice(from);
  }

  _reset() {
    clearTimeout(this.timer);
    this.timer = null;
    this.job = null; // a render under way is for the old text
    this.drawn = null;
    this.openCode = null;
    this.tailAt = 0;
    this.tailLength = 0;
    this.tailMs = TAIL_MS;
    this.gen = (this.gen || 0) + 1; // pieces still queued for the old text are dropped
    this.head.replaceChildren();
    this.tail.replaceChildren();
    this.text = "";
    this.open = ""; // text[stable:], kept on its own so the streaming path never slices `text`
    this.stable = 0; // the head holds text[0:stable]; a cut, so outside any fence
    this.final = false;
    this.piece = null; // the last piece while it may still grow
    this.pieceStart = 0;
  }
}

/**
 * The wait before the open tail's next Markdown redraw, when the text grew `grew`
 * characters in the `elapsed` ms since the one before (see TAIL_FAST_MS).
 */
export function redrawInterval(grew, elapsed) {
  return grew > 0 && grew * 1000 >= FAST_CHARS_PER_S * elapsed ? TAIL_FAST_MS : TAIL_MS;
}

// A line that opens a raw HTML block running across blank lines, and what ends it.
const RAW_HTML = [
  [/^ {0,3}<(pre|script|style|textarea)(?:\s|>|$)/i, /<\/(?:pre|script|style|textarea)>/i],
  [/^ {0,3}<!--/, /-->/],
];
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// A list item's first line (a thematic break like "- - -" counts too: that only
// costs a cut, never correctness).
const LIST_ITEM = /^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)/;
// After a blank line inside a list, a line starting with one of these may still
// belong to it: an indent (the item's next paragraph) or another item.
const MAY_CONTINUE_LIST = /[\s\-+*0-9]/;

/**
 * Offsets after `from` where the text may be cut into independently rendered
 * pieces (see above), in order. `from` must itself be a cut (or 0). Whether a line
 * starts a cut depends only on the text before it and its own first character, so
 * a cut found in a prefix of the text is a cut of the whole text too.
 */
export function safeCuts(text, from) {
  const cuts = [];
  let fence = null; // the opening marker ("```", "~~~~"…) while inside a fence
  let rawEnd = null; // the end pattern while inside a raw HTML block
  let blank = false; // the previous line was blank (outside fences and raw HTML)
  let list = false; // a list may still be open: only a list can go on past a blank line
  let pos = from;
  while (pos < text.length) {
    const c = text[pos];
    if (blank && !/\s/.test(c) && !(list && MAY_CONTINUE_LIST.test(c))) {
      cuts.push(pos);
      list = false;
    }
    const nl = text.indexOf("\n", pos);
    if (nl === -1) break; // the last line may still grow
    const line = text.slice(pos, nl);
    blank = false;
    if (fence) {
      const m = line.match(FENCE);
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && !line.slice(m.index + m[0].length).trim()) fence = null;
    } else if (rawEnd) {
      if (rawEnd.test(line)) rawEnd = null;
    } else {
      const m = line.match(FENCE);
      if (m) fence = m[1];
      else if (!line.trim()) blank = true;
      else {
        if (LIST_ITEM.test(line)) list = true;
        const html = RAW_HTML.find(([open]) => open.test(line));
        if (html && !html[1].test(line.slice(line.search(/</) + 1))) rawEnd = html[1];
      }
    }
    pos = nl + 1;
  }
  return cuts;
}
