"""search_files with a model's hostile pattern, through the real server: the process keeps
answering while it runs, and Stop ends the turn at once (CONTRACT §4: health within 1 s while
tools run; stop within 10 s)."""
from __future__ import annotations

import http.client
import json
import random
import time

import pytest

from tests.fakeprovider import script as S

HEALTH_S = 1.0


@pytest.fixture
def tooled(setup, tmp_path):
    """The setup with a tool-calling model and a workspace folder."""
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    setup.workspace = tmp_path / "ws"
    setup.workspace.mkdir()
    return setup


def health_answers(port: int) -> float:
    """Seconds GET /api/health took; fails past HEALTH_S."""
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HEALTH_S)
    try:
        conn.request("GET", "/api/health", headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        assert response.status == 200 and json.loads(response.read())["ok"] is True
    finally:
        conn.close()
    took = time.monotonic() - started
    assert took < HEALTH_S, took
    return took


def search_call(pattern: str) -> list[dict]:
    return [S.tool_call(0, "s1", "search_files", json.dumps({"pattern": pattern, "regex": True}))]


def test_a_backtracking_pattern_neither_stalls_the_server_nor_delays_stop(tooled):
    setup = tooled
    # With Python's re each line of 28 '=' held the GIL for seconds, and the long one for ever.
    (setup.workspace / "rulers.txt").write_text(("=" * 28 + "\n") * 50 + "=" * 100_000 + "\n")
    chat = setup.chat(title="t", workspace=str(setup.workspace))
    setup.fake.enqueue(search_call("(=+)+x"), [S.text("so far"), S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="search")
    sock.until("tool_start", call_id="s1")
    health_answers(setup.server.port)
    end = sock.until("tool_end", call_id="s1", timeout=5)
    assert end["ok"] and end["output"] == "No matches for '(=+)+x' in the workspace.", end
    setup.fake.wait_hanging(1)
    health_answers(setup.server.port)
    stopped = time.monotonic()
    sock.send(type="stop")
    assert sock.until("turn_end", timeout=10)["status"] == "cancelled"
    assert time.monotonic() - stopped < 3.0


SLOW_PATTERN = r"(?:.{0,25}a){2}(?:.{0,25}b){2}Q"


def start_slow_search(setup):
    """A chat whose model searches 16 MB of noise with SLOW_PATTERN; returns its socket once the search runs."""
    # On random text RE2's DFA gives up on this pattern, so the search would run into its
    # 10 s budget: about a microsecond a byte over 16 MB.
    rng = random.Random(1)
    table = bytes(b"ab =xyz\n"[i % 8] for i in range(256))
    for i in range(8):
        (setup.workspace / f"noise{i}.txt").write_bytes(rng.randbytes(2 * 1024 * 1024).translate(table))
    chat = setup.chat(title="t", workspace=str(setup.workspace))
    setup.fake.enqueue(search_call(SLOW_PATTERN), [S.text("never asked")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="search")
    sock.until("tool_start", call_id="s1")
    return sock


def test_stop_ends_a_slow_search_between_chunks(tooled):
    setup = tooled
    sock = start_slow_search(setup)
    health_answers(setup.server.port)  # RE2 lets go of the GIL while it matches
    stopped = time.monotonic()
    sock.send(type="stop")
    end = sock.until("tool_end", call_id="s1", timeout=10)
    assert end["output"].endswith("[cancelled: the search is incomplete]"), end
    assert sock.until("turn_end", timeout=10)["status"] == "cancelled"
    assert time.monotonic() - stopped < 5.0  # the search alone would run for its 10 s
    assert len(setup.fake.requests) == 1  # the turn ended; the model was not asked again


def test_sigterm_during_a_slow_search_exits_before_the_search_would_end(tooled):
    setup = tooled
    start_slow_search(setup)
    health_answers(setup.server.port)
    # SIGTERM stops running turns like Stop; the search sees it between chunks, well
    # inside the contract's 10 s and before its own 10 s budget would end it.
    assert setup.server.terminate(timeout=10) < 6.0
    assert setup.server.proc.returncode == 0
