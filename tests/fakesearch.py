"""Fake search services on loopback, for tests: SearXNG, Brave Search API and Tavily.

Real HTTP servers that answer as each real API does: the request form it takes
(SearXNG `GET /search?q=…&format=json`, Brave `GET /res/v1/web/search` with
`X-Subscription-Token`, Tavily `POST /search` with `Authorization: Bearer`), its
result JSON, and its error shapes (Brave's `ErrorResponse`, Tavily's `detail`).
A test sets `results`, queues whole answers with `answer(...)`, or makes the next
request hang until `release()`.
"""
from __future__ import annotations

import gzip
import json
import re
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.fakeprovider.server import json_body

KEY = "BSA" + "fake-search-key-0123456789"  # built, so no scanner mistakes it for a real key


@dataclass
class Seen:
    method: str
    path: str
    query: dict  # name -> first value
    headers: dict  # names lower-cased
    body: object  # parsed JSON or None


def searxng_body(query: str, results: list[tuple[str, str, str]]) -> dict:
    return {"query": query, "number_of_results": 0,
            "results": [{"url": url, "title": title, "content": snippet, "engine": "duckduckgo",
                         "parsed_url": ["https", urlsplit(url).netloc, urlsplit(url).path, "", "", ""],
                         "template": "default.html", "engines": ["duckduckgo", "brave"], "positions": [i, i],
                         "score": 2.0 / i, "category": "general"}
                        for i, (title, url, snippet) in enumerate(results, start=1)],
            "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}


def brave_body(query: str, results: list[tuple[str, str, str]]) -> dict:
    body = {"type": "search",
            "query": {"original": query, "show_strict_warning": False, "is_navigational": False,
                      "local_decision": "drop", "is_news_breaking": False, "spellcheck_off": True,
                      "country": "us", "bad_results": False, "should_fallback": False, "more_results_available": True},
            "mixed": {"type": "mixed", "main": [{"type": "web", "index": i, "all": False}
                                                 for i in range(len(results))], "top": [], "side": []}}
    if results:
        body["web"] = {"type": "search", "family_friendly": True, "results": [
            {"title": title, "url": url, "is_source_local": False, "is_source_both": False,
             "description": snippet, "page_age": "2026-10-01T08:00:00", "profile": {"name": urlsplit(url).netloc},
             "language": "en", "family_friendly": True, "type": "search_result", "subtype": "generic",
             "meta_url": {"scheme": "https", "netloc": urlsplit(url).netloc, "hostname": urlsplit(url).netloc,
                          "path": urlsplit(url).path}}
            for title, url, snippet in results]}
    return body


def tavily_body(query: str, results: list[tuple[str, str, str]]) -> dict:
    return {"query": query, "follow_up_questions": None, "answer": None, "images": [],
            "results": [{"title": title, "url": url, "content": snippet, "score": 0.9 - i / 100, "raw_content": None}
                        for i, (title, url, snippet) in enumerate(results)],
            "response_time": 0.42, "request_id": "123e4567-e89b-12d3-a456-426614174111"}


def brave_error(status: int, code: str, detail: str) -> dict:
    return {"type": "ErrorResponse", "error": {"id": "5d832250-9396-4f6e-b84a-2a1fe524cd7d", "status": status,
                                               "code": code, "detail": detail,
                                               "meta": {"component": "rate_limiter" if status == 429
                                                        else "authentication"}},
            "time": 1663072993}


def tavily_error(message: str) -> dict:
    return {"detail": {"error": message}}


def searxng_takes_for_a_bot(headers: dict) -> bool:
    """SearXNG's limiter's header probes of a /search request (its botdetection http_* methods)."""
    accept = [part.split(";")[0].strip() for part in headers.get("accept", "").split(",")]
    encodings = [part.split(";")[0].strip() for part in headers.get("accept-encoding", "").split(",")]
    agent = headers.get("user-agent", "")
    return ("text/html" not in accept and "*/*" not in accept and "text/*" not in accept
            or not {"gzip", "deflate"} & set(encodings)
            or not headers.get("accept-language", "").strip()
            or headers.get("connection", "").strip() == "close"
            or not agent or re.search(r"curl|wget|python|java|go-http-client|okhttp|httpclient", agent, re.I) is not None)


BODIES = {"searxng": searxng_body, "brave": brave_body, "tavily": tavily_body}


class FakeSearch:
    """One fake service of `kind` ("searxng", "brave", "tavily"); `url` is what Numi is pointed at."""

    def __init__(self, kind: str, key: str = KEY):
        self.kind, self.key = kind, key
        self.results: list[tuple[str, str, str]] = [
            ("Example One", "https://one.example/a", "The first <strong>result</strong>."),
            ("Example Two", "https://two.example/b", "The second result."),
        ]
        self.gzip = kind == "brave"  # Brave's answers come compressed when asked to
        # SearXNG's limiter, on in its container image: probes a search's headers for a bot's.
        self.limiter = kind == "searxng"
        # Pages by path, answered whatever order their requests come in (concurrent fetches).
        self.page_html: dict[str, str] = {}
        self.seen: list[Seen] = []
        self._answers: list[tuple[int, object, dict]] = []
        self._lock = threading.Lock()
        self._hang = False
        self._release = threading.Event()
        self.hanging = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def answer(self, status: int, body: object, headers: dict | None = None) -> None:
        """Queue one answer: a JSON body (dict/list) or raw text (str, sent as given)."""
        with self._lock:
            self._answers.append((status, body, headers or {}))

    def hang(self) -> None:
        """The next request waits until release() (or close)."""
        self._hang = True

    def release(self) -> None:
        self._release.set()

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    # -- the server's side
    def _next(self) -> tuple[int, object, dict] | None:
        with self._lock:
            return self._answers.pop(0) if self._answers else None

    def _own(self, seen: Seen) -> tuple[int, object, dict]:
        """The real API's answer to a request of its own form."""
        if seen.method == "GET" and seen.path in self.page_html:
            return 200, self.page_html[seen.path], {"Content-Type": "text/html; charset=utf-8"}
        if self.kind == "searxng":
            if seen.method != "GET" or seen.path != "/search":
                return 404, "<html><body>Not Found</body></html>", {"Content-Type": "text/html"}
            if self.limiter and searxng_takes_for_a_bot(seen.headers):
                return 429, "Too Many Requests", {"Content-Type": "text/plain"}
            if seen.query.get("format") != "json":
                return 403, "<html><body>403 Forbidden</body></html>", {"Content-Type": "text/html"}
            return 200, searxng_body(seen.query.get("q", ""), self.results[:]), {}
        if self.kind == "brave":
            if seen.method != "GET" or seen.path != "/res/v1/web/search":
                return 404, brave_error(404, "NOT_FOUND", "Not found."), {}
            if seen.headers.get("x-subscription-token") != self.key:
                return 422, brave_error(422, "SUBSCRIPTION_TOKEN_INVALID",
                                        "The provided subscription token is invalid."), {}
            count = int(seen.query.get("count", 20))
            return 200, brave_body(seen.query.get("q", ""), self.results[:count]), {}
        if seen.method != "POST" or seen.path != "/search":
            return 404, {"detail": "Not Found"}, {}
        if seen.headers.get("authorization") != f"Bearer {self.key}":
            return 401, tavily_error("Unauthorized: missing or invalid API key."), {}
        body = seen.body if isinstance(seen.body, dict) else {}
        return 200, tavily_body(body.get("query", ""), self.results[:int(body.get("max_results", 5))]), {}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def _handle(self) -> None:
        fake: FakeSearch = self.server.fake  # type: ignore[attr-defined]
        parts = urlsplit(self.path)
        body = json_body(self)
        seen = Seen(self.command, parts.path, {k: v[0] for k, v in parse_qs(parts.query).items()},
                    {k.lower(): v for k, v in self.headers.items()}, body)
        fake.seen.append(seen)
        if fake._hang:
            fake._hang = False
            fake.hanging.set()
            fake._release.wait(30)
            return self._close()
        status, answer, headers = fake._next() or fake._own(seen)
        if isinstance(answer, str):
            data, ctype = answer.encode(), headers.pop("Content-Type", "text/html; charset=utf-8")
        else:
            data, ctype = json.dumps(answer).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if fake.gzip and "gzip" in (self.headers.get("Accept-Encoding") or ""):
            data = gzip.compress(data)
            self.send_header("Content-Encoding", "gzip")
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _close(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def unused_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
