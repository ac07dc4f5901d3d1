// Model text → HTML: marked for Markdown, highlight.js for code. Nothing here needs a
// DOM, so the same rendering runs in the page (markdown.js, which then checks or
// sanitizes the HTML) and in a worker (web/app/markdown-worker.js, a streaming
// reply's live renders). Its HTML is never trusted as it stands.
import { Marked } from "../vendor/marked/marked.esm.js";
import hljs from "../vendor/highlight/highlight.min.js";
import { mathExtension, MAY_HAVE_MATH } from "./markdown-math.js";

export const INLINE_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp);/i;
// http(s), mail and in-page anchors; everything else (javascript:, vbscript:,
// file:, relative app URLs) loses its href.
export const SAFE_URL = /^(?:https?:|mailto:|#)/i;

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function hostOf(href) {
  try { return new URL(href).host || "link"; } catch { return "link"; }
}

// A closed ```mermaid fence: its code gets the class "mermaid" too, and the page draws
// it (markdown-mermaid.js). One still being written stays code.
const CLOSED_FENCE = /\n {0,3}(`{3,}|~{3,})[ \t]*\n*$/;

const OPTIONS = {
  gfm: true,
  renderer: {
    image({ href, text }) {
      if (INLINE_IMAGE.test(href || "")) return false; // the default renderer; nothing to fetch
      const label = `${text || "image"} (${hostOf(href)})`;
      return `<a class="remote-image" href="${escapeHtml(href || "")}">${escapeHtml(label)}</a>`;
    },
    // A reply's "# Title" must not be a second h1 beside the chat's own title (nor an
    // h2 beside the page's sections): reply headings start at h3.
    heading({ tokens, depth }) {
      const level = Math.min(6, depth + 2);
      return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
    },
    code({ text, lang, raw }) {
      const language = (lang || "").trim().split(/\s+/)[0].toLowerCase();
      if (language === "mermaid") {
        const drawn = CLOSED_FENCE.test(raw || "") ? " mermaid" : "";
        return `<pre><code class="language-mermaid${drawn}">${escapeHtml(text)}\n</code></pre>\n`;
      }
      if (!language || !hljs.getLanguage(language)) return false;
      // Only named languages: auto-detection on every streamed token costs too much.
      const html = hljs.highlight(text, { language, ignoreIllegals: true }).value;
      return `<pre><code class="hljs language-${escapeHtml(language)}">${html}\n</code></pre>\n`;
    },
  },
};
const md = new Marked(OPTIONS);
// Math costs a look at every "$" and "\\": only text that has one is parsed with it.
const mathMd = new Marked(OPTIONS).use(mathExtension);

/** Markdown → HTML, unchecked (markdown.js makes it safe). */
export function toHtml(text) {
  const source = String(text ?? "");
  return (MAY_HAVE_MATH.test(source) ? mathMd : md).parse(source, { async: false });
}

// highlight.js compiles a language's grammar the first time it is used, in one go
// (docs/BENCHMARKS.md). Done in the middle of a streamed reply that is a frozen frame, so the
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

