"""A preview page for each previewable language: the document itself, or a page that draws it.

Every page starts with `reporter`, our script that hands the document's uncaught errors to
the app's window as `{"type": "numi-preview-error", "message", "line", "column"}` messages
(docs/PROTOCOL.md, "Document previews"). Markdown and Mermaid are drawn in the page, inside
the preview origin, with the vendored libraries the listener serves under `lib/`.
"""
from __future__ import annotations

import json
import re

PREVIEWABLE = ("html", "svg", "mermaid", "markdown")
MESSAGE_MAX = 2000  # characters of an error's message that reach the app

# One line, so an HTML document's own line numbers stay as the person wrote them. Sent to each
# of the app's two origins (127.0.0.1 and localhost): the browser drops the one the parent is not.
_REPORTER = (
    "(()=>{if(window.parent===window)return;const origins=ORIGINS;"
    "const num=(n)=>Number.isInteger(n)&&n>0?n:null;"
    "const send=(message,line,column)=>{const data={type:'numi-preview-error',"
    "message:String(message).slice(0,MAX),line:num(line),column:num(column)};"
    "for(const o of origins){try{window.parent.postMessage(data,o)}catch(e){}}};"
    "addEventListener('error',(e)=>send(e.message||'Error',e.lineno,e.colno));"
    "addEventListener('unhandledrejection',(e)=>{const r=e.reason;"
    "send(r&&r.message?(r.name?r.name+': ':'')+r.message:String(r),null,null)});"
    "Object.defineProperty(window,'numiPreviewError',{value:send});})();"
)

_DOCTYPE = re.compile(r"\A\ufeff?\s*<!doctype[^>]*>", re.IGNORECASE)

# Our drawing of a Markdown or Mermaid document: the text is data (a JSON string in a
# non-script <script>), Markdown's HTML goes through DOMPurify, a failure is shown in the
# page and reported as an uncaught error is (the reporter's function: reportError would
# say only "Script error.", the error being Mermaid's, a script of another origin).
_DRAW = """
const LIB = LIB_URL;
const source = JSON.parse(document.getElementById("numi-source").textContent);
const main = document.getElementById("numi-preview");
const dark = matchMedia("(prefers-color-scheme: dark)").matches;
let mermaid = null;

function loadMermaid() {
  mermaid ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = LIB + "mermaid.min.js";
    script.onload = () => {
      globalThis.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: dark ? "dark" : "default" });
      resolve(globalThis.mermaid);
    };
    script.onerror = () => reject(new Error("Mermaid could not be loaded."));
    document.head.append(script);
  });
  return mermaid;
}

let diagrams = 0;
async function diagram(text, into) {
  const { svg } = await (await loadMermaid()).render("numi-diagram-" + ++diagrams, text);
  into.innerHTML = svg;
  into.dataset.drawn = "true";
}

function failed(error, into) {
  const note = document.createElement("pre");
  note.className = "numi-error";
  note.textContent = String(error && error.message || error);
  into.replaceChildren(note);
  window.numiPreviewError?.(note.textContent, null, null);
}

async function markdown() {
  const [{ Marked }, { default: DOMPurify }] = await Promise.all([
    import(LIB + "marked.esm.js"), import(LIB + "purify.es.js")]);
  const html = new Marked({ gfm: true }).parse(source);
  main.replaceChildren(DOMPurify.sanitize(html, { RETURN_DOM_FRAGMENT: true }));
  for (const code of main.querySelectorAll("pre > code.language-mermaid")) {
    const figure = document.createElement("figure");
    code.parentElement.replaceWith(figure);
    await diagram(code.textContent, figure).catch((e) => failed(e, figure));
  }
}

(KIND === "mermaid" ? diagram(source, main) : markdown())
  .catch((e) => failed(e, main))
  .finally(() => { document.body.dataset.rendered = "true"; });
"""

_STYLE = (
    ":root{color-scheme:light dark;font:16px/1.55 system-ui,sans-serif}"
    "body{margin:0 auto;padding:1.25rem;max-width:52rem}"
    "pre{overflow:auto;padding:.75rem;background:#8881;border-radius:6px}"
    "code{font-family:ui-monospace,monospace;font-size:.9em}"
    "table{border-collapse:collapse}th,td{border:1px solid #8886;padding:.3rem .6rem}"
    "img,svg{max-width:100%;height:auto}figure{margin:1rem 0}.numi-error{color:#c33;white-space:pre-wrap}"
)


def reporter(app_origins: list[str]) -> str:
    """The error reporter as an inline <script> element, posting to the app's origins."""
    script = _REPORTER.replace("ORIGINS", json.dumps(app_origins)).replace("MAX", str(MESSAGE_MAX))
    return f"<script>{script}</script>"


def _json_data(value) -> str:
    """JSON that cannot end the <script> element holding it."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page(language: str, text: str, lib_url: str, app_origins: list[str]) -> str:
    """The preview page of a document in `language` (one of PREVIEWABLE)."""
    report = reporter(app_origins)
    if language == "html":
        # After the doctype, if there is one: a script before it would put the page in quirks mode.
        found = _DOCTYPE.match(text)
        at = found.end() if found else 0
        return text[:at] + report + text[at:]
    head = f'<!doctype html><html><head><meta charset="utf-8">{report}<style>{_STYLE}</style>'
    if language == "svg":
        # The SVG inline in the page (its scripts run, under the page's CSP), starting on line 1.
        return f"{head}<style>body{{padding:0;max-width:none}}</style></head><body>{text}</body></html>"
    draw = _DRAW.replace("LIB_URL", json.dumps(lib_url)).replace("KIND", json.dumps(language))
    return (f'{head}</head><body><main id="numi-preview"></main>'
            f'<script type="application/json" id="numi-source">{_json_data(text)}</script>'
            f'<script type="module">{draw}</script></body></html>')
