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
    code({ text, lang }) {
      const language = (lang || "").trim().split(/\s+/)[0].toLowerCase();
      if (!language || !hljs.getLanguage(language)) return false;
      // Only named languages: auto-detection on every streamed token costs too much.
      const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
      return `<pre><code class="hljs language-${escapeHtml(language)}">${html}\n</code></pre>\n`;
    },
  },
});

let hooked = false;
function hook() {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("uponSanitizeAttribute", (node, data) => {
    // Raw <img> in model HTML: an inline data image may stay, a remote one is never fetched.
    if (node.nodeName === "IMG" && data.attrName === "src" && !INLINE_IMAGE.test(data.attrValue)) {
      data.keepAttr = false;
    }
  });
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "A" && node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

const PURIFY = {
  USE_PROFILES: { html: true }, // no SVG or MathML
  ALLOWED_URI_REGEXP: SAFE_URL,
  // Styles can fetch (background: url(...)); forms and media have no place in a reply.
  FORBID_ATTR: ["style", "srcset"],
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "video", "audio", "source",
                "picture", "track"],
  ADD_ATTR: ["target"],
};

/** Markdown → HTML before sanitizing (exported for tests only). */
export function toHtml(text) {
  return md.parse(String(text ?? ""), { async: false });
}

/** Markdown → sanitized HTML string, safe for innerHTML. */
export function renderMarkdown(text) {
  if (!DOMPurify.isSupported) {
    // No DOM to sanitize with (never in a browser): plain text is the safe answer.
    return `<p>${escapeHtml(text ?? "").replace(/\n/g, "<br>")}</p>`;
  }
  hook();
  return DOMPurify.sanitize(toHtml(text), PURIFY);
}
