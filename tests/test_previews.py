"""Document previews over the real server (CONTRACT §9, §2's frame-src): the preview route's answers
and refusals, and the preview origin's listener: what it serves, what it refuses, its headers.

The documents come from tests/documents_plugin.py, a stand-in for the documents feature.
"""
from __future__ import annotations

import http.client
import re
import socket
from pathlib import Path

import pytest

from tests.documents_plugin import PreviewDocs
from tests.test_api_security import bearer, raw

VENDOR = Path(__file__).resolve().parent.parent / "web" / "vendor"
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/p/([A-Za-z0-9_-]{32})/doc/([^/]+)/(\d+)")
HTML = "<!DOCTYPE html>\n<html><body><p id=x>hello</p><script>document.title = 'ran'</script></body></html>"


@pytest.fixture
def previews(start_server, tmp_path):
    docs = PreviewDocs(start_server, tmp_path / "documents.json")
    docs.add("page", "html", "<p>first</p>", HTML)
    docs.add("drawing", "svg", '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect/></svg>')
    docs.add("flow", "mermaid", "graph TD; A-->B")
    docs.add("notes", "markdown", "# Notes\n\n</script><script>alert(1)</script>")
    docs.add("code", "python", "print('hi')")
    return docs


class Origin:
    """The preview listener, as an address from the route shows it."""

    def __init__(self, url: str):
        found = URL.fullmatch(url)
        assert found, url
        self.port, self.secret = int(found[1]), found[2]
        self.base = f"http://127.0.0.1:{self.port}"

    def get(self, path: str, method: str = "GET", headers: dict | None = None, host: str | None = None):
        """(status, headers, body) of one request with exactly these headers (plus Host)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request(method, path, headers={"Host": f"127.0.0.1:{self.port}" if host is None else host,
                                           **(headers or {})})
        resp = conn.getresponse()
        result = resp.status, resp.headers, resp.read()
        conn.close()
        return result

    def policy(self, app_port: int) -> str:
        """The preview pages' CSP, exactly as docs/PROTOCOL.md, "Document previews", writes it."""
        return (f"default-src 'none'; script-src 'unsafe-inline' {self.base}/p/{self.secret}/lib/; "
                "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'none'; "
                "form-action 'none'; base-uri 'none'; "
                f"frame-ancestors http://127.0.0.1:{app_port} http://localhost:{app_port}; sandbox allow-scripts")


def assert_hardened(headers, origin: Origin, app_port: int) -> None:
    assert headers["Content-Security-Policy"] == origin.policy(app_port)
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["Cache-Control"] == "no-store"
    assert headers.get("Set-Cookie") is None


# -- the route -------------------------------------------------------------------------------------

def test_each_previewable_language_gets_an_address_on_the_preview_origin(previews):
    origins = set()
    for doc_id in ("page", "drawing", "flow", "notes"):
        url = previews.url(doc_id)
        found = URL.fullmatch(url)
        assert found and found[3] == doc_id, url
        origins.add((found[1], found[2]))
    # One listener and one secret for the run, on a port of its own.
    assert len(origins) == 1
    port = int(origins.pop()[0])
    assert port != previews.server.port
    # The address names a version: the latest, or the one asked for.
    assert previews.url("page").endswith("/doc/page/2")
    assert previews.url("page", 1).endswith("/doc/page/1")


@pytest.mark.parametrize("language", ["python", "javascript", "css", "text"])
def test_another_language_has_no_preview(previews, language):
    previews.add("other", language, "x = 1")
    r = previews.api.get("/api/documents/other/preview")
    assert r.status == 422
    assert r.body["error"]["code"] == "no_preview"
    assert r.body["error"]["message"].startswith(f"A {language} document has no preview; ")


def test_unknown_documents_and_versions_are_404(previews):
    r = previews.api.get("/api/documents/nothing/preview")
    assert r.status == 404 and r.body["error"]["code"] == "not_found"
    assert "No document with that id" in r.body["error"]["message"]
    for version in (3, 0, 999):
        r = previews.api.get(f"/api/documents/page/preview?version={version}")
        assert r.status == 404, (version, r)
        assert r.body["error"]["message"].startswith(f"This document has no version {version}.")
    r = previews.api.get("/api/documents/nothing/preview?version=1")
    assert r.status == 404 and "No document with that id" in r.body["error"]["message"]


@pytest.mark.parametrize("version", ["x", "-1", "1.5", "", "12345678901"])
def test_a_version_that_is_not_a_number_is_422(previews, version):
    r = previews.api.get(f"/api/documents/page/preview?version={version}")
    assert r.status == 422
    assert set(r.body["error"]["fields"]) == {"version"}


def test_the_route_keeps_the_apps_token_host_and_origin_rules(previews):
    server, path = previews.server, "/api/documents/page/preview"
    assert raw(server, "GET", path)[0] == 401
    cookie = {"Cookie": server.session_cookie()}
    assert raw(server, "GET", path, {**cookie, "Sec-Fetch-Site": "same-origin"})[0] == 200
    # A preview page is on another port of 127.0.0.1: same-site, and refused like any other page.
    for site in ("same-site", "cross-site"):
        assert raw(server, "GET", path, {**cookie, "Sec-Fetch-Site": site})[0] == 403
    assert raw(server, "GET", path, bearer(server), host=f"evil.example:{server.port}")[0] == 403
    for origin in ("null", "http://evil.example", f"http://127.0.0.1:{Origin(previews.url('page')).port}"):
        assert raw(server, "POST", path, {**bearer(server), "Origin": origin})[0] == 403, origin
    assert raw(server, "POST", path, {**bearer(server), "Origin": previews.app})[0] == 405


def test_the_apps_pages_may_frame_the_preview_origin_and_no_other(previews):
    origin = Origin(previews.url("page"))
    for path, headers in (("/", {}), ("/api/chats", bearer(previews.server))):
        policy = raw(previews.server, "GET", path, headers)[1]["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["frame-src"] == origin.base
        assert directives["default-src"] == "'self'" and directives["frame-ancestors"] == "'none'"


def test_without_documents_there_is_nothing_to_preview(start_server):
    # No feature of this server provides documents (or the real one holds none yet).
    server = start_server()
    r = server.api().get("/api/documents/anything/preview")
    assert r.status == 404 and r.body["error"]["code"] == "not_found"


# -- the preview origin ----------------------------------------------------------------------------

def test_a_preview_page_carries_the_policy_and_nothing_of_the_app(previews):
    url = previews.url("page")
    origin = Origin(url)
    # What a browser sends it: Numi's sign-in cookie too (cookies ignore ports). It is never used.
    status, headers, body = origin.get(url[len(origin.base):], headers={"Cookie": previews.server.session_cookie()})
    assert status == 200
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert_hardened(headers, origin, previews.server.port)
    assert headers.get("Access-Control-Allow-Origin") is None
    page = body.decode()
    # The document itself, our error reporter just after its doctype.
    assert page.startswith("<!DOCTYPE html><script>") and page.endswith(HTML[len("<!DOCTYPE html>"):])
    assert "numi-preview-error" in page and previews.server.token not in page


def test_svg_markdown_and_mermaid_are_pages_that_draw_them(previews):
    for doc_id, has in (("drawing", '<rect/></svg></body>'), ("flow", 'id="numi-source">"graph TD; A--\\u003eB"'),
                        ("notes", "import(LIB + \"marked.esm.js\")")):
        url = previews.url(doc_id)
        origin = Origin(url)
        status, headers, body = origin.get(url[len(origin.base):])
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert_hardened(headers, origin, previews.server.port)
        assert has in body.decode(), doc_id
    # The Markdown is data in the page, never markup: its </script> cannot end the element holding it.
    assert b"</script><script>alert(1)" not in body


def test_a_preview_address_shows_its_version_while_the_document_lives(previews):
    first = previews.url("page", 1)
    origin = Origin(first)
    previews.add("page", "html", "<p>first</p>", HTML, "<p>third</p>")
    assert origin.get(first[len(origin.base):])[2].endswith(b"<p>first</p>")
    previews.remove("page")
    assert origin.get(first[len(origin.base):])[0] == 404


@pytest.mark.parametrize("host", ["localhost:{port}", "evil.example:{port}", "127.0.0.1:{app}", "127.0.0.1", ""])
def test_the_preview_origin_refuses_other_hosts(previews, host):
    url = previews.url("page")
    origin = Origin(url)
    status, headers, body = origin.get(url[len(origin.base):],
                                       host=host.format(port=origin.port, app=previews.server.port))
    assert status == 403
    assert_hardened(headers, origin, previews.server.port)
    assert b"hello" not in body


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_the_preview_origin_only_reads(previews, method):
    url = previews.url("page")
    origin = Origin(url)
    status, headers, _ = origin.get(url[len(origin.base):], method=method)
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    assert_hardened(headers, origin, previews.server.port)
    status, _, body = origin.get(url[len(origin.base):], method="HEAD")
    assert status == 200 and body == b""


def test_the_preview_origin_serves_nothing_but_previews(previews):
    origin = Origin(previews.url("page"))
    s, token = origin.secret, previews.server.token
    paths = [
        # The app's pages, files and API, with or without the token.
        "/", f"/?token={token}", "/index.html", "/app/main.js", "/vendor/mermaid/mermaid.min.js",
        "/api/health", "/api/chats", "/api/documents/page", "/api/documents/page/preview", "/ws/_app",
        # A preview's address, wrong in one part.
        "/p/wrong-secret/doc/page/1", f"/p/{s[:-1]}/doc/page/1", f"/p/{s}x/doc/page/1", f"/P/{s}/doc/page/1",
        f"/p/{s}", f"/p/{s}/", f"/p/{s}/doc/page", f"/p/{s}/doc/page/x", f"/p/{s}/doc/page/1/more",
        f"/p/{s}/doc//1", f"/p/{s}/doc/nothing/1", f"/p/{s}/doc/page/3", f"/p/{s}/doc/code/1",
        f"/p/{s}/page/1",
        # The libraries: only the vendored three, by name.
        f"/p/{s}/lib/", f"/p/{s}/lib/katex.js", f"/p/{s}/lib/../../../backend/app.py",
        f"/p/{s}/lib/..%2F..%2F..%2Fbackend%2Fapp.py", f"/p/{s}/lib/mermaid.min.js/x",
    ]
    for path in paths:
        status, headers, body = origin.get(path, headers=bearer(previews.server))
        assert status == 404, path
        assert headers["Content-Type"] == "text/plain; charset=utf-8", path
        assert_hardened(headers, origin, previews.server.port)
        assert body == b"There is no preview at this address.\n", path


@pytest.mark.parametrize("name, file", [("marked.esm.js", "marked/marked.esm.js"),
                                        ("purify.es.js", "dompurify/purify.es.js"),
                                        ("mermaid.min.js", "mermaid/mermaid.min.js")])
def test_the_libraries_are_the_vendored_files(previews, name, file):
    origin = Origin(previews.url("page"))
    status, headers, body = origin.get(f"/p/{origin.secret}/lib/{name}")
    assert status == 200
    assert body == (VENDOR / file).read_bytes()
    assert headers["Content-Type"] == "text/javascript; charset=utf-8"
    # A page's import() of a module is a CORS request from its opaque origin.
    assert headers["Access-Control-Allow-Origin"] == "*"
    assert_hardened(headers, origin, previews.server.port)


def test_the_preview_origin_closes_with_the_app(previews):
    origin = Origin(previews.url("page"))
    assert previews.server.terminate() < 10
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", origin.port), timeout=5).close()
