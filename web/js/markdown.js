// Model text → safe nodes: marked's HTML (markdown-html.js), then a check (or DOMPurify).
//
// Everything a model writes is untrusted: it may quote HTML, links with
// javascript: URLs, or images whose only purpose is to make the app fetch a
// tracking URL. So remote images become a link the person may open (nothing is
// fetched), links open outside the app, and what marked wrote is either only the
// plain markup of Markdown (checked element by element) or goes through DOMPurify,
// which keeps only plain HTML. All the libraries are vendored (web/vendor): no CDN.
import DOMPurify from "../vendor/dompurify/purify.es.js";
import { toHtml, escapeHtml, INLINE_IMAGE, SAFE_URL } from "./markdown-html.js";
import { MAY_HAVE_MATH } from "./markdown-math.js";
import { setMath } from "./markdown-katex.js";
import { setDiagrams } from "./markdown-mermaid.js";

export { toHtml, warmUp } from "./markdown-html.js";

const PURIFY = {
  USE_PROFILES: { html: true }, // no SVG or MathML
  ALLOWED_URI_REGEXP: SAFE_URL,
  // Styles can fetch (background: url(...)); forms and media have no place in a reply.
  // No id or name at all: a model's <a id="x"> or <img name="getElementById"> would be a
  // global (window.x) or shadow a document property (DOM clobbering). SANITIZE_DOM only
  // stops the names the document already has; the app makes no ids in a reply itself.
  FORBID_ATTR: ["style", "srcset", "id", "name"],
  // <input> stays for a task list's checkbox; htmlFragment then keeps nothing of any
  // input but a disabled checkbox and whether it is checked.
  FORBID_TAGS: ["style", "form", "button", "textarea", "select", "video", "audio", "source",
                "picture", "track"],
  ADD_ATTR: ["target"],
  // Attributes that are no address: without this DOMPurify holds their values to
  // ALLOWED_URI_REGEXP too, and a list that begins at 3, a right-aligned column or a task
  // list's checkbox (type="checkbox") lost it.
  ADD_URI_SAFE_ATTR: ["start", "align", "type"],
  // Nodes, not a string: DOMPurify parses the HTML into a document of its own (inert:
  // nothing runs or loads there) and hands its sanitized nodes over. Serializing them
  // and parsing that string again would cost a second parse on every call.
  RETURN_DOM_FRAGMENT: true,
};

// What marked writes for Markdown without raw HTML in it, per element the attributes it
// may carry. HTML of only these (hrefs and image sources as the URL rules allow) is
// used as the browser parsed it; anything else goes through DOMPurify (plainFragment).
// Never id or name (see PURIFY): marked writes neither, so one is always the model's.
const PLAIN_MARKUP = new Map(Object.entries({
  A: ["href", "title", "class"], IMG: ["src", "alt", "title"], CODE: ["class"], SPAN: ["class"],
  OL: ["start"], TH: ["align"], TD: ["align"], DIV: ["class"], INPUT: ["type", "checked", "disabled"],
}).concat(["P", "BR", "HR", "H3", "H4", "H5", "H6", "STRONG", "EM", "DEL", "PRE", "BLOCKQUOTE", "UL", "LI",
  "TABLE", "THEAD", "TBODY", "TR"].map((tag) => [tag, []])));

let ready = false;
function setUp() {
  if (ready) return;
  ready = true;
  // Set once, and no hooks: parsing the configuration on every call, and a hook on
  // every attribute, cost DOMPurify more than the sanitizing itself.
  DOMPurify.setConfig(PURIFY);
}

function plainHtml(text) {
  return `<p>${escapeHtml(text ?? "").replace(/\n/g, "<br>")}</p>`;
}

/**
 * `html` as nodes, when it holds only what marked writes for plain Markdown (no raw
 * HTML, no javascript: link; a task list's disabled checkbox, math placeholders); else null. A <template> parses it
 * where nothing runs or loads, and the check is a lookup per element and attribute:
 * DOMPurify's checks of every node cost several times as much, and a streaming reply
 * renders its open part ten times a second. Exported for tests.
 */
export function plainFragment(html) {
  // Comments and the like: marked escapes every "<" of text and code, so only raw HTML has them.
  if (/<[!?]/.test(html)) return null;
  const template = document.createElement("template");
  template.innerHTML = html;
  for (const el of template.content.querySelectorAll("*")) {
    const allowed = PLAIN_MARKUP.get(el.tagName);
    if (!allowed) return null;
    // Names only: iterating el.attributes makes an Attr node per attribute, and
    // highlighted code is a span with a class per token.
    if (!el.hasAttributes()) continue;
    for (const name of el.getAttributeNames()) {
      if (!allowed.includes(name)) return null;
      if (name === "href" && !SAFE_URL.test(el.getAttribute(name))) return null;
      if (name === "src" && !INLINE_IMAGE.test(el.getAttribute(name))) return null;
    }
    if (el.tagName === "INPUT" && !isTaskBox(el)) return null;
  }
  return template.content;
}

/** A task list's checkbox as marked writes it: a disabled checkbox, nothing more. */
function isTaskBox(el) {
  return el.getAttribute("type") === "checkbox" && el.hasAttribute("disabled");
}

/** A fresh task-list checkbox: of any input in a reply only this, and its checked state, is kept. */
function taskBox(checked) {
  const box = document.createElement("input");
  box.type = "checkbox";
  box.disabled = true;
  if (checked) box.setAttribute("checked", "");
  return box;
}

/** `html` through DOMPurify (exported for tests). */
export function purified(html) {
  setUp();
  return DOMPurify.sanitize(html);
}

/** Markdown → a sanitized DocumentFragment (browser only). */
export function renderFragment(text) {
  return htmlFragment(toHtml(text));
}

/**
 * marked's HTML (toHtml's, here or in the worker) → a sanitized DocumentFragment. Until
 * the nodes are put into the page nothing in them loads, and by then a remote image has
 * lost its address and every link opens outside the app.
 */
export function htmlFragment(html) {
  let fragment = plainFragment(html);
  if (!fragment) {
    fragment = purified(html);
    // plainFragment lets through only inline images; DOMPurify keeps any http(s) one.
    for (const img of fragment.querySelectorAll("img[src]")) {
      if (!INLINE_IMAGE.test(img.getAttribute("src"))) img.removeAttribute("src");
    }
    for (const input of fragment.querySelectorAll("input")) {
      if (isTaskBox(input)) input.replaceWith(taskBox(input.hasAttribute("checked")));
      else input.remove();
    }
  }
  for (const a of fragment.querySelectorAll("a[href]")) {
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
  }
  return fragment;
}

/** Markdown → sanitized HTML string (tests and copying; the page inserts fragments). */
export function renderMarkdown(text) {
  if (!DOMPurify.isSupported) {
    // No DOM to sanitize with (never in a browser): plain text is the safe answer.
    return plainHtml(text);
  }
  const box = document.createElement("div");
  box.append(renderFragment(text));
  return box.innerHTML;
}

/**
 * Math and diagrams in `root`, nodes rendered (and sanitized) from `text`: KaTeX and
 * Mermaid, each loaded the first time it is needed. A cheap look at the text first, so
 * a reply with neither costs no more than it did.
 */
export function finishExtras(root, text) {
  if (MAY_HAVE_MATH.test(text)) setMath(root);
  if (text.includes("mermaid")) setDiagrams(root);
}
