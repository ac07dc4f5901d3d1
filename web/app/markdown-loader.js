// renderFragment lives in web/js/markdown.js (marked + DOMPurify, vendored). It is
// loaded once at start; if it is missing or broken the UI still works and shows
// model text as plain text, which is always safe.
let md = null; // web/js/markdown.js, once loaded

// What js/markdown.js imports, evaluated one task each before it: the three in one task
// would hold the page noticeably (docs/BENCHMARKS.md).
const LIBRARIES = ["../vendor/dompurify/purify.es.js", "../vendor/marked/marked.esm.js",
  "../vendor/highlight/highlight.min.js"];

export async function loadMarkdown() {
  try {
    for (const library of LIBRARIES) await import(library);
    const mod = await import("../js/markdown.js");
    md = mod;
    // Off the critical path: grammars compile when the page has nothing else to do.
    const idle = window.requestIdleCallback ? (fn) => requestIdleCallback(fn, { timeout: 2000 }) : (fn) => setTimeout(fn, 50);
    mod.warmUp(idle);
    // Ready before a reply streams, when that can be: it loads the libraries again.
    idle(startWorker);
  } catch (err) {
    console.warn("Markdown renderer unavailable; showing plain text.", err);
    md = null;
  }
}

export const hasMarkdown = () => md !== null;

/**
 * Put `text` into `el` as sanitized Markdown (or as plain text without a renderer),
 * then finish it: copy buttons on code blocks, links that open outside, and remote
 * images shown as links (the CSP would block them anyway; a person chooses to open).
 */
export function fillMarkdown(el, text) {
  el.replaceChildren(markdownNodes(text));
  el.classList.toggle("plain", !md);
}

/** `text` as sanitized, finished Markdown nodes (a fragment), or a text node without a renderer. */
export function markdownNodes(text) {
  if (!md) return document.createTextNode(text);
  // renderFragment sanitizes with DOMPurify and hands back nodes: the page never
  // parses model output as HTML itself. Decorated before it goes in: no layout yet.
  return decorated(md.renderFragment(text), text);
}

/** `fragment`, rendered from `text`, finished: code bars, links, math, diagrams. */
function decorated(fragment, text) {
  decorate(fragment);
  md.finishExtras(fragment, text);
  return fragment;
}

// A streaming reply renders its open part ten times a second. Those renders' Markdown
// (marked and highlight.js, most of their cost) runs in a worker, so a fast stream
// leaves the page's thread to the page: the page only checks or sanitizes the HTML
// that comes back (markdown.js htmlFragment) and puts it in. The worker starts in an
// idle moment after the libraries load here (or with the first render that wants it);
// until it says it is ready, and for good if it fails (an engine without module
// workers, or one that stops answering), renders run here as before.
let worker = null;
let workerReady = false;
let workerFailed = false;
let jobs = 0;
const waiting = new Map(); // job id → {texts, done, timer}
// A render the worker has not answered in this long is done here, and so is every
// render after it: a reply must never wait on a worker that died without a word.
const PATIENCE_MS = 2000;

function startWorker() {
  if (worker || workerFailed) return;
  try {
    worker = new Worker(new URL("./markdown-worker.js", import.meta.url), { type: "module" });
  } catch {
    workerFailed = true;
    return;
  }
  worker.onmessage = ({ data }) => {
    if (data?.ready) { workerReady = true; return; }
    const job = waiting.get(data?.id);
    if (!job) return;
    waiting.delete(data.id);
    clearTimeout(job.timer);
    const html = Array.isArray(data.html) && data.html.length === job.texts.length ? data.html : null;
    job.done(html ? html.map((h, i) => decorated(md.htmlFragment(h), job.texts[i])) : job.texts.map(markdownNodes));
  };
  worker.onerror = worker.onmessageerror = (e) => {
    e?.preventDefault?.();
    stopWorker();
  };
}

/** Give the worker up for good; what it was asked is rendered here. */
function stopWorker() {
  workerFailed = true;
  workerReady = false;
  worker?.terminate();
  worker = null;
  const pending = [...waiting.values()];
  waiting.clear();
  for (const job of pending) {
    clearTimeout(job.timer);
    job.done(job.texts.map(markdownNodes));
  }
}

/**
 * `texts` as sanitized, finished Markdown nodes (as markdownNodes), handed to
 * `done(fragments)` once rendered: later, from the worker, or at once here.
 */
export function renderAway(texts, done) {
  if (md) startWorker();
  if (!workerReady) {
    done(texts.map(markdownNodes));
    return;
  }
  const id = ++jobs;
  waiting.set(id, { texts, done, timer: setTimeout(stopWorker, PATIENCE_MS) });
  worker.postMessage({ id, texts });
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
    link.textContent = `${img.getAttribute("alt") || "image"} (opens ${safeHost(src)})`;
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
