// renderFragment lives in web/js/markdown.js (marked + DOMPurify, vendored). It is
// loaded once at start; if it is missing or broken the UI still works and shows
// model text as plain text, which is always safe.
let render = null;

// What js/markdown.js imports, evaluated one task each before it: highlight.js alone
// takes ~30 ms to evaluate, and the three in one task would hold the page for ~60.
const LIBRARIES = ["../vendor/dompurify/purify.es.js", "../vendor/marked/marked.esm.js",
  "../vendor/highlight/highlight.min.js"];

export async function loadMarkdown() {
  try {
    for (const library of LIBRARIES) await import(library);
    const mod = await import("../js/markdown.js");
    render = typeof mod.renderFragment === "function" ? mod.renderFragment : null;
    // Off the critical path: grammars compile when the page has nothing else to do.
    const idle = window.requestIdleCallback ? (fn) => requestIdleCallback(fn, { timeout: 2000 }) : (fn) => setTimeout(fn, 50);
    mod.warmUp?.(idle);
  } catch (err) {
    console.warn("Markdown renderer unavailable; showing plain text.", err);
    render = null;
  }
}

export const hasMarkdown = () => render !== null;

/**
 * Put `text` into `el` as sanitized Markdown (or as plain text without a renderer),
 * then finish it: copy buttons on code blocks, links that open outside, and remote
 * images shown as links (the CSP would block them anyway; a person chooses to open).
 */
export function fillMarkdown(el, text) {
  el.replaceChildren(markdownNodes(text));
  el.classList.toggle("plain", !render);
}

/** `text` as sanitized, finished Markdown nodes (a fragment), or a text node without a renderer. */
export function markdownNodes(text) {
  if (!render) return document.createTextNode(text);
  // renderFragment sanitizes with DOMPurify and hands back nodes: the page never
  // parses model output as HTML itself. Decorated before it goes in: no layout yet.
  const fragment = render(text);
  decorate(fragment);
  return fragment;
}

/** A code block's bar: its language and a Copy button (shortcuts.js handles the click). */
export function codeBar(lang) {
  const bar = document.createElement("div");
  bar.className = "code-bar";
  const label = document.createElement("span");
  label.textContent = lang || "code";
  const btn = document.createElement("button");
  btn.type = "button";
  btn.className = "code-copy";
  btn.textContent = "Copy";
  btn.setAttribute("aria-label", "Copy code");
  bar.append(label, btn);
  return bar;
}

function decorate(root) {
  for (const img of root.querySelectorAll("img")) {
    const src = img.getAttribute("src") || "";
    if (/^(data:|blob:)/i.test(src)) continue;
    // The sanitizer dropped this image's address (a raw remote <img>): nothing to
    // open, and an empty href would point at this page itself.
    if (!src.trim()) { img.replaceWith(img.getAttribute("alt") || ""); continue; }
    const link = document.createElement("a");
    link.href = src;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    link.className = "remote-image";
    link.textContent = `🖼 ${img.getAttribute("alt") || "image"} (opens ${safeHost(src)})`;
    img.replaceWith(link);
  }
  for (const pre of root.querySelectorAll("pre")) {
    if (pre.parentElement?.classList.contains("code-wrap")) continue;
    const wrap = document.createElement("div");
    wrap.className = "code-wrap";
    const lang = (pre.querySelector("code")?.className.match(/language-([\w+-]+)/) || [])[1];
    const bar = codeBar(lang);
    pre.replaceWith(wrap);
    wrap.append(bar, pre);
  }
}

function safeHost(src) {
  try { return new URL(src, location.href).host || "link"; } catch { return "link"; }
}
