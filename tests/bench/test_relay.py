"""Relay benchmark: what Numi's provider → WebSocket path costs over reading the provider directly,
for each wire API Numi speaks: Chat Completions, Responses and Anthropic Messages.

Per wire API (one Numi server holds a provider + model for each, all pointing at the
same fake provider, which plays the same scripts in each wire format):

1. Throughput: the fake provider blasts 20 000 small text deltas. Baseline: that
   API's official SDK in this process, request → last text delta:
     chat_completions    openai  client.chat.completions.create(stream=True), chunk.delta.content
     responses           openai  client.responses.create(stream=True), response.output_text.delta
     anthropic_messages  anthropic client.messages.create(stream=True), content_block_delta text
   Numi: a real server process, a WebSocket client here sends `send`, time until
   the concatenated `content` deltas equal the expected text (and, separately,
   until `turn_end`). Runs alternate after a warm-up; medians and the ratio
   Numi / raw SDK are printed. Target: ratio ≤ 1.25 for every API.
   A second, stricter baseline decodes the same stream as plain JSON lines through
   the SDK's raw response (as Numi's adapters do); Numi against it is the relay's
   own cost (informative, no target).
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
NUMI_BENCH_LAT_DELTAS (300), NUMI_BENCH_FAKE (process | thread),
NUMI_BENCH_APIS (chat_completions,responses,anthropic_messages: a comma list).
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
import statistics
import time
from dataclasses import dataclass
from typing import Callable

import anthropic
import openai
import pytest
from websockets.sync.client import connect

from tests.fakeprovider import script as S
from tests.numi_client import ServerProcess

from .conftest import on_target, size, write_artifact

DELTAS = size("NUMI_BENCH_DELTAS", 20000, 200)
RUNS = size("NUMI_BENCH_RUNS", 5, 1)
LAT_DELTAS = size("NUMI_BENCH_LAT_DELTAS", 300, 20)
LAT_INTERVAL = 0.01
TEMPLATE = "{i} "

RATIO_TARGET = 1.25
P99_TARGET_MS = 25.0
GROSS = 3.0  # fail only beyond GROSS x the target

MODEL = "fake-model"
MESSAGES = [{"role": "user", "content": "bench"}]
MAX_TOKENS = 1024
_INDEX = re.compile(r"<(\d+)>")

# (t_request, t_last_text, t_stream_end, chunks=[(perf_counter at receive, text)])
RawResult = tuple[float, float, float, list[tuple[float, str]]]


# --- the raw SDK baselines, one pair per wire API --------------------------------

def _openai(fake, timeout: float) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.base_url, api_key="x", max_retries=0, timeout=timeout)


def _anthropic(fake, timeout: float) -> anthropic.Anthropic:
    # Anthropic's base_url is the root: the SDK adds /v1/messages.
    return anthropic.Anthropic(base_url=fake.url, api_key="x", max_retries=0, timeout=timeout)


def _typed(client, events, text_of: Callable) -> RawResult:
    """Iterate the SDK's typed stream; text_of(item) → the text delta or None."""
    chunks: list[tuple[float, str]] = []
    t_last = None
    try:
        t0 = time.perf_counter()
        for item in events():
            t = time.perf_counter()
            text = text_of(item)
            if text:
                chunks.append((t, text))
                t_last = t
        t_end = time.perf_counter()
    finally:
        client.close()
    return t0, t_last, t_end, chunks


def raw_chat(fake, timeout: float = 120.0) -> RawResult:
    """openai SDK, Chat Completions: the typed chunks."""
    client = _openai(fake, timeout)
    return _typed(client, lambda: client.chat.completions.create(
        model=MODEL, messages=MESSAGES, stream=True, stream_options={"include_usage": True}),
        lambda c: c.choices[0].delta.content if c.choices else None)


def raw_responses(fake, timeout: float = 120.0) -> RawResult:
    """openai SDK, Responses: the typed events, response.output_text.delta."""
    client = _openai(fake, timeout)
    return _typed(client, lambda: client.responses.create(model=MODEL, input="bench", stream=True),
                  lambda e: e.delta if e.type == "response.output_text.delta" else None)


def raw_anthropic(fake, timeout: float = 120.0) -> RawResult:
    """anthropic SDK, Messages: the typed events, content_block_delta / text_delta."""
    client = _anthropic(fake, timeout)
    return _typed(client, lambda: client.messages.create(
        model=MODEL, max_tokens=MAX_TOKENS, messages=MESSAGES, stream=True),
        lambda e: e.delta.text if e.type == "content_block_delta" and e.delta.type == "text_delta" else None)


def _decoded(client, open_response, text_of: Callable[[dict], str | None]) -> tuple[float, str]:
    """The SDK's request with the SSE `data:` lines decoded as plain JSON, as Numi's adapters do.
    (seconds to the end of the stream, text)"""
    parts: list[str] = []
    try:
        t0 = time.perf_counter()
        with open_response() as resp:
            for line in resp.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                text = text_of(json.loads(line[6:]))
                if text:
                    parts.append(text)
        return time.perf_counter() - t0, "".join(parts)
    finally:
        client.close()


def _chat_text(d: dict) -> str | None:
    choices = d.get("choices") or ()
    return choices[0].get("delta", {}).get("content") if choices else None


def decode_chat(fake, timeout: float = 120.0) -> tuple[float, str]:
    client = _openai(fake, timeout)
    return _decoded(client, lambda: client.chat.completions.with_streaming_response.create(
        model=MODEL, messages=MESSAGES, stream=True, stream_options={"include_usage": True}), _chat_text)


def decode_responses(fake, timeout: float = 120.0) -> tuple[float, str]:
    client = _openai(fake, timeout)
    return _decoded(client, lambda: client.responses.with_streaming_response.create(
        model=MODEL, input="bench", stream=True),
        lambda d: d.get("delta") if d.get("type") == "response.output_text.delta" else None)


def decode_anthropic(fake, timeout: float = 120.0) -> tuple[float, str]:
    client = _anthropic(fake, timeout)
    return _decoded(client, lambda: client.messages.with_streaming_response.create(
        model=MODEL, max_tokens=MAX_TOKENS, messages=MESSAGES, stream=True),
        lambda d: d["delta"].get("text") if d.get("type") == "content_block_delta"
        and d["delta"].get("type") == "text_delta" else None)


@dataclass(frozen=True)
class Wire:
    name: str  # Numi's wire_api
    kind: str  # the provider kind
    root: bool  # base_url is fake.url (Anthropic) rather than fake.base_url (…/v1)
    path: str  # the fake's route
    sdk: str  # what the baseline reads, for the printout
    raw: Callable[..., RawResult]
    decode: Callable[..., tuple[float, str]]


WIRES = [
    Wire("chat_completions", "openai_compatible", False, S.CHAT_PATH,
         "openai chat.completions", raw_chat, decode_chat),
    Wire("responses", "openai", False, S.RESPONSES_PATH, "openai responses", raw_responses, decode_responses),
    Wire("anthropic_messages", "anthropic", True, S.MESSAGES_PATH,
         "anthropic messages", raw_anthropic, decode_anthropic),
]
_SELECTED = [a.strip() for a in os.environ.get("NUMI_BENCH_APIS", "").split(",") if a.strip()]
_unknown = set(_SELECTED) - {w.name for w in WIRES}
assert not _unknown, f"NUMI_BENCH_APIS: unknown {sorted(_unknown)}; known: {[w.name for w in WIRES]}"
SELECTED = [w for w in WIRES if not _SELECTED or w.name in _SELECTED]


# --- Numi ------------------------------------------------------------------------

class Numi:
    """A real server with one provider + model per wire API, all pointing at the fake."""

    def __init__(self, data_dir, fake, wires: list[Wire]):
        self.server = ServerProcess(data_dir).start()
        self.api = self.server.api()
        self.model_ids: dict[str, str] = {}
        for w in wires:
            body = {"kind": w.kind, "name": f"Bench {w.name}",
                    "base_url": fake.url if w.root else fake.base_url, "timeout": 30}
            if w.kind != "openai_compatible":
                body["api_key"] = "x"
            r = self.api.post("/api/providers", body)
            assert r.status == 201, r
            r = self.api.post("/api/models", {"provider_id": r.body["id"], "api_model": MODEL,
                                              "wire_api": w.name, "label": f"Bench {w.name}"})
            assert r.status == 201, r
            assert r.body["wire_api"] == w.name, r.body
            self.model_ids[w.name] = r.body["id"]
        self.n = 0

    def chat(self, wire: str) -> str:
        # A title, so no title request goes to the fake after the turn.
        r = self.api.post("/api/chats", {"model_id": self.model_ids[wire], "title": "bench"})
        assert r.status == 201, r
        return r.body["id"]

    def socket(self, chat_id: str):
        return connect(self.server.ws_url(chat_id), compression=None, max_size=None, open_timeout=10,
                       additional_headers={"Authorization": f"Bearer {self.server.token}"})

    def turn(self, wire: str, expected_len: int, timeout: float = 120.0):
        """One turn in a fresh chat: (t_send, t_all_content, t_turn_end, frames) with
        frames = [(perf_counter at receive, delta text)] of the content events."""
        chat = self.chat(wire)
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
                elif kind == "snapshot":
                    # Within the protocol, but a relay that keeps up never sends one mid-turn.
                    raise AssertionError(f"this socket fell behind the event log after {got} characters"
                                         f" and was sent a snapshot (event {event['event_id']})")

    def stop(self):
        self.server.stop()


# --- helpers ------------------------------------------------------------------------

def blast_text(n: int) -> str:
    return "".join(TEMPLATE.format(i=i) for i in range(n))


def blast_script(w: Wire, n: int) -> dict:
    return {"path": w.path, "steps": [S.blast(n, TEMPLATE), S.usage(5, n)]}


def latency_script(w: Wire, n: int) -> dict:
    return {"path": w.path, "steps": [S.delay(LAT_INTERVAL), *[S.text(f"<{i}>") for i in range(n)],
                                      S.usage(5, n)]}


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
    assert SELECTED, "NUMI_BENCH_APIS selects no wire API"
    numi = Numi(tmp_path / "data", fake, SELECTED)
    results: dict[str, dict] = {}
    started = time.monotonic()
    print()
    print(f"relay  {DELTAS} deltas, median of {RUNS} runs after a warm-up, fake provider in {fake.mode}, "
          f"{os.cpu_count()} CPUs")
    try:
        for w in SELECTED:
            t = time.monotonic()
            throughput = _throughput(fake, numi, w)
            latency = _latency(fake, numi, w)
            results[w.name] = {"sdk": w.sdk, "provider_kind": w.kind, "throughput": throughput,
                               "latency": latency, "seconds": time.monotonic() - t}
            _print_api(w, throughput, latency)
    finally:
        numi.stop()

    ratios = {name: r["throughput"]["ratio"] for name, r in results.items()}
    p99s = {name: r["latency"]["numi"]["p99_ms"] for name, r in results.items()}
    report = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "openai": openai.__version__, "anthropic": anthropic.__version__},
        "fake_provider": fake.mode,
        "deltas": DELTAS, "runs": RUNS, "latency_deltas": LAT_DELTAS,
        "apis": results,
        "summary": {name: {"ratio": ratios[name], "ratio_ok": ratios[name] <= RATIO_TARGET,
                           "ratio_vs_decode": results[name]["throughput"]["ratio_vs_decode"],
                           "latency_p99_ms": p99s[name], "latency_ok": p99s[name] <= P99_TARGET_MS}
                    for name in results},
        "targets": {"ratio": RATIO_TARGET, "latency_p99_ms": P99_TARGET_MS, "gross_factor": GROSS,
                    "ratio_ok": all(r <= RATIO_TARGET for r in ratios.values()),
                    "latency_ok": all(p <= P99_TARGET_MS for p in p99s.values())},
        "seconds": time.monotonic() - started,
    }
    path = write_artifact("relay.json", report)

    print("relay summary  Numi / raw SDK: " + "  ".join(
        f"{name} {ratios[name]:.2f} {verdict(ratios[name] <= RATIO_TARGET)}" for name in ratios)
        + f"  (target ≤ {RATIO_TARGET})")
    print("relay summary  latency p99: " + "  ".join(
        f"{name} {p99s[name]:.1f} ms {verdict(p99s[name] <= P99_TARGET_MS)}" for name in p99s)
        + f"  (target ≤ {P99_TARGET_MS:g} ms)")
    print(f"relay figures  {path}  ({report['seconds']:.0f} s)")

    gross = [f"{name}: Numi/raw throughput ratio {ratios[name]:.2f} is grossly off"
             for name in ratios if ratios[name] > GROSS * RATIO_TARGET]
    gross += [f"{name}: Numi p99 latency {p99s[name]:.1f} ms is grossly off"
              for name in p99s if p99s[name] > GROSS * P99_TARGET_MS]
    assert on_target(not gross), "; ".join(gross)


def _print_api(w: Wire, tp: dict, lat: dict) -> None:
    r, n, d = tp["raw"], tp["numi"], tp["decode"]
    ln, lr = lat["numi"], lat["raw"]
    ratio, p99 = tp["ratio"], ln["p99_ms"]
    print(f"{w.name:<19} raw SDK ({w.sdk}) {r['median_s']:.2f} s  numi {n['median_s']:.2f} s "
          f"(turn_end {n['turn_end_median_s']:.2f} s, {n['frames_median']:.0f} frames)  "
          f"ratio {ratio:.2f} (target ≤ {RATIO_TARGET}) {verdict(ratio <= RATIO_TARGET)}  |  "
          f"plain-JSON decode {d['median_s']:.2f} s, numi/decode {tp['ratio_vs_decode']:.2f}")
    print(f"{'':<19} latency numi p50 {ln['p50_ms']:.1f} ms p99 {ln['p99_ms']:.1f} ms max {ln['max_ms']:.1f} ms; "
          f"raw p50 {lr['p50_ms']:.1f} ms p99 {lr['p99_ms']:.1f} ms; "
          f"added p50 {lat['added_p50_ms']:.1f} ms p99 {lat['added_p99_ms']:.1f} ms "
          f"(target p99 ≤ {P99_TARGET_MS:g} ms) {verdict(p99 <= P99_TARGET_MS)}")


def _throughput(fake, numi: Numi, w: Wire) -> dict:
    expected = blast_text(DELTAS)
    raw_times, numi_times, numi_end_times, numi_frames, decode_times = [], [], [], [], []

    def run_raw() -> float:
        fake.enqueue(blast_script(w, DELTAS))
        t0, t_last, _t_end, chunks = w.raw(fake)
        assert len(chunks) == DELTAS, f"{w.name}: raw SDK got {len(chunks)} text deltas of {DELTAS}"
        assert "".join(c for _, c in chunks) == expected, f"{w.name}: raw SDK text differs"
        return t_last - t0

    def run_numi() -> tuple[float, float, int]:
        fake.enqueue(blast_script(w, DELTAS))
        t_send, t_content, t_end, frames = numi.turn(w.name, len(expected))
        text = "".join(d for _, d in frames)
        assert len(text) == len(expected), f"{w.name}: numi delivered {len(text)} chars of {len(expected)}"
        assert text == expected, f"{w.name}: numi's concatenated content differs from what the provider sent"
        return t_content - t_send, t_end - t_send, len(frames)

    def run_decode() -> float:
        fake.enqueue(blast_script(w, DELTAS))
        took, text = w.decode(fake)
        assert text == expected, f"{w.name}: the plain-JSON decode's text differs"
        return took

    # The fake keeps every request with its 20 000 write times, and reading them back from
    # its process costs more the more there are: start each wire API with an empty record.
    fake.reset()
    run_numi()  # warm-up: imports, connection setup, page cache, the server's first turn on this wire
    paths = [r.path for r in fake.requests]
    assert paths == [w.path], f"{w.name}: Numi called {paths}, expected {w.path}"
    run_raw()
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
    decode_med = statistics.median(decode_times)
    return {
        "deltas": DELTAS, "runs": RUNS,
        "raw": {"sdk": w.sdk, "median_s": raw_med, "runs_s": raw_times, "deltas_per_s": DELTAS / raw_med},
        "numi": {"median_s": numi_med, "runs_s": numi_times,
                 "turn_end_median_s": statistics.median(numi_end_times), "turn_end_runs_s": numi_end_times,
                 "frames_median": statistics.median(numi_frames), "frames_runs": numi_frames,
                 "deltas_per_s": DELTAS / numi_med},
        "decode": {"median_s": decode_med, "runs_s": decode_times},
        "ratio": numi_med / raw_med,
        "ratio_vs_decode": numi_med / decode_med,
        "ratio_turn_end": statistics.median(numi_end_times) / raw_med,
    }


def _latency(fake, numi: Numi, w: Wire) -> dict:
    n = LAT_DELTAS
    expected = "".join(f"<{i}>" for i in range(n))
    fake.reset()  # drop the throughput runs' requests: only these two are read back

    before = len(fake.requests)
    fake.enqueue(latency_script(w, n))
    _t0, _t_last, _t_end, chunks = w.raw(fake)
    assert "".join(c for _, c in chunks) == expected, f"{w.name}: raw SDK latency text differs"
    raw_req = fake.requests[before]
    assert raw_req.path == w.path
    raw_lat = latencies_ms(raw_req.write_times, receive_times(chunks), n)

    before = len(fake.requests)
    fake.enqueue(latency_script(w, n))
    _t_send, _t_content, _t_end, frames = numi.turn(w.name, len(expected))
    assert "".join(d for _, d in frames) == expected, f"{w.name}: numi latency text differs"
    numi_req = fake.requests[before]
    assert numi_req.path == w.path, f"{w.name}: Numi called {numi_req.path}"
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
