// ```mermaid blocks drawn as diagrams, in the page, once one is on screen. Mermaid
// (vendored: web/vendor/mermaid, ~5 MB) loads the first time a diagram scrolls into
// view. What it draws is treated like anything else a model made: drawn with
// securityLevel "strict" and text labels (no HTML in them), its SVG sanitized (no
// scripts, links, foreignObject, event attributes) and shown as an <img> of a data:
// URL, where an SVG can neither run nor fetch anything. The source stays one click
// away; a diagram Mermaid cannot draw shows its source with a short note.
import DOMPurify from "../vendor/dompurify/purify.es.js";

const SCRIPT = new URL("../vendor/mermaid/mermaid.min.js", import.meta.url).href;
const CONFIG = {
  startOnLoad: false,
  securityLevel: "strict", // no click callbacks, labels sanitized by Mermaid too
  htmlLabels: false,
  flowchart: { htmlLabels: false },
  suppressErrorRendering: true, // an error is ours to show, not an SVG Mermaid adds to the page
  maxTextSize: 20000,
  maxEdges: 500,
  // What a diagram's own %%{init}%% may not change (Mermaid's defaults, and these).
  secure: ["secure", "securityLevel", "startOnLoad", "maxTextSize", "suppressErrorRendering", "maxEdges",
    "htmlLabels", "themeCSS"],
};
const PURIFY = {
  USE_PROFILES: { svg: true, svgFilters: true },
  FORBID_TAGS: ["a", "foreignObject", "image", "use", "script", "animate", "set", "animatemotion",
    "animatetransform", "animatecolor", "mpath"],
  FORBID_ATTR: ["href", "xlink:href"],
  RETURN_DOM_FRAGMENT: true,
};
const CACHE_MAX = 100;

let purify = null;
let mermaid = null; // a promise of the library, once asked for
let theme = null;
let queue = Promise.resolve(); // Mermaid draws one diagram at a time
let ids = 0;
// theme + source → a promise of {src, width, height} or {error}
const drawings = new Map();
const observed = new Set();
let observer = null;

/** Give each closed ```mermaid block under `root` a diagram, drawn once it is on screen. */
export function setDiagrams(root) {
  for (const code of root.querySelectorAll("pre > code.mermaid")) frame(code);
}

let followingTheme = false;

// Mermaid bakes its colours into the SVG, so a drawn diagram is drawn again when the
// page's theme changes (a picked theme is the root's data-theme; else the system's).
function followTheme() {
  if (followingTheme) return;
  followingTheme = true;
  new MutationObserver(redrawAll).observe(document.documentElement, { attributeFilter: ["data-theme"] });
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", redrawAll);
}

/** Draw every drawn diagram on the page again in the theme the page shows now. */
function redrawAll() {
  const look = currentTheme();
  for (const figure of document.querySelectorAll("figure.mermaid-figure[data-state=drawn]")) {
    if (figure.dataset.theme !== look) redraw(figure);
  }
}

function redraw(figure) {
  const diagram = figure.querySelector(".mermaid-diagram");
  if (!diagram) return;
  // The old picture stays until the new one is in; off-screen ones wait to be seen.
  figure.dataset.state = "redrawing";
  watch(diagram);
}

function frame(code) {
  const source = code.textContent.replace(/\n$/, "");
  const block = code.closest(".code-wrap") || code.parentElement;
  const figure = document.createElement("figure");
  figure.className = "mermaid-figure";
  const diagram = document.createElement("div");
  diagram.className = "mermaid-diagram";
  diagram.textContent = "Diagram";
  const details = document.createElement("details");
  details.className = "mermaid-source";
  const summary = document.createElement("summary");
  summary.textContent = "Diagram source";
  block.replaceWith(figure);
  details.append(summary, block);
  figure.append(diagram, details);
  figure.dataset.state = "waiting";
  diagram.mermaidSource = source;
  followTheme();
  const known = drawings.get(key(source));
  const look = currentTheme();
  if (known) known.then((drawing) => show(figure, drawing, look));
  else watch(diagram);
}

function key(source) {
  return currentTheme() + "\n" + source;
}

function currentTheme() {
  const picked = document.documentElement.dataset.theme;
  if (picked) return picked === "dark" ? "dark" : "default";
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "default";
}

function watch(el) {
  observer ??= new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      observed.delete(entry.target);
      const figure = entry.target.parentElement;
      const look = currentTheme();
      draw(entry.target.mermaidSource).then((drawing) => show(figure, drawing, look));
    }
    // A streaming reply's open part is drawn again and again: let go of the old copies.
    for (const el of observed) {
      if (!el.isConnected) { observer.unobserve(el); observed.delete(el); }
    }
  }, { rootMargin: "200px" });
  observed.add(el);
  observer.observe(el);
}

/** The drawing of `source` (shared by every block showing it). */
function draw(source) {
  const k = key(source);
  let drawing = drawings.get(k);
  if (!drawing) {
    const look = currentTheme();
    drawing = queue = queue.then(() => render(source, look)).catch((err) => ({ error: shortError(err) }));
    if (drawings.size >= CACHE_MAX) drawings.clear();
    drawings.set(k, drawing);
  }
  return drawing;
}

function loadMermaid() {
  mermaid ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = SCRIPT;
    script.onload = () => (globalThis.mermaid ? resolve(globalThis.mermaid) : reject(new Error("Mermaid did not load")));
    script.onerror = () => reject(new Error("Mermaid could not be loaded"));
    document.head.append(script);
  });
  return mermaid;
}

async function render(source, look) {
  const lib = await loadMermaid();
  if (theme !== look) {
    lib.initialize({ ...CONFIG, theme: look });
    theme = look;
  }
  const { svg } = await lib.render(`numi-mermaid-${++ids}`, source);
  return inertImage(svg);
}

/** Mermaid's SVG → {src, width, height}: sanitized, as a data: URL for an <img>. */
export function inertImage(svg) {
  if (!purify) {
    purify = DOMPurify(window);
    purify.setConfig(PURIFY);
  }
  const root = purify.sanitize(svg).querySelector("svg");
  if (!root) throw new Error("Mermaid drew nothing");
  for (const el of [root, ...root.querySelectorAll("*")]) {
    for (const name of el.getAttributeNames()) {
      if (/^on/i.test(name)) el.removeAttribute(name); // DOMPurify drops them; twice is cheap
    }
  }
  // Its own size, so the image has one (Mermaid writes width="100%" and a max-width).
  const box = (root.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
  const width = Math.ceil(box[2]) || 600;
  const height = Math.ceil(box[3]) || 400;
  root.setAttribute("width", String(width));
  root.setAttribute("height", String(height));
  root.removeAttribute("style");
  const text = new XMLSerializer().serializeToString(root);
  return { src: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text), width, height };
}

function shortError(err) {
  const text = String(err?.message || err || "unknown error").split("\n")[0];
  return text.length > 160 ? text.slice(0, 157) + "…" : text;
}

function show(figure, drawing, look) {
  const diagram = figure.querySelector(".mermaid-diagram");
  if (!diagram) return;
  if (drawing.error) {
    figure.dataset.state = "failed";
    const note = document.createElement("p");
    note.className = "mermaid-note";
    note.textContent = `This diagram could not be drawn (${drawing.error}); its source is below.`;
    diagram.replaceWith(note);
    figure.querySelector("details")?.setAttribute("open", "");
    return;
  }
  const img = document.createElement("img");
  img.alt = "Diagram (its source is below)";
  img.src = drawing.src;
  img.width = drawing.width;
  img.height = drawing.height;
  diagram.replaceChildren(img);
  figure.dataset.state = "drawn";
  figure.dataset.theme = look;
  // The theme changed while this was being drawn: draw it again in the new one.
  if (look !== currentTheme()) redraw(figure);
}
