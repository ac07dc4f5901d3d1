"""The preview origin: a second loopback listener, on a port of its own, that serves previews and
nothing else (CONTRACT §9; docs/PROTOCOL.md, "Document previews").

A tiny WSGI app, not the Flask one: no cookie is read or set, no token, no API. Every path
carries this run's secret: `/p/<secret>/doc/<doc id>/<version>` is a document's page,
`/p/<secret>/lib/<file>` one of the vendored libraries a page draws with; anything else is
404. The Host must be `127.0.0.1:<its port>` (DNS rebinding), else 403; only GET and HEAD.
"""
from __future__ import annotations

import hmac
import logging
import re
import secrets
import threading
from pathlib import Path
from typing import Callable
from urllib.parse import quote, unquote

from werkzeug.serving import make_server
from werkzeug.wsgi import FileWrapper

from backend.features.previews import pages, policy

log = logging.getLogger(__name__)
VENDOR = Path(__file__).resolve().parents[3] / "web" / "vendor"
# The libraries a preview page may load, by the name it asks for (web/vendor/VERSIONS.md).
LIBS = {
    "marked.esm.js": VENDOR / "marked" / "marked.esm.js",
    "purify.es.js": VENDOR / "dompurify" / "purify.es.js",
    "mermaid.min.js": VENDOR / "mermaid" / "mermaid.min.js",
}
_VERSION = re.compile(r"[0-9]{1,10}")
_STATUS = {200: "200 OK", 403: "403 Forbidden", 404: "404 Not Found", 405: "405 Method Not Allowed",
           500: "500 Internal Server Error"}

# (doc id, version) → (language, text) of that version, or None when there is none.
Content = Callable[[str, int], "tuple[str, str] | None"]


class PreviewListener:
    """The listener, bound to a free loopback port as it is made; `start` serves, `stop` ends it."""

    def __init__(self, content: Content, app_port: Callable[[], int | None]):
        self._content = content
        self._app_port = app_port  # the app's port, known once its own listener is bound
        self.secret = secrets.token_urlsafe(24)
        # Loopback only, like the app's own listener; port 0: a free one of its own. Threaded, its
        # request threads daemons (werkzeug's ThreadedWSGIServer), so none holds up the exit.
        self._httpd = make_server("127.0.0.1", 0, self, threaded=True)
        self.port: int = self._httpd.server_port
        self.origin = f"http://127.0.0.1:{self.port}"
        self.lib_url = f"{self.origin}/p/{self.secret}/lib/"
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="previews", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop serving (within half a second: serve_forever's poll) and close the port."""
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()

    def url(self, doc_id: str, version: int) -> str:
        return f"{self.origin}/p/{self.secret}/doc/{quote(doc_id, safe='')}/{version}"

    def csp(self) -> str:
        return policy.csp(self.lib_url, self._app_port())

    # -- the WSGI app ----------------------------------------------------------------------

    def __call__(self, environ, start_response):
        try:
            return self._answer(environ, start_response)
        except Exception:
            log.exception("a document preview failed")
            return self._text(start_response, 500, "This preview could not be made; the details are in Numi's log.")

    def _answer(self, environ, start_response):
        if environ.get("HTTP_HOST") != f"127.0.0.1:{self.port}":
            return self._text(start_response, 403, f"Previews are only served as 127.0.0.1:{self.port}.")
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD"):
            return self._text(start_response, 405, "Previews can only be read.", [("Allow", "GET, HEAD")])
        # The path as sent (PATH_INFO is already decoded: an id's %2F would split it).
        raw = (environ.get("REQUEST_URI") or environ.get("PATH_INFO") or "").split("?", 1)[0]
        parts = raw.split("/")
        if len(parts) < 4 or parts[:2] != ["", "p"] or not hmac.compare_digest(parts[2].encode(),
                                                                              self.secret.encode()):
            return self._not_found(start_response)
        if len(parts) == 5 and parts[3] == "lib" and parts[4] in LIBS:
            return self._lib(environ, start_response, LIBS[parts[4]])
        if len(parts) == 6 and parts[3] == "doc" and parts[4] and _VERSION.fullmatch(parts[5]):
            found = self._content(unquote(parts[4]), int(parts[5]))
            if found is not None and found[0] in pages.PREVIEWABLE:
                language, text = found
                body = pages.page(language, text, self.lib_url, policy.app_origins(self._app_port()))
                return self._send(start_response, 200, "text/html; charset=utf-8",
                                  body.encode("utf-8", "replace"))
        return self._not_found(start_response)

    def _lib(self, environ, start_response, path: Path):
        # A page's `import` of a module is a CORS request from its opaque (sandboxed) origin.
        data = path.open("rb")
        size = path.stat().st_size
        start_response(_STATUS[200], [("Content-Type", "text/javascript; charset=utf-8"),
                                      ("Content-Length", str(size)), ("Access-Control-Allow-Origin", "*"),
                                      *policy.headers(self.csp())])
        return environ.get("wsgi.file_wrapper", FileWrapper)(data)

    def _not_found(self, start_response):
        return self._text(start_response, 404, "There is no preview at this address.")

    def _text(self, start_response, status: int, sentence: str, extra: list[tuple[str, str]] | None = None):
        return self._send(start_response, status, "text/plain; charset=utf-8", sentence.encode() + b"\n", extra)

    def _send(self, start_response, status: int, content_type: str, body: bytes,
              extra: list[tuple[str, str]] | None = None):
        start_response(_STATUS[status], [("Content-Type", content_type), ("Content-Length", str(len(body))),
                                         *(extra or []), *policy.headers(self.csp())])
        return [body]
