"""web_fetch against a real HTTP server on 127.0.0.1: text extraction, caps, redirects, errors, Stop.

The test sites are on this computer, which web_fetch reads only where the person allowed it:
their origins are in TRUSTED, as Settings → Web fetch would list them (tests/test_fetch_private.py
covers the refusals)."""
import contextlib
import datetime
import gzip
import ipaddress
import json
import socket
import ssl
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from backend.core.cancel import CancelToken
from backend.core.tools import execute
from backend.core.types import ToolCall
from backend.tools import fetch as fetch_module
from backend.tools.fetch import fetch_tool
from backend.tools.fetch_guard import origin
from backend.tools.html_text import decode, html_to_text, sniff_charset

PAGE = b"""<!doctype html>
<html><head><title>Numi  test page</title>
<style>body { color: STYLETEXT; }</style>
<script>var secret = "SCRIPTTEXT";</script>
</head>
<body>
<nav><a href="/">Home</a> <a href="../docs/guide.html">Guide</a></nav>
<h1>Welcome</h1>
<p>Read   the <a href="sub/more.html">next part</a> or
<a href="https://example.org/elsewhere">another site</a>.</p>
<ul><li>apples</li><li>pears</li></ul>
<pre><code>def greet():
    return "hi"
</code></pre>
<noscript>NOSCRIPTTEXT</noscript>
<svg><text>SVGTEXT</text></svg>
</body></html>"""

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64
TRUSTED: set[str] = set()  # the local origins the person allowed
HUGE_BYTES = 50 * 1024 * 1024


class _State:
    def __init__(self):
        self.release = threading.Event()  # set at teardown: endless endpoints end
        self.slow_started = threading.Event()  # /slow has sent its first bytes
        self.slow_dropped = threading.Event()  # ...and then saw the client hang up


class _Handler(BaseHTTPRequestHandler):
    state: _State

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.path
        try:
            if path.startswith("http://"):
                return self._send(200, "text/plain", f"proxied {path}".encode())
            route = ROUTES.get(path.split("?")[0])
            if route is None and path.startswith("/hop/"):
                return self._hop(int(path.rsplit("/", 1)[1]))
            if route is None:
                return self._send(404, "text/html", b"<h1>Not here</h1><p>No such page, sorry.</p>")
            route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading, as it should at a cap

    def _send(self, status, content_type, body, headers=()):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _hop(self, n):
        if n == 0:
            return self._send(200, "text/plain", b"arrived")
        self._redirect(f"/hop/{n - 1}")

    def _stream_head(self, content_type="text/plain"):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()  # no length: the body ends when the connection does

    def huge(self):
        self._stream_head()
        chunk = b"y" * 65536
        for _ in range(HUGE_BYTES // len(chunk)):
            self.wfile.write(chunk)

    def trickle(self):
        self._stream_head()
        while not self.state.release.wait(0.02):
            self.wfile.write(b"x")
            self.wfile.flush()

    def slow(self):
        self._stream_head()
        self.wfile.write(b"first part\n")
        self.wfile.flush()
        self.state.slow_started.set()
        self.connection.settimeout(10)
        if self.rfile.read(1) == b"":  # the client sends nothing more: EOF means it hung up
            self.state.slow_dropped.set()


ROUTES = {
    "/site/page.html": lambda h: h._send(200, "text/html; charset=utf-8", PAGE),
    "/latin1": lambda h: h._send(200, "text/html; charset=iso-8859-1",
                                 "<p>Caf\u00e9 cr\u00e8me \u2019</p>".encode("cp1252")),
    "/meta-latin1": lambda h: h._send(200, "text/html", b'<meta charset="iso-8859-1"><p>Gar\xe7on</p>'),
    "/plain.txt": lambda h: h._send(200, "text/plain", "Just   text\n  indented \u00e9".encode()),
    "/data.json": lambda h: h._send(200, "application/json", json.dumps({"a": [1, 2]}).encode()),
    "/readme.md": lambda h: h._send(200, "text/markdown; charset=utf-8", b"# Title\n\n* item"),
    "/octet-text": lambda h: h._send(200, "application/octet-stream", b"plain words in a file"),
    "/no-type": lambda h: h._send(200, None, b"<!DOCTYPE html><p>sniffed <b>html</b></p>"),
    "/image.png": lambda h: h._send(200, "image/png", PNG),
    "/doc.pdf": lambda h: h._send(200, "application/pdf", b"%PDF-1.7\n"),
    "/octet-bin": lambda h: h._send(200, "application/octet-stream", b"\0\1\2\3" * 100),
    "/gzip": lambda h: h._send(200, "text/html", gzip.compress(b"<p>packed page</p>"),
                               [("Content-Encoding", "gzip")]),
    "/gzip-bomb": lambda h: h._send(200, "text/plain", gzip.compress(b"z" * 5_000_000),
                                    [("Content-Encoding", "gzip")]),
    "/sized": lambda h: h._send(200, "text/plain", b"s" * 1000),
    "/boom": lambda h: h._send(500, "text/plain", b"database exploded"),
    "/forbidden": lambda h: h._send(403, "text/html", b"<p>Go away.</p>"),
    "/loop": lambda h: h._redirect("/loop"),
    "/to-file": lambda h: h._redirect("file:///etc/passwd"),
    "/to-ftp": lambda h: h._redirect("ftp://127.0.0.1/pub/file.txt"),
    "/huge": _Handler.huge,
    "/trickle": _Handler.trickle,
    "/slow": _Handler.slow,
}


@pytest.fixture(scope="module")
def site():
    with _serving() as (port, state):
        TRUSTED.add(origin(f"http://127.0.0.1:{port}"))
        yield f"http://127.0.0.1:{port}", state


@contextlib.contextmanager
def _serving(tls: ssl.SSLContext | None = None):
    """The routes on a fresh 127.0.0.1 port, over TLS when given a context; yields (port, state)."""
    state = _State()
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"state": state}))
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield server.server_address[1], state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()


def _self_signed_pem() -> tuple[bytes, bytes]:
    """(certificate, key) in PEM for 127.0.0.1, signed by itself."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "numi fetch test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


@pytest.fixture(scope="module")
def tls_site(tmp_path_factory):
    """The same routes over https, with a certificate nobody trusts unless told to; (base, cert PEM)."""
    cert, key = _self_signed_pem()
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert)
    (folder / "key.pem").write_bytes(key)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    with _serving(context) as (port, _):
        TRUSTED.add(origin(f"https://127.0.0.1:{port}"))
        yield f"https://127.0.0.1:{port}", cert.decode("ascii")


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                 "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


def trusting_tool(**caps):
    return fetch_tool(allowed=lambda: TRUSTED, **caps)


def run(url, **caps):
    return trusting_tool(**caps).run({"url": url}, CancelToken())


def refused(url, **caps) -> str:
    with pytest.raises(ValueError) as info:
        run(url, **caps)
    return str(info.value)


# -- the tool itself

def test_spec_asks_for_a_url_and_approval():
    tool = fetch_tool()
    assert tool.name == "web_fetch"
    assert tool.needs_approval and tool.concurrent
    assert tool.spec.parameters["required"] == ["url"]
    assert set(tool.spec.parameters["properties"]) == {"url"}


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)",
                                 "example.com/page", "mailto:a@b.example"])
def test_non_http_addresses_are_refused(url):
    message = refused(url)
    assert "only http:// and https://" in message


@pytest.mark.parametrize("args", [{}, {"url": ""}, {"url": 42}])
def test_a_missing_url_is_explained(args):
    with pytest.raises(ValueError, match="needs a url"):
        fetch_tool().run(args, CancelToken())


def test_errors_become_results_the_model_reads(site):
    base, _ = site
    tool = trusting_tool()
    ok = execute(tool, ToolCall("c1", "web_fetch", json.dumps({"url": base + "/plain.txt"})), CancelToken())
    assert ok.ok and "Just   text" in ok.result.content
    bad = execute(tool, ToolCall("c2", "web_fetch", json.dumps({"url": base + "/missing"})), CancelToken())
    assert not bad.ok and "404" in bad.result.content


# -- pages as text

def test_html_page_becomes_text_without_scripts(site):
    base, _ = site
    out = run(base + "/site/page.html")
    head, _, text = out.partition("\n\n")
    assert head.splitlines()[:3] == [f"URL: {base}/site/page.html", "Status: 200 OK",
                                     "Content-Type: text/html; charset=utf-8"]
    assert "Title: Numi test page" in head
    for hidden in ("SCRIPTTEXT", "STYLETEXT", "NOSCRIPTTEXT", "SVGTEXT", "var secret"):
        assert hidden not in out
    assert "# Welcome" in text
    assert "Read the next part (" + base + "/site/sub/more.html)" in text
    assert "Guide (" + base + "/docs/guide.html)" in text
    assert "Home (" + base + "/)" in text
    assert "another site (https://example.org/elsewhere)" in text
    assert "- apples\n- pears" in text
    assert '```\ndef greet():\n    return "hi"\n```' in text


def test_charset_from_the_header(site):
    base, _ = site
    out = run(base + "/latin1")
    assert "Caf\u00e9 cr\u00e8me \u2019" in out  # windows-1252 for latin-1, as browsers do


def test_charset_from_a_meta_tag(site):
    base, _ = site
    assert "Gar\u00e7on" in run(base + "/meta-latin1")


@pytest.mark.parametrize("path, expected", [
    ("/plain.txt", "Just   text\n  indented \u00e9"),
    ("/data.json", '{"a": [1, 2]}'),
    ("/readme.md", "# Title\n\n* item"),
    ("/octet-text", "plain words in a file"),
])
def test_text_types_come_back_as_they_are(site, path, expected):
    base, _ = site
    out = run(base + path)
    assert out.endswith("\n\n" + expected)


def test_unlabelled_html_is_sniffed(site):
    base, _ = site
    out = run(base + "/no-type")
    assert "Content-Type: not given" in out and out.endswith("sniffed html")


def test_gzip_body_is_unpacked(site):
    base, _ = site
    assert run(base + "/gzip").endswith("packed page")


def test_gzip_body_is_capped_unpacked(site):
    base, _ = site
    out = run(base + "/gzip-bomb", max_bytes=10_000)
    assert "[download stopped at 10000 bytes" in out
    assert out.endswith("\n\n" + "z" * 10_000)


@pytest.mark.parametrize("path, named", [("/image.png", "an image (image/png)"),
                                         ("/doc.pdf", "a PDF document (application/pdf)"),
                                         ("/octet-bin", "application/octet-stream")])
def test_binary_is_refused_by_type(site, path, named):
    base, _ = site
    message = refused(base + path)
    assert named in message and "reads only HTML and text" in message


def test_long_text_is_cut_with_a_note(site):
    base, _ = site
    out = run(base + "/sized", max_chars=100)
    assert out.endswith("s" * 100 + "\n\n[text cut at 100 of 1000 characters]")


def test_a_body_exactly_at_the_cap_is_not_cut(site):
    base, _ = site
    out = run(base + "/sized", max_bytes=1000)
    assert "download stopped" not in out and out.endswith("s" * 1000)


# -- caps

def test_huge_body_is_cut_at_max_bytes_with_bounded_memory(site):
    base, _ = site
    tracemalloc.start()
    try:
        out = run(base + "/huge", max_bytes=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "[download stopped at 100000 bytes; the rest was not read]" in out
    assert out.endswith("\n\n" + "y" * 50_000 + "\n\n[text cut at 50000 of 100000 characters]")
    assert peak < 5_000_000  # the 50 MB body never sits in memory


def test_trickling_server_is_cut_at_the_time_cap(site):
    base, _ = site
    started = time.monotonic()
    out = run(base + "/trickle", timeout=1.0)
    took = time.monotonic() - started
    assert 0.9 < took < 2.5
    assert "[download stopped at the 1-second time limit after" in out
    assert out.rstrip("x").endswith("\n\n") and out.endswith("x")


def test_stop_aborts_a_download_promptly(site):
    base, state = site
    cancel = CancelToken()

    def press_stop():
        if state.slow_started.wait(10):
            cancel.cancel()

    presser = threading.Thread(target=press_stop)
    presser.start()
    started = time.monotonic()
    with pytest.raises(ValueError, match="Stopped: the fetch of .*/slow was cancelled"):
        trusting_tool(timeout=30).run({"url": base + "/slow"}, cancel)
    presser.join()
    assert state.slow_started.is_set()
    assert time.monotonic() - started < 3
    assert state.slow_dropped.wait(5)  # Stop closed the connection, not just stopped waiting on it


def test_stop_before_start_does_not_fetch(site):
    base, _ = site
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(ValueError, match="Stopped"):
        trusting_tool().run({"url": base + "/plain.txt"}, cancel)


# -- redirects

def test_redirect_chain_is_followed(site):
    base, _ = site
    out = run(base + "/hop/5")
    assert out.startswith(f"URL: {base}/hop/0\nRedirected from: {base}/hop/5\nStatus: 200 OK")
    assert out.endswith("arrived")


def test_more_than_five_redirects_is_an_error(site):
    base, _ = site
    assert "redirected more than 5 times" in refused(base + "/hop/6")


def test_redirect_loop_is_an_error(site):
    base, _ = site
    assert "redirects in a loop" in refused(base + "/loop")


@pytest.mark.parametrize("path, target", [("/to-file", "file:///etc/passwd"),
                                          ("/to-ftp", "ftp://127.0.0.1/pub/file.txt")])
def test_redirect_off_http_is_refused(site, path, target):
    base, _ = site
    message = refused(base + path)
    assert f"redirected to {target}, which web_fetch does not follow" in message


# -- errors a person can act on

def test_404_names_the_status_and_quotes_the_page(site):
    base, _ = site
    message = refused(base + "/missing")
    assert message.startswith(f"{base}/missing answered 404 Not Found. Check the address.")
    assert 'The page said: "# Not here No such page, sorry."' in message


def test_500_names_the_status_and_quotes_the_page(site):
    base, _ = site
    message = refused(base + "/boom")
    assert "answered 500 Internal Server Error" in message and "try again later" in message
    assert "database exploded" in message


def test_403_says_access_was_refused(site):
    base, _ = site
    assert "403 Forbidden. The site refused access" in refused(base + "/forbidden")


def test_refused_connection_is_explained():
    with socket.socket() as held:  # bound but not listening: connecting is refused at once
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        TRUSTED.add(origin(f"http://127.0.0.1:{port}"))
        message = refused(f"http://127.0.0.1:{port}/")
    assert message.startswith("Could not reach 127.0.0.1: the connection was refused")
    assert "Check the address or your connection." in message


def test_unknown_host_is_explained():
    started = time.monotonic()
    message = refused("http://numi-fetch-test.invalid/page", timeout=5.0)
    assert message.startswith("Could not reach numi-fetch-test.invalid:")
    assert message.endswith("Check the address or your connection.")
    assert time.monotonic() - started < 7


def test_http_proxy_from_the_environment_is_used(site, monkeypatch):
    base, _ = site
    monkeypatch.setenv("http_proxy", base)
    out = run("http://somewhere.invalid/via?q=1")
    assert out.endswith("proxied http://somewhere.invalid/via?q=1")


def test_addresses_are_escaped_and_fragments_dropped(site):
    base, _ = site
    out = run(base + "/plain.txt?q=caf\u00e9 au lait#section")
    assert out.startswith(f"URL: {base}/plain.txt?q=caf%C3%A9%20au%20lait\nStatus: 200 OK")


# -- https

def test_https_page_is_read(tls_site, monkeypatch):
    base, cert = tls_site
    trusting = ssl.create_default_context(cadata=cert)
    monkeypatch.setattr(fetch_module, "_ssl_context", lambda: trusting)
    out = run(base + "/site/page.html")
    assert out.startswith(f"URL: {base}/site/page.html\nStatus: 200 OK")
    assert "Read the next part (" + base + "/site/sub/more.html)" in out


def test_untrusted_certificate_is_explained(tls_site):
    base, _ = tls_site
    message = refused(base + "/plain.txt")
    assert message.startswith("Could not verify the secure connection to 127.0.0.1:")
    assert "certificate is not trusted" in message


# -- text extraction on its own

def test_lists_tables_and_quotes_keep_their_shape():
    doc = html_to_text("""<ol><li>one<li>two<ul><li>inner</ul></ol><ul><li>other list</ul>
        <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
        <blockquote><p>said</p></blockquote><dl><dt>term</dt><dd>meaning</dd></dl>""")
    assert doc.text == ("1. one\n2. two\n  - inner\n\n- other list\n\nk | v\na | 1\n\n> said\n\n"
                        "term\n  meaning")


def test_numbering_follows_start_and_form_choices_are_dropped():
    doc = html_to_text('<ol start="3"><li>c<li>d</ol><form>Pick <select><option>Aland<option>Zambia'
                       '</select></form>')
    assert doc.text == "3. c\n4. d\n\nPick"


def test_whitespace_collapses_but_breaks_and_pre_stay():
    doc = html_to_text("<p>  a \n\n b\t c<br>d  </p><pre>\n  x   y\n    z</pre>")
    assert doc.text == "a b c\nd\n\n```\n  x   y\n    z\n```"


def test_head_without_its_end_tag_does_not_hide_the_body():
    doc = html_to_text("<html><head><title>T</title><meta charset=utf-8><p>body text")
    assert doc.title == "T" and doc.text == "body text"


def test_links_resolve_against_base_href_and_skip_page_anchors():
    doc = html_to_text('<base href="https://cdn.example/root/"><a href="x.html">X</a> '
                       '<a href="#top">Top</a> <a href="javascript:go()">Go</a> '
                       '<a href="https://cdn.example/root/y">https://cdn.example/root/y</a> '
                       '<a href="/icon"><img src="i.png"></a>', "https://page.example/a/b")
    assert doc.text == "X (https://cdn.example/root/x.html) Top Go https://cdn.example/root/y"


def test_charset_helpers():
    assert sniff_charset(b'<html><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">') \
        == "Shift_JIS"
    assert sniff_charset(b"\xef\xbb\xbfhello") == "utf-8"
    assert sniff_charset(b"<p>nothing</p>") is None
    assert decode(b"\xef\xbb\xbfok", None) == "ok"
    assert decode(b"caf\xe9", "no-such-charset") == "caf\ufffd"
    assert decode(b"\x93q\x94", "ISO-8859-1") == "\u201cq\u201d"
