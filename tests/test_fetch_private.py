"""No fetch reaches the person's own network unless they allowed that address (issue 31).

A real HTTP server on 127.0.0.1 (and ::1 where the system has it) counts every request. Each
address class — written in every form the system's resolver accepts — is refused by the
web_fetch tool and as the target of a redirect from an allowed site, before any connection
is tried; the same server is read when the exact URL or its origin is allowed. Research's
page reads go through the same fetch (tests/test_protocol_research_policy.py).
"""
from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from backend.core.cancel import CancelToken
from backend.tools import fetch_guard
from backend.tools.fetch import PrivateAddress, fetch, fetch_tool
from backend.tools.fetch_guard import exact, origin

# Every connection this process opens, while `_watching` is set: a Python audit hook (the
# interpreter's own record of socket.connect; hooks cannot be removed, so it is gated).
_connects: list = []
_watching = threading.Event()


def _audit(event: str, args) -> None:
    if event == "socket.connect" and _watching.is_set():
        _connects.append(args[1])


sys.addaudithook(_audit)


class _Counter(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, family=socket.AF_INET):
        self.address_family = family
        self.hits: list[str] = []
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.hits.append(self.path)
        parts = urlsplit(self.path)
        if parts.path == "/to":  # a redirect to wherever ?u= says
            self.send_response(302)
            self.send_header("Location", parse_qs(parts.query)["u"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"side effect done"  # a GET that changes something (the attack's target)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def _serve(host: str, family: int, port: int = 0):
    server = _Counter((host, port), family)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class Site:
    def __init__(self, v4, v6):
        self.v4, self.v6 = v4, v6
        self.port = v4.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"

    def hits(self) -> list[str]:
        return self.v4.hits + (self.v6.hits if self.v6 else [])

    def clear(self) -> None:
        self.v4.hits.clear()
        if self.v6:
            self.v6.hits.clear()


@pytest.fixture(scope="module")
def site():
    with _serve("127.0.0.1", socket.AF_INET) as v4:
        port = v4.server_address[1]
        with (_serve("::1", socket.AF_INET6, port) if _has_ipv6_loopback() else contextlib.nullcontext()) as v6:
            yield Site(v4, v6)


@pytest.fixture(autouse=True)
def fresh(site, monkeypatch):
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                 "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    site.clear()
    _connects.clear()
    yield
    _watching.clear()


# Hosts that lead to this computer: the test server answers there when the fetch is allowed.
LOOPBACK = ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "localhost", "[::ffff:127.0.0.1]", "0.0.0.0",
            "[::1]"]
# Hosts of private, link-local, CGNAT, unique-local, reserved and multicast networks, and
# loopback wrapped in IPv6 (NAT64, 6to4) or spelt with a trailing dot.
ELSEWHERE = ["localhost.", "10.0.0.1", "10.255.255.254", "172.16.0.1", "172.31.255.1", "192.168.1.1",
             "169.254.169.254", "100.64.0.1", "100.127.255.254", "[fc00::1]", "[fd12::1]", "[fe80::1]", "[::]",
             "[::ffff:10.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[fec0::1]", "224.0.0.1",
             "240.0.0.1", "255.255.255.255", "192.0.0.8", "198.18.0.1"]


def _url(site: Site, host: str, path: str = "/effect") -> str:
    return f"http://{host}:{site.port}{path}"


def _refused_quickly(do) -> str:
    """Runs do(), which must raise PrivateAddress without opening any connection; its sentence."""
    _watching.set()
    started = time.monotonic()
    with pytest.raises(PrivateAddress) as info:
        do()
    _watching.clear()
    assert time.monotonic() - started < 2  # refused at once, not after a connection timed out
    return str(info.value)


def _tool(*allowed: str):
    return fetch_tool(timeout=5, allowed=lambda: frozenset(allowed))


@pytest.mark.parametrize("host", LOOPBACK + ELSEWHERE)
def test_the_tool_refuses_every_address_of_the_persons_own_network(site, host):
    url = _url(site, host)
    message = _refused_quickly(lambda: _tool().run({"url": url}, CancelToken()))
    assert not _connects, f"a connection was tried: {_connects}"
    assert site.hits() == []
    assert message.startswith("Not fetched:") and "leads into your own network" in message
    assert "Settings → Web fetch" in message


@pytest.mark.parametrize("host", [h for h in LOOPBACK if h != "[::1]" or _has_ipv6_loopback()])
def test_the_same_address_is_read_when_its_exact_url_is_allowed(site, host):
    url = _url(site, host)
    page = _tool(exact(url)).run({"url": url}, CancelToken())
    assert page.endswith("side effect done")
    assert site.hits() == ["/effect"]
    # The exact URL only: another page of the same server is still refused.
    other = _url(site, host, "/other")
    _refused_quickly(lambda: _tool(exact(url)).run({"url": other}, CancelToken()))
    assert site.hits() == ["/effect"]


def test_an_allowed_origin_covers_its_whole_site_and_nothing_else(site):
    allowed = origin(site.base)
    assert allowed == f"http://127.0.0.1:{site.port}"
    assert _tool(allowed).run({"url": site.base + "/a?b=1"}, CancelToken()).endswith("side effect done")
    # The same server under another spelling is another origin.
    _refused_quickly(lambda: _tool(allowed).run({"url": _url(site, "127.1")}, CancelToken()))
    assert site.hits() == ["/a?b=1"]


@pytest.mark.parametrize("host", LOOPBACK[1:] + ELSEWHERE)  # 127.0.0.1 is the allowed site's own origin
def test_an_allowed_site_may_not_redirect_into_the_persons_network(site, host):
    target = _url(site, host)
    start = f"{site.base}/to?u={target}"
    message = _refused_quickly(lambda: fetch(start, timeout=5, allowed_private={origin(site.base)}))
    assert site.hits() == [f"/to?u={target}"]  # the first hop was read, the target never
    assert message.startswith(f"{start} redirected to ") and "which was not followed" in message
    # Only one connection, to the allowed site.
    assert len(_connects) == 1 and _connects[0][0] == "127.0.0.1"


def test_a_redirect_is_followed_to_an_allowed_site_or_an_allowed_exact_url(site):
    same = f"{site.base}/to?u={site.base}/effect"
    assert fetch(same, timeout=5, allowed_private={origin(site.base)}).endswith("side effect done")
    other = _url(site, "127.1")
    via = f"{site.base}/to?u={other}"
    page = fetch(via, timeout=5, allowed_private={origin(site.base), exact(other)})
    assert page.startswith(f"URL: {other}\nRedirected from: {via}")
    assert site.hits() == [f"/to?u={site.base}/effect", "/effect", f"/to?u={other}", "/effect"]


def test_a_proxy_is_not_asked_for_a_private_address(site, monkeypatch):
    """The proxy would reach the address for us: the host is looked up and refused here first."""
    monkeypatch.setenv("http_proxy", site.base)
    message = _refused_quickly(lambda: fetch("http://10.1.2.3/admin", timeout=5))
    assert "10.1.2.3 is on a private network" in message
    assert not _connects and site.hits() == []
    # A name only the proxy can look up still goes through it (control).
    assert fetch("http://only-the-proxy-knows.invalid/x", timeout=5).endswith("side effect done")
    assert site.hits() == ["http://only-the-proxy-knows.invalid/x"]


def test_refusals_say_where_the_address_leads():
    assert "127.0.0.1 is on this computer" in str(fetch_guard.refusal("http://127.0.0.1/x", "127.0.0.1"))
    assert "metadata" in str(fetch_guard.refusal("http://169.254.169.254/latest", "169.254.169.254"))
    named = str(fetch_guard.refusal("http://wiki.corp/x", "10.0.0.5"))
    assert "wiki.corp is 10.0.0.5, on a private network" in named and "http://wiki.corp:80" in named


@pytest.mark.parametrize("ip", ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "64:ff9b::808:808", "::ffff:8.8.8.8",
                                "2002:808:808::1", "100.63.255.255", "100.128.0.0"])
def test_public_addresses_are_public(ip):
    assert fetch_guard.is_public(ip)


@pytest.mark.parametrize("ip", ["127.0.0.1", "::1", "10.0.0.1", "172.16.0.1", "192.168.0.1", "169.254.169.254",
                                "100.64.0.1", "100.127.255.254", "fc00::1", "fd12::1", "fe80::1", "0.0.0.0", "::",
                                "::ffff:127.0.0.1", "64:ff9b::a00:1", "2002:a00:1::1", "fec0::1", "ff02::1",
                                "224.0.0.1", "240.0.0.1", "fe80::1%lo", "not an address"])
def test_other_addresses_are_not(ip):
    assert not fetch_guard.is_public(ip)


def test_needs_consent_resolves_and_respects_what_is_allowed(site):
    url = _url(site, "2130706433", "/p?q=1#frag")
    assert fetch_guard.needs_consent(url) == f"http://2130706433:{site.port}/p?q=1"
    assert fetch_guard.needs_consent(url, {exact(url)}) is None
    assert fetch_guard.needs_consent(url, {origin(url)}) is None
    assert fetch_guard.needs_consent("http://localhost./", lookup=False) == "http://localhost./"
    assert fetch_guard.needs_consent("http://10.0.0.1/", lookup=False) == "http://10.0.0.1/"
    # Without a lookup a name is not judged (the fetch judges it); nor is what cannot be fetched at all.
    assert fetch_guard.needs_consent("http://wiki.invalid/", lookup=False) is None
    assert fetch_guard.needs_consent("http://numi-test.invalid/") is None
    for odd in (None, 5, "", "http://", "file:///etc/passwd"):
        assert fetch_guard.needs_consent(odd) is None


def test_a_name_that_changes_its_answer_after_the_check_is_not_followed(site, monkeypatch):
    """DNS rebinding: the name looks public when checked, then points at this computer. The system's
    resolver cannot be pointed at a test DNS server here, so getaddrinfo answers for this one name
    (mocked: the only thing that cannot run here); the connection must go to the address checked."""
    real = socket.getaddrinfo
    answers = []

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.numi-test":
            return real(host, port, *args, **kwargs)
        answers.append(host)
        ip = "8.8.8.8" if len(answers) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    _watching.set()
    with pytest.raises(ValueError) as info:
        fetch(f"http://rebind.numi-test:{site.port}/effect", timeout=1)
    _watching.clear()
    assert not isinstance(info.value, PrivateAddress)  # 8.8.8.8 passed the check; it is just not reachable here
    assert answers == ["rebind.numi-test"]  # looked up once, for the check
    assert [address[0] for address in _connects] == ["8.8.8.8"]
    assert site.hits() == []
