"""Relay benchmark: what Numi's provider → WebSocket path costs over reading the provider directly.

1. Throughput: the fake provider blasts 20 000 small content deltas. Baseline:
   the raw `openai` SDK in this process, request → last content chunk. Numi:
   a real server process, a WebSocket client here sends `send`, time until the
   concatenated `content` deltas equal the expected text (and, separately,
   until `turn_end`). Runs alternate after a warm-up; medians and the ratio
   Numi / raw are printed. Target: ratio ≤ 1.25.
2. Latency at ~100 deltas/s: 300 deltas, 10 ms apart, each text "<i>". The fake
   records time.perf_counter() after writing delta i; the client records it on
   receiving the frame that carries "<i>" (a coalesced frame carries several).
   perf_counter is CLOCK_MONOTONIC, so the difference across processes is the
   provider-write → client-receive latency. Same for the raw SDK. Target: p99
   of Numi's latency ≤ 25 ms (and its excess over the raw SDK is printed).

Correctness is asserted (every delta arrived, text equal); targets print PASS /
MISS and fail the test only when grossly off (3x the target), since the
machine may be small and noisy. Figures go to test-artifacts/bench/relay.json.

Knobs (env): NUMI_BENCH_DELTAS (20000), NUMI_BENCH_RUNS (5),
NUMI_BENCH_LAT_DELTAS (300), NUMI_BENCH_FAKE (process | thread).
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
import statistics
import time

import openai
import pytest
from websockets.sync.client import connect

from tests.fakeprovider import script as S
from tests.numi_client import ServerProcess

from .conftest import write_artifact

DELTAS = int(os.environ.get("NUMI_BENCH_DELTAS", "20000"))
RUNS = int(os.environ.get("NUMI_BENCH_RUNS", "5"))
LAT_DELTAS = int(os.environ.get("NUMI_BENCH_LAT_DELTAS", "300"))
LAT_INTERVAL = 0.01
TEMPLATE = "{i} "

RATIO_TARGET = 1.25
P99_TARGET_MS = 25.0
GROSS = 3.0  # fail only beyond GROSS x the target

MODEL = "fake-model"
MESSAGES = [{"role": "user", "content": "bench"}]
_INDEX = re.compile(r"<(\d+)>")


# --- helpers ------------------------------------------------------------------

class Numi:
    """A real server with one provider + model pointing at the fake."""

    def __init__(self, data_dir, fake):
        self.server = ServerProcess(data_dir).start()
        self.api = self.server.api()
        r = self.api.post("/api/providers", {"kind": "openai_compatible", "name": "Bench Fake",
                                             "base_url": fake.base_url, "timeout": 30})
        assert r.status == 201, r
        r = self.api.post("/api/models", {"provider_id": r.body["id"], "api_model": MODEL, "label": "Bench"})
        assert r.status == 201, r
        self.model_id = r.body["id"]
        self.n = 0

    def chat(self) -> str:
        # A title, so no title request goes to the fake after the turn.
        r = self.api.post("/api/chats", {"model_id": self.model_id, "title": "bench"})
        assert r.status == 201, r
        return r.body["id"]

    def socket(self, chat_id: str):
        return connect(self.server.ws_url(chat_id), compression=None, max_size=None, open_timeout=10,
                       additional_headers={"Authorization": f"Bearer {self.server.token}"})

    def turn(self, expected_len: int, timeout: float = 120.0):
        """One turn in a fresh chat: (t_send, t_all_content, t_turn_end, frames) with
        frames = [(perf_counter at receive, delta text)] of the content events."""
        chat = self.chat()
        self.n += 1
        frames: list[tuple[float, str]] = []
        got = 0
        t_content = None
        with self.socket(chat) as ws:
            t_send = time.perf_counter()
            ws.send(json.dumps({"type": "send", "request_id": f"bench-{self.n}", "content": "bench"}))
            deadline = time.monotonic() + timeout
            while True:
                raw = ws.recv(timeout=max(0.1, deadline - time.monotonic()))
                t = time.perf_counter()
                event = json.loads(raw)
                kind = event["type"]
                if kind == "content":
                    frames.append((t, event["delta"]))
                    got += len(event["delta"])
                    if got >= expected_len and t_content is None:
                        t_content = t
                elif kind == "turn_end":
                    assert event["status"] == "completed", event
                    return t_send, t_content, t, frames
                elif kind == "error":
                    raise AssertionError(f"turn failed: {event}")

    def stop(self):
        self.server.stop()


def raw_sdk(fake, timeout: float = 120.0):
    """The baseline: the openai SDK reading the stream here.
    (t_request, t_last_content, t_stream_end, chunks=[(perf_counter, content)])."""
    client = openai.OpenAI(base_url=fake.base_url, api_key="x", max_retries=0, timeout=timeout)
    chunks: list[tuple[float, str]] = []
    t_last = None
    try:
        t0 = time.perf_counter()
        stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                                stream_options={"include_usage": True})
        for chunk in stream:
            t = time.perf_counter()
            if chunk.choices and chunk.choices[0].delta.content:
                chunks.append((t, chunk.choices[0].delta.content))
                t_last = t
        t_end = time.perf_counter()
    finally:
        client.close()
    return t0, t_last, t_end, chunks


def raw_decode(fake, timeout: float = 120.0) -> tuple[float, str]:
    """A second, stricter baseline: the SDK's request with the stream decoded as plain JSON,
    as Numi's adapter does. Numi against it is the relay's own cost. (seconds, text)"""
    client = openai.OpenAI(base_url=fake.base_url, api_key="x", max_retries=0, timeout=timeout)
    parts: list[str] = []
    try:
        t0 = time.perf_counter()
        with client.chat.completions.with_streaming_response.create(
                model=MODEL, messages=MESSAGES, stream=True, stream_options={"include_usage": True}) as resp:
            for line in resp.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                choices = json.loads(line[6:]).get("choices") or ()
                if choices and choices[0].get("delta", {}).get("content"):
                    parts.append(choices[0]["delta"]["content"])
        return time.perf_counter() - t0, "".join(parts)
    finally:
        client.close()


def blast_text(n: int) -> str:
    return "".join(TEMPLATE.format(i=i) for i in range(n))


def blast_script(n: int) -> list[dict]:
    return [S.blast(n, TEMPLATE), S.usage(5, n)]


def latency_script(n: int) -> list[dict]:
    return [S.delay(LAT_INTERVAL), *[S.text(f"<{i}>") for i in range(n)], S.usage(5, n)]


def receive_times(frames: list[tuple[float, str]]) -> dict[int, float]:
    """Delta index → receive time; every delta of a coalesced frame gets the frame's time."""
    out: dict[int, float] = {}
    for t, text in frames:
        for m in _INDEX.finditer(text):
            i = int(m.group(1))
            assert i not in out, f"delta {i} arrived twice"
            out[i] = t
    return out


def latencies_ms(write_times, received: dict[int, float], n: int) -> list[float]:
    written = {int(i): pc for i, pc, _wall in write_times}
    assert sorted(written) == list(range(n)), "the fake did not record every write"
    assert sorted(received) == list(range(n)), f"missing deltas: {sorted(set(range(n)) - set(received))[:10]}"
    return [(received[i] - written[i]) * 1000 for i in range(n)]


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


# --- the benchmark ---------------------------------------------------------------

def test_relay(tmp_path, bench_fake):
    fake = bench_fake
    numi = Numi(tmp_path / "data", fake)
    try:
        throughput = _throughput(fake, numi)
        latency = _latency(fake, numi)
    finally:
        numi.stop()

    ratio = throughput["ratio"]
    p99 = latency["numi"]["p99_ms"]
    report = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "fake_provider": fake.mode,
        "throughput": throughput,
        "latency": latency,
        "targets": {"ratio": RATIO_TARGET, "ratio_ok": ratio <= RATIO_TARGET,
                    "latency_p99_ms": P99_TARGET_MS, "latency_ok": p99 <= P99_TARGET_MS},
    }
    path = write_artifact("relay.json", report)

    r, n = throughput["raw"], throughput["numi"]
    ln, lr = latency["numi"], latency["raw"]
    print()
    print(f"relay throughput  {DELTAS} deltas, median of {RUNS}, fake in {fake.mode}")
    print(f"relay throughput  raw {r['median_s']:.2f} s  numi {n['median_s']:.2f} s "
          f"(turn_end {n['turn_end_median_s']:.2f} s)  ratio {ratio:.2f} "
          f"(target ≤ {RATIO_TARGET}) {verdict(ratio <= RATIO_TARGET)}")
    print(f"relay overhead    vs the same stream decoded as plain JSON without a relay: "
          f"decode {throughput['decode']['median_s']:.2f} s  ratio {throughput['ratio_vs_decode']:.2f}")
    print(f"relay frames      numi median {n['frames_median']:.0f} content frames for {DELTAS} deltas")
    print(f"relay latency     numi p50 {ln['p50_ms']:.1f} ms p99 {ln['p99_ms']:.1f} ms max {ln['max_ms']:.1f} ms; "
          f"raw p50 {lr['p50_ms']:.1f} ms p99 {lr['p99_ms']:.1f} ms; "
          f"added p50 {latency['added_p50_ms']:.1f} ms p99 {latency['added_p99_ms']:.1f} ms "
          f"(target p99 ≤ {P99_TARGET_MS:g} ms) {verdict(p99 <= P99_TARGET_MS)}")
    print(f"relay figures     {path}")

    assert ratio <= GROSS * RATIO_TARGET, f"Numi/raw throughput ratio {ratio:.2f} is grossly off"
    assert p99 <= GROSS * P99_TARGET_MS, f"Numi p99 latency {p99:.1f} ms is grossly off"


def _throughput(fake, numi: Numi) -> dict:
    expected = blast_text(DELTAS)
    raw_times, numi_times, numi_end_times, numi_frames = [], [], [], []

    def run_raw() -> float:
        fake.enqueue(blast_script(DELTAS))
        t0, t_last, _t_end, chunks = raw_sdk(fake)
        assert len(chunks) == DELTAS, f"raw SDK got {len(chunks)} content chunks of {DELTAS}"
        assert "".join(c for _, c in chunks) == expected
        return t_last - t0

    def run_numi() -> tuple[float, float, int]:
        fake.enqueue(blast_script(DELTAS))
        t_send, t_content, t_end, frames = numi.turn(len(expected))
        text = "".join(d for _, d in frames)
        assert len(text) == len(expected), f"numi delivered {len(text)} chars of {len(expected)}"
        assert text == expected, "numi's concatenated content differs from what the provider sent"
        return t_content - t_send, t_end - t_send, len(frames)

    decode_times = []

    def run_decode() -> float:
        fake.enqueue(blast_script(DELTAS))
        took, text = raw_decode(fake)
        assert text == expected
        return took

    run_raw()  # warm-up: imports, connection setup, page cache, the server's first turn
    run_numi()
    run_decode()
    for k in range(RUNS):
        decode_times.append(run_decode())
        # Alternate the order, so drift on the machine lands on both sides.
        order = (run_raw, run_numi) if k % 2 == 0 else (run_numi, run_raw)
        for fn in order:
            if fn is run_raw:
                raw_times.append(fn())
            else:
                content_s, end_s, frames = fn()
                numi_times.append(content_s)
                numi_end_times.append(end_s)
                numi_frames.append(frames)

    raw_med, numi_med = statistics.median(raw_times), statistics.median(numi_times)
    return {
        "deltas": DELTAS, "runs": RUNS,
        "raw": {"median_s": raw_med, "runs_s": raw_times,
                "deltas_per_s": DELTAS / raw_med},
        "numi": {"median_s": numi_med, "runs_s": numi_times,
                 "turn_end_median_s": statistics.median(numi_end_times), "turn_end_runs_s": numi_end_times,
                 "frames_median": statistics.median(numi_frames), "frames_runs": numi_frames,
                 "deltas_per_s": DELTAS / numi_med},
        "decode": {"median_s": statistics.median(decode_times), "runs_s": decode_times},
        "ratio": numi_med / raw_med,
        "ratio_vs_decode": numi_med / statistics.median(decode_times),
        "ratio_turn_end": statistics.median(numi_end_times) / raw_med,
    }


def _latency(fake, numi: Numi) -> dict:
    n = LAT_DELTAS
    expected = "".join(f"<{i}>" for i in range(n))

    before = len(fake.requests)
    fake.enqueue(latency_script(n))
    _t0, _t_last, _t_end, chunks = raw_sdk(fake)
    assert "".join(c for _, c in chunks) == expected
    raw_req = fake.requests[before]
    raw_lat = latencies_ms(raw_req.write_times, receive_times(chunks), n)

    before = len(fake.requests)
    fake.enqueue(latency_script(n))
    _t_send, _t_content, _t_end, frames = numi.turn(len(expected))
    assert "".join(d for _, d in frames) == expected
    numi_req = fake.requests[before]
    assert numi_req.path == S.CHAT_PATH
    numi_lat = latencies_ms(numi_req.write_times, receive_times(frames), n)

    def summary(lat: list[float]) -> dict:
        return {"p50_ms": pct(lat, 50), "p90_ms": pct(lat, 90), "p99_ms": pct(lat, 99),
                "max_ms": max(lat), "mean_ms": statistics.fmean(lat)}

    raw_s, numi_s = summary(raw_lat), summary(numi_lat)
    return {
        "deltas": n, "interval_s": LAT_INTERVAL,
        "raw": raw_s, "numi": {**numi_s, "frames": len(frames)},
        "added_p50_ms": numi_s["p50_ms"] - raw_s["p50_ms"],
        "added_p99_ms": numi_s["p99_ms"] - raw_s["p99_ms"],
    }


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main(["-q", "-s", __file__]))
