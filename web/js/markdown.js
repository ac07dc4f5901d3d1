// Model text → safe HTML: marked for Markdown, highlight.js for code, DOMPurify last.
//
// Everything a model writes is untrusted: it may quote HTML, links with
// javascript: URLs, or images whose only purpose is to make the app fetch a
// tracking URL. So remote images become a link the person may open (nothing is
// fetched), links open outside the app, and DOMPurify — always the last step —
// keeps only plain HTML. All three libraries are vendored (web/vendor): no CDN.
import { Marked } from "../vendor/marked/marked.esm.js";
import DOMPurify from "../vendor/dompurify/purify.es.js";
import hljs from "../vendor/highlight/highlight.min.js";

const INLINE_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp);/i;
// http(s), mail and in-page anchors; everything else (javascript:, vbscript:,
// file:, relative app URLs) loses its href.
const SAFE_URL = /^(?:https?:|mailto:|#)/i;

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function hostOf(href) {
  try { return new URL(href).host || "link"; } catch { return "link"; }
}

const md = new Marked({
  gfm: true,
  renderer: {
    image({ href, text }) {
      if (INLINE_IMAGE.test(href || "")) return false; // the default renderer; nothing to fetch
      const label = `🖼 ${text || "image"} (${hostOf(href)})`;
      return `<a class="remote-image" href="${escapeHtml(href || "")}">${escapeHtml(label)}</a>`;
    },
    // A reply's "# Title" must not be a second h1 beside the chat's own title (nor an
    // h2 beside the page's sections): reply headings start at h3.
    heading({ tokens, depth }) {
      const level = Math.min(6, depth + 2);
      return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
    },
    code({ text, lang }) {
      const language = (lang || "").trim().split(/\s+/)[0].toLowerCase();
      if (!language || !hljs.getLanguage(language)) return false;
      // Only named languages: auto-detection on every streamed token costs too much.
      const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
      return `<pre><code class="hljs language-${escapeHtml(language)}">${html}\n</code></pre>\n`;
    },
  },
});

const PURIFY = {
  USE_PROFILES: { html: true }, // no SVG or MathML
  ALLOWED_URI_REGEXP: SAFE_URL,
  // Styles can fetch (background: url(...)); forms and media have no place in a reply.
  FORBID_ATTR: ["style", "srcset"],
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "video", "audio", "source",
                "picture", "track"],
  ADD_ATTR: ["target"],
  // Nodes, not a string: DOMPurify parses the HTML into a document of its own (inert:
  // nothing runs or loads there) and hands its sanitized nodes over. Serializing them
  // and parsing that string again would cost a second parse on every call.
  RETURN_DOM_FRAGMENT: true,
};

let ready = false;
function setUp() {
  if (ready) return;
  ready = true;
  // Set once, and no hooks: parsing the configuration on every call, and a hook on
  // every attribute, cost DOMPurify more than the sanitizing itself.
  DOMPurify.setConfig(PURIFY);
}

/** Markdown → HTML before sanitizing (exported for tests only). */
export function toHtml(text) {
  return md.parse(String(text ?? ""), { async: false });
}

function plainHtml(text) {
  return `<p>${escapeHtml(text ?? "").replace(/\n/g, "<br>")}</p>`;
}

/** Markdown → a sanitized DocumentFragment (browser only). */
export function renderFragment(text) {
  setUp();
  // Until the nodes are put into the page nothing in them loads, and by then a remote
  // image has lost its address and every link opens outside the app.
  const fragment = DOMPurify.sanitize(toHtml(text));
  for (const img of fragment.querySelectorAll("img[src]")) {
    if (!INLINE_IMAGE.test(img.getAttribute("src"))) img.removeAttribute("src");
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

// highlight.js compiles a language's grammar the first time it is used: 10-100 ms in
// one go. Done in the middle of a streamed reply that is a frozen frame, so the
// languages models write most are compiled once, one per idle moment, after start.
const COMMON_LANGUAGES = ["python", "javascript", "typescript", "bash", "json", "xml", "css", "sql",
  "yaml", "go", "rust", "java", "c", "cpp", "csharp", "shell", "markdown", "diff"];

/** Compile the common grammars, one per idle callback; `idle(fn)` schedules one. */
export function warmUp(idle) {
  const queue = COMMON_LANGUAGES.filter((l) => hljs.getLanguage(l));
  const next = () => {
    const language = queue.shift();
    if (!language) return;
    hljs.highlight("x", { language, ignoreIllegals: true });
    idle(next);
  };
  idle(next);
}

