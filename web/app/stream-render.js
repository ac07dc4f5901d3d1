// Incremental Markdown for a growing reply, so streaming costs O(new text):
// the text is split at its last blank line outside a code fence. Everything before
// it (the stable head) is rendered once, chunk by chunk, and never touched again;
// only the open tail after it is re-rendered, at most once per animation frame
// (the caller batches updates with requestAnimationFrame).
// When the reply ends, the whole text is rendered once more so constructs split
// across chunks (a loose list, a reference link) come out exactly as in history.

import { fillMarkdown } from "./markdown-loader.js";

const CHECK = 64; // how many trailing characters prove the new text extends the old

export class StreamRenderer {
  constructor(container) {
    this.el = container;
    this.head = document.createElement("div");
    this.head.className = "md-head";
    this.tail = document.createElement("div");
    this.tail.className = "md-tail";
    this.el.replaceChildren(this.head, this.tail);
    this.text = "";
    this.stable = 0; // head covers text[0:stable]; the fence state there is always "closed"
    this.final = false;
  }

  /** Show `text`; `done` renders it whole and freezes it. */
  update(text, done) {
    if (this.final && text === this.text) return;
    if (done) {
      this.text = text;
      this.final = true;
      this.stable = text.length;
      this.tail.replaceChildren();
      fillMarkdown(this.head, text);
      return;
    }
    if (this.final || !this._extends(text)) this._reset();
    this.text = text;
    const cut = lastBlockBoundary(text, this.stable);
    if (cut > this.stable) {
      const chunk = document.createElement("div");
      chunk.className = "md-chunk";
      fillMarkdown(chunk, text.slice(this.stable, cut));
      this.head.append(chunk);
      this.stable = cut;
    }
    const open = text.slice(this.stable);
    if (open) fillMarkdown(this.tail, open);
    else this.tail.replaceChildren();
  }

  _extends(text) {
    const old = this.text;
    if (text.length < old.length) return false;
    const from = Math.max(0, old.length - CHECK);
    return text.slice(from, old.length) === old.slice(from);
  }

  _reset() {
    this.head.replaceChildren();
    this.tail.replaceChildren();
    this.text = "";
    this.stable = 0;
    this.final = false;
  }
}

/**
 * The end of the last blank line after `from` that lies outside a code fence,
 * or `from` when there is none. Only text after `from` is scanned: `from` is
 * always a boundary outside any fence.
 */
export function lastBlockBoundary(text, from) {
  let fence = null; // the opening marker ("```" or "~~~", with its length) while inside
  let best = from;
  let pos = from;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    if (nl === -1) break; // the last line is still being written: never a boundary
    const line = text.slice(pos, nl);
    const m = line.match(/^ {0,3}(`{3,}|~{3,})/);
    if (m) {
      if (!fence) fence = m[1];
      else if (m[1][0] === fence[0] && m[1].length >= fence.length && !line.slice(m.index + m[0].length).trim()) fence = null;
    } else if (!fence && line.trim() === "" && pos > from) {
      best = nl + 1;
    }
    pos = nl + 1;
  }
  return best;
}
