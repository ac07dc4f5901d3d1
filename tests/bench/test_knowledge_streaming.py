"""A reply streaming while a big knowledge base indexes: its deltas reach the client as fast as when the app is idle.

One real server (tests/numi_client.py) with a model on the fake provider (a real HTTP server in its own
process, OpenAI Chat Completions SSE, read through the openai SDK by Numi). Each turn streams 300
deltas 10 ms apart (~100 deltas/s, a fast model); the fake records time.perf_counter() after writing
delta i and the WebSocket client here records it on receiving the frame that carries it: both are
CLOCK_MONOTONIC, so the difference is the provider-write → client-receive latency of every delta
(tests/bench/test_relay.py's latency measure).

Idle and busy turns alternate, so drift on the shared machine lands on both sides: idle turns, then
the same turns while the server indexes a new base of 2 500 text, Markdown and HTML files (~50 MB,
the indexing benchmark's files), again for a second base, and idle turns at the end. A busy turn
counts only if it starts and ends while the base is `indexing` with its progress moving.

Target: the busy median latency ≤ 1.2x the idle median. The median is the figure asked of: every
delta's typical trip, which is what a person watches flow; a p95 ratio over latencies of a few
milliseconds measures the scheduler's luck on a shared 2-core machine more than Numi (its figures
are printed, with the excess in ms, and it must stay under one 60 Hz frame: ≤ 16.7 ms over idle).

Figures go to test-artifacts/bench/knowledge_streaming.json.
Knobs (env): NUMI_BENCH_STREAM_FILES (2500 per base), NUMI_BENCH_STREAM_CYCLES (2 bases),
NUMI_BENCH_STREAM_TURNS (2 per phase), NUMI_BENCH_LAT_DELTAS (300).
"""
from __future__ import annotations

import os
import platform
import statistics
import time

from tests.fakeprovider import script as S

from .conftest import SMOKE, on_target, size, write_artifact
from .test_knowledge_indexing import SEED, Prose, make_files, wait_ready
from .test_relay import WIRES, Numi, latencies_ms, pct, receive_times, verdict

FILES = size("NUMI_BENCH_STREAM_FILES", 2500, 120)
CYCLES = size("NUMI_BENCH_STREAM_CYCLES", 2, 1)
TURNS = size("NUMI_BENCH_STREAM_TURNS", 2, 1)
DELTAS = size("NUMI_BENCH_LAT_DELTAS", 300, 20)
INTERVAL_S = 0.01
RATIO = 1.2
FRAME_MS = 1000 / 60
WIRE = WIRES[0]  # chat_completions: the OpenAI SSE format
assert WIRE.name == "chat_completions"


def script(n: int) -> dict:
    return {"path": WIRE.path, "steps": [S.delay(INTERVAL_S), *[S.text(f"<{i}>") for i in range(n)], S.usage(5, n)]}


def turn(fake, numi: Numi) -> list[float]:
    """One streamed reply; each delta's latency in ms."""
    expected = "".join(f"<{i}>" for i in range(DELTAS))
    before = len(fake.requests)
    fake.enqueue(script(DELTAS))
    _t_send, _t_content, _t_end, frames = numi.turn(WIRE.name, len(expected))
    assert "".join(d for _, d in frames) == expected, "the reply's text differs from what the provider sent"
    request = fake.requests[before]
    assert request.path == WIRE.path, request.path
    return latencies_ms(request.write_times, receive_times(frames), DELTAS)


def progress(api, base_id: str) -> tuple[str, int]:
    body = api.get(f"/api/knowledge/{base_id}").body
    return body["status"], (body.get("progress") or {}).get("done", 0)


def stats(ms: list[float]) -> dict:
    return {"n": len(ms), "p50_ms": pct(ms, 50), "p95_ms": pct(ms, 95), "p99_ms": pct(ms, 99), "max_ms": max(ms),
            "mean_ms": statistics.fmean(ms)}


def test_knowledge_streaming(tmp_path, bench_fake):
    fake = bench_fake
    started = time.monotonic()
    print()
    prose = Prose(SEED, 30_000 if SMOKE else 600_000)
    folders = [tmp_path / f"docs{c}" for c in range(CYCLES)]
    total = sum(p.stat().st_size for folder in folders for p in make_files(folder, prose, FILES))
    numi = Numi(tmp_path / "data", fake, [WIRE])
    idle: list[float] = []
    busy: list[float] = []
    indexed_s: list[float] = []
    counted = skipped = 0
    try:
        api = numi.api
        turn(fake, numi)  # warm-up: imports, the connection to the fake, the first turn's statements
        for folder in folders:
            fake.reset()  # the fake keeps every request with its write times: read back only this phase's
            for _ in range(TURNS):
                idle.extend(turn(fake, numi))
            t = time.monotonic()
            r = api.post("/api/knowledge", {"name": folder.name, "paths": [str(folder)]})
            assert r.status == 201, r
            base_id = r.body["id"]
            deadline = time.monotonic() + 60
            while progress(api, base_id)[1] == 0 and not SMOKE:  # the workers are reading: indexing is under way
                assert time.monotonic() < deadline, "the base's indexing did not start"
                time.sleep(0.05)
            for _ in range(TURNS):
                status, done_before = progress(api, base_id)
                if status != "indexing":
                    break
                latencies = turn(fake, numi)
                status, done_after = progress(api, base_id)
                # Only a turn that indexing overlapped from start to end measures streaming during indexing.
                if status == "indexing" and done_after > done_before:
                    busy.extend(latencies)
                    counted += 1
                else:
                    skipped += 1
            wait_ready(api, base_id, FILES)
            indexed_s.append(time.monotonic() - t)
        fake.reset()
        for _ in range(TURNS):
            idle.extend(turn(fake, numi))
    finally:
        numi.stop()

    assert SMOKE or counted == CYCLES * TURNS, f"only {counted} of {CYCLES * TURNS} turns streamed while a base " \
        f"indexed; NUMI_BENCH_STREAM_FILES={FILES} is too few for this machine"
    busy_turns = len(busy) // DELTAS
    if not busy:  # a smoke run's base may be read before a turn fits in
        busy = idle
    i, b = stats(idle), stats(busy)
    ratio = b["p50_ms"] / i["p50_ms"]
    excess_p95 = b["p95_ms"] - i["p95_ms"]
    report = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "shared": True},
        "fake_provider": fake.mode, "deltas": DELTAS, "interval_s": INTERVAL_S, "turns": TURNS, "cycles": CYCLES,
        "files_per_base": FILES, "bytes": total, "indexed_s": indexed_s, "busy_turns": busy_turns, "busy_turns_skipped": skipped,
        "idle": i, "busy": b, "ratio_p50": ratio, "ratio_p95": b["p95_ms"] / i["p95_ms"],
        "excess_p95_ms": excess_p95,
        "targets": {"ratio_p50": RATIO, "excess_p95_ms": FRAME_MS},
        "seconds": time.monotonic() - started,
    }
    path = write_artifact("knowledge_streaming.json", report)
    print(f"streaming  {DELTAS} deltas every {INTERVAL_S * 1000:g} ms: {len(idle) // DELTAS} turns idle, "
          f"{busy_turns} while {CYCLES} bases of {FILES:,} files ({total / 1e6:.0f} MB in all) index "
          f"(read in {', '.join(f'{s:.0f}' for s in indexed_s)} s); {os.cpu_count()} CPUs, shared")
    print(f"streaming  idle: p50 {i['p50_ms']:.2f} ms  p95 {i['p95_ms']:.2f} ms  p99 {i['p99_ms']:.2f} ms  "
          f"max {i['max_ms']:.1f} ms")
    print(f"streaming  indexing: p50 {b['p50_ms']:.2f} ms  p95 {b['p95_ms']:.2f} ms  p99 {b['p99_ms']:.2f} ms  "
          f"max {b['max_ms']:.1f} ms")
    print(f"streaming  median {ratio:.2f}x idle (target ≤ {RATIO})  {verdict(ratio <= RATIO)}; p95 "
          f"{report['ratio_p95']:.2f}x, {excess_p95:+.2f} ms (≤ {FRAME_MS:.1f} ms)  {verdict(excess_p95 <= FRAME_MS)}; "
          f"figures {path} ({report['seconds']:.0f} s)")

    assert on_target(ratio <= RATIO), f"median delta latency while indexing is {ratio:.2f}x idle (target ≤ {RATIO})"
    assert on_target(excess_p95 <= FRAME_MS), f"p95 delta latency while indexing is {excess_p95:.1f} ms over idle"
