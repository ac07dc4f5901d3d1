"""Limits without cliffs: open-file limits, hundreds of sockets, and bursts of frames.

All against the real server process. A socket holds no database connection
while idle, so sockets cost one descriptor each; the server raises its soft
open-file limit to the hard one at start; and a client that sends faster than
Numi answers is read more slowly, never cut off (docs/PROTOCOL.md, "Limits").
"""
from __future__ import annotations

import json
import os
import resource

import pytest

from tests.conftest import Setup
from tests.fakeprovider import script as S
from tests.numi_client import AppSocket, ServerProcess, Socket


def open_files(soft: int, hard: int):
    """A preexec_fn: the server starts with these open-file limits."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def proc_limit(pid: int) -> tuple[int, int]:
    """(soft, hard) open files of a running process, as the kernel reports them."""
    with open(f"/proc/{pid}/limits") as f:
        line = next(line for line in f if line.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return int(soft), int(hard)


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS")).split()[1])


@pytest.fixture
def limited_server(tmp_path):
    started = []

    def start(soft: int, hard: int) -> ServerProcess:
        proc = ServerProcess(tmp_path / f"data{len(started)}", preexec_fn=open_files(soft, hard)).start()
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


def test_the_soft_open_file_limit_is_raised_to_the_hard_one_at_start(limited_server):
    server = limited_server(256, 4096)
    assert proc_limit(server.proc.pid) == (4096, 4096)
    assert server.api().get("/api/health").status == 200


def test_two_hundred_sockets_fit_in_256_descriptors(limited_server, fake):
    # soft = hard = 256: raising the limit cannot help, so this holds only while
    # sockets share what they need and keep no database connection of their own.
    server = limited_server(256, 256)
    pid = server.proc.pid
    assert proc_limit(pid) == (256, 256)
    setup = Setup(server, fake)
    chats = [setup.chat(title=f"chat {n}") for n in range(20)]
    before, rss_before = descriptors(pid), rss_kib(pid)

    sockets = [Socket(server, chats[n % 20]) for n in range(200)]
    apps = [AppSocket(server) for _ in range(5)]
    for sock in sockets + apps:
        sock.send(type="ping")
    for sock in sockets + apps:
        assert sock.until("pong", timeout=10) == {"type": "pong"}
    # One descriptor a socket (its TCP connection), nothing more.
    assert descriptors(pid) - before <= len(sockets) + len(apps) + 2
    # Three threads a socket (werkzeug's, simple-websocket's, the reader): memory stays modest.
    assert (rss_kib(pid) - rss_before) / len(sockets + apps) < 512
    assert setup.api.get("/api/health").body["ok"] is True

    # A turn in one chat streams to every socket open on it.
    watching = [s for n, s in enumerate(sockets) if n % 20 == 7]
    setup.fake.enqueue([S.text("Hello "), S.text("from "), S.text("afar")])
    watching[0].send(type="send", request_id="r1", content="hi")
    for sock in watching:
        assert sock.until("turn_end")["status"] == "completed"
        assert sock.text() == "Hello from afar"
    elsewhere = sockets[8]  # chat 8: nothing of chat 7's turn waits before its next pong
    elsewhere.send(type="ping")
    assert elsewhere.recv() == {"type": "pong"}
    for sock in sockets + apps:
        sock.close()


def burst_frames(n: int) -> list[tuple[str, str]]:
    """(frame, the answer's type or error code) in turn: a ping, a malformed frame, a well-formed miss."""
    kinds = [(json.dumps({"type": "ping"}), "pong"), ("{not json", "bad_request"),
             (json.dumps({"type": "queue_discard", "message_id": 1}), "not_found")]
    return [kinds[i % 3] for i in range(n)]


@pytest.mark.parametrize("count", [300, 2000])
def test_a_burst_of_frames_sent_without_reading_is_answered_in_order(server, count):
    chat = server.api().post("/api/chats", {}).body["id"]
    sock = Socket(server, chat)
    frames = burst_frames(count)
    for text, _ in frames:
        sock.ws.send(text)
    answers = [sock.recv(timeout=10) for _ in frames]
    assert [a.get("code", a["type"]) for a in answers] == [expected for _, expected in frames]
    ids = [a["event_id"] for a in answers if a["type"] == "error"]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    sock.send(type="ping")
    assert sock.recv() == {"type": "pong"}  # still open


def test_a_burst_of_pings_on_the_app_socket_is_answered_in_order(server):
    app = AppSocket(server)
    frames = [("{}" if i % 5 == 4 else json.dumps({"type": "ping"})) for i in range(2000)]
    for text in frames:
        app.ws.send(text)
    answers = [app.recv(timeout=10) for _ in frames]
    assert [a.get("code", a["type"]) for a in answers] == ["bad_request" if t == "{}" else "pong" for t in frames]
    app.send(type="ping")
    assert app.recv() == {"type": "pong"}


def test_on_macos_an_unlimited_hard_limit_is_capped_at_open_max(monkeypatch):
    # macOS cannot run here: its platform name and limits are stood in for, setrlimit recorded.
    from backend import fdlimit

    calls = []
    monkeypatch.setattr(fdlimit.sys, "platform", "darwin")
    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, resource.RLIM_INFINITY))
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: calls.append((which, limits)))
    assert fdlimit.raise_open_file_limit() == (256, fdlimit.MACOS_OPEN_MAX)
    assert calls == [(resource.RLIMIT_NOFILE, (fdlimit.MACOS_OPEN_MAX, resource.RLIM_INFINITY))]
