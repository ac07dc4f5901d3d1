"""Another page on 127.0.0.1 gets nothing from Numi, in real Chromium.

Cookies ignore ports, so once the browser signed in to Numi, a page served from any
other 127.0.0.1 port is same-site and its requests to Numi carry the session cookie.
Here such a page (a tiny http.server) tries to list an MCP server's tools with an
<img>, a no-cors GET and a no-cors POST: Numi answers each with 403 and starts no
process (the test MCP server writes a marker file as it starts). The same request
made by Numi's own page does start it, so the marker is seen to work.
"""
from __future__ import annotations

import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.e2e.ui import CHROMIUM, sign_in
from tests.mcp_processes import mcp_server_children

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

MCP_SERVER = str(Path(__file__).resolve().parents[1] / "mcp_test_server.py")
TOOLS = "/api/mcp/servers/x/tools"

OTHER_PAGE = """<!doctype html><title>other</title>
<img src="{tools}?via=img" onload="seen('img')" onerror="seen('img')">
<script>
  const left = new Set(["img", "get", "post"]);
  function seen(what) {{ left.delete(what); if (!left.size) document.title = "done"; }}
  fetch("{tools}?via=fetch", {{credentials: "include", mode: "no-cors"}}).finally(() => seen("get"));
  fetch("{tools}?via=post", {{method: "POST", credentials: "include", mode: "no-cors", body: "{{}}",
                     headers: {{"Content-Type": "text/plain"}}}}).finally(() => seen("post"));
</script>"""


class OtherPage:
    """A page on another 127.0.0.1 port that points at Numi."""

    def __init__(self, html: str):
        body = html.encode()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_page_on_another_port_starts_no_mcp_server(page, server, tmp_path):
    started = tmp_path / "mcp-started"
    r = server.api().post("/api/mcp/servers", {"id": "x", "transport": "stdio", "command": sys.executable,
                                               "args": [MCP_SERVER],
                                               "env": {"NUMI_MCP_TEST_STARTED_FILE": str(started)}})
    assert r.status == 201, r
    sign_in(page, server)  # the browser now holds numi_session for 127.0.0.1
    numi_tools = f"http://127.0.0.1:{server.port}{TOOLS}"
    other = OtherPage(OTHER_PAGE.format(tools=numi_tools))
    answers = {}
    page.on("response", lambda response: answers.update({response.url.split("via=")[-1]: response.status})
            if response.url.startswith(numi_tools) else None)
    try:
        page.goto(other.url)
        page.wait_for_function("document.title === 'done'")
    finally:
        other.close()
    # The <img>'s answer is not the page's to see (Chromium's ORB blocks it), so Numi's log says which GETs
    # it refused for the site; it logs each before answering. The POST is refused for its Origin already.
    refused = [line.split("Refused ", 1)[1].split(":")[0] for line in
               (server.data_dir / "logs" / "numi.log").read_text().splitlines() if "another web page" in line]
    assert not started.exists(), "a page on another port started the MCP server"
    assert mcp_server_children(server.proc.pid) == set()
    assert refused == [f"GET {TOOLS}"] * 2, refused
    assert answers == {"fetch": 403, "post": 403}, answers

    # Numi's own page may: the marker shows a start.
    sign_in(page, server)
    status = page.evaluate("(url) => fetch(url, {method: 'POST', headers: {'Content-Type': 'application/json'}, "
                           "body: '{}'}).then((r) => r.status)", TOOLS)
    assert status == 200
    assert len(started.read_text().split()) == 1
    assert len(mcp_server_children(server.proc.pid)) == 1
