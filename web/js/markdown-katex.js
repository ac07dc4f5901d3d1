// Math placeholders (markdown-math.js) set with KaTeX, in the page, after the reply's
// nodes are checked or sanitized. A placeholder's text is the TeX; KaTeX builds the
// math's nodes itself (createElement, never HTML from a string), with every feature
// that could reach outside the formula off. KaTeX (vendored: web/vendor/katex) and its
// stylesheet load the first time math is shown; until then, and for TeX it cannot set,
// the source shows as text.
const STYLESHEET = new URL("../vendor/katex/katex.min.css", import.meta.url).href;

export const KATEX_OPTIONS = Object.freeze({
  throwOnError: false, // bad TeX shows as its source, in the error colour
  trust: false,        // no \href, \url, \includegraphics, \htmlClass, \htmlData …
  strict: "ignore",
  maxSize: 20,         // em: a \rule{1e9em}{1e9em} stays this size
  maxExpand: 1000,     // a macro that expands itself forever stops here (and shows as text)
  output: "htmlAndMathml", // MathML for screen readers, HTML for the eye
});
// Longer TeX is shown as text: no formula in a reply needs more, and KaTeX's time grows with it.
export const MAX_TEX = 5000;
const CACHE_MAX = 500;

let katex = null;
let loading = null;
const waiting = new Set(); // placeholders to set once KaTeX is in
// "0"/"1" (display) + TeX → the set formula: a streaming reply's open part is drawn
// again ten times a second, and each of its formulas is set once and copied after.
const cache = new Map();

/** Set every math placeholder under `root` (now, or once KaTeX has loaded). */
export function setMath(root) {
  const found = root.querySelectorAll(".math-inline, .math-display");
  if (!found.length) return;
  if (katex) {
    for (const el of found) typeset(el);
    return;
  }
  for (const el of found) waiting.add(el);
  load();
}

function load() {
  if (loading) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = STYLESHEET;
  document.head.append(link);
  loading = import("../vendor/katex/katex.js").then((mod) => {
    katex = mod.default;
    for (const el of waiting) typeset(el);
    waiting.clear();
  }, (err) => {
    console.warn("KaTeX unavailable; math shows as its source.", err);
    waiting.clear();
  });
}

function typeset(el) {
  if (el.classList.contains("math-set")) return;
  const tex = el.textContent;
  if (tex.length > MAX_TEX) return;
  const display = el.classList.contains("math-display");
  const key = (display ? "1" : "0") + tex;
  let made = cache.get(key);
  if (!made) {
    const box = document.createElement("span");
    try {
      katex.render(tex, box, { ...KATEX_OPTIONS, displayMode: display });
    } catch {
      return; // not a TeX error (those show as text): leave the source
    }
    made = box.firstChild;
    if (!made) return;
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(key, made);
  }
  el.replaceChildren(made.cloneNode(true));
  el.classList.add("math-set");
}
