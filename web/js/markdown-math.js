// Where a reply writes math: $…$, $$…$$, \(…\) and \[…\], found by marked (so code
// spans and code blocks keep their dollars) and written out as placeholders holding the
// TeX as escaped text. KaTeX turns a placeholder into math later, in the page, from its
// text (markdown-katex.js): nothing here is HTML the model wrote. Pure, node-tested.

/** Cheap test for "may hold math": text without it takes the Markdown path it always did. */
export const MAY_HAVE_MATH = /\$|\\[([]/;

// Pandoc's rule for a single $, which keeps prices text ("$5 and $10", "$5/$10"):
// the opening $ has a non-space after it, the closing $ a non-space before it and no
// digit after it.
const SPACE = /\s/;
const DIGIT = /[0-9]/;

/**
 * The inline math starting at src[0], or null: {raw, tex, display}. `$$…$$` and `\[…\]`
 * are display math, `$…$` and `\(…\)` inline. A backslash escapes the next character
 * inside (so `\$` does not close).
 */
export function inlineMath(src) {
  if (src.startsWith("\\(")) return bracketed(src, "\\(", "\\)", false);
  if (src.startsWith("\\[")) return bracketed(src, "\\[", "\\]", true);
  if (src[0] !== "$") return null;
  if (src[1] === "$") {
    const end = closing(src, 2, "$$");
    return end > 2 ? math(src, 2, end, 2, true) : null;
  }
  if (!src[1] || SPACE.test(src[1])) return null;
  for (let i = 1; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") { i++; continue; }
    if (c !== "$") continue;
    if (SPACE.test(src[i - 1])) continue;   // "$5 and $10": a $ after a space never closes
    if (DIGIT.test(src[i + 1] || "")) return null; // "$5/$10": a price, not math
    if (src[i + 1] === "$") return null;    // "$a$$": not a clean close
    return math(src, 1, i, 1, false);
  }
  return null;
}

function closing(src, from, marker) {
  for (let i = from; i < src.length; i++) {
    if (src[i] === "\\") { i++; continue; }
    if (src.startsWith(marker, i)) return i;
  }
  return -1;
}

function bracketed(src, open, close, display) {
  const end = src.indexOf(close, open.length);
  return end > open.length ? math(src, open.length, end, close.length, display) : null;
}

function math(src, from, to, closeLength, display) {
  const tex = src.slice(from, to);
  if (!tex.trim()) return null;
  return { raw: src.slice(0, to + closeLength), tex: tex.trim(), display };
}

// A display block: a line that starts with $$ or \[ and the line that ends it with $$
// or \], no blank line between (a blank line ends a block of Markdown, and the streaming
// renderer cuts there).
const BLOCK = [
  /^ {0,3}\$\$((?:(?!\n[ \t]*\n)[\s\S])+?)\$\$[ \t]*(?:\n+|$)/,
  /^ {0,3}\\\[((?:(?!\n[ \t]*\n)[\s\S])+?)\\\][ \t]*(?:\n+|$)/,
];

/** The display block starting at src[0], or null: {raw, tex}. */
export function blockMath(src) {
  for (const rule of BLOCK) {
    const m = rule.exec(src);
    if (m && m[1].trim()) return { raw: m[0], tex: m[1].trim() };
  }
  return null;
}

function escapeText(text) {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

/**
 * The placeholder for `tex`: its text is the TeX, its class says how to set it. A block
 * is a div; math inside a paragraph a span (a div would end the paragraph).
 */
export function placeholder(tex, display, block = false) {
  const kind = display ? "math-display" : "math-inline";
  return block ? `<div class="${kind}">${escapeText(tex)}</div>\n` : `<span class="${kind}">${escapeText(tex)}</span>`;
}

/** The marked extension (`new Marked().use(mathExtension)`). */
export const mathExtension = {
  extensions: [
    {
      name: "mathBlock",
      level: "block",
      // Where a paragraph must stop to let a block begin: at a line start only (marked
      // passes the text after the paragraph's first character, which is mid-line).
      start(src) {
        const m = src.match(/\n {0,3}(?:\$\$|\\\[)/);
        return m ? m.index + 1 : undefined;
      },
      tokenizer(src) {
        const m = blockMath(src);
        return m ? { type: "mathBlock", raw: m.raw, tex: m.tex } : undefined;
      },
      renderer: ({ tex }) => placeholder(tex, true, true),
    },
    {
      name: "math",
      level: "inline",
      start(src) {
        const m = src.match(/\$|\\[([]/);
        return m ? m.index : undefined;
      },
      tokenizer(src) {
        const m = inlineMath(src);
        return m ? { type: "math", raw: m.raw, tex: m.tex, display: m.display } : undefined;
      },
      renderer: ({ tex, display }) => placeholder(tex, display),
    },
  ],
};
