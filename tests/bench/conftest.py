"""Shared pieces of the benchmarks: where they write their figures, the fake's placement, smoke runs.

NUMI_BENCH_SMOKE=1 (`make test` sets it for tests/bench) runs every benchmark at tiny
sizes with no timing targets, so one that errors is seen long before the next
`make bench`: the figures of a smoke run measure nothing.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "bench"


SMOKE = os.environ.get("NUMI_BENCH_SMOKE") == "1"


def size(name: str, full: int, smoke: int) -> int:
    """A benchmark's size: env `name` if set, else `full`, or `smoke` in a smoke run."""
    return int(os.environ.get(name, smoke if SMOKE else full))


def on_target(ok: bool) -> bool:
    """A timing assert's outcome: always true in a smoke run, whose sizes are too small to time."""
    return SMOKE or ok


def answer_request(requests: list, content: str):
    """The streamed request that answers the user message `content`.

    A turn can make other requests first (a compaction summary, a title): only one
    is the answer, the one whose last message is the person's.
    """
    found = [r for r in requests if r.body.get("stream") and _last_text(r.body) == content]
    assert len(found) == 1, [(r.path, _last_text(r.body)[:80]) for r in requests]
    return found[0]


def _last_text(body: dict) -> str:
    messages = body.get("messages") or body.get("input") or []
    content = messages[-1].get("content", "") if messages else ""
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content


def write_artifact(name: str, data: dict) -> Path:
    if SMOKE:  # a smoke run's figures would overwrite a real run's
        name = f"smoke-{name}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


@pytest.fixture
def bench_fake():
    """The fake provider with per-delta write times.

    By default in its own process (NUMI_BENCH_FAKE=process), so that neither
    the baseline SDK reader nor the benchmark's WebSocket client shares a GIL
    with the writer; NUMI_BENCH_FAKE=thread runs it in this process instead.
    """
    mode = os.environ.get("NUMI_BENCH_FAKE", "process")
    if mode == "thread":
        from tests.fakeprovider.server import FakeProvider
        fake = FakeProvider(record_times=True)
    else:
        from tests.fakeprovider.control import FakeProviderProcess
        fake = FakeProviderProcess(record_times=True)
    fake.mode = mode
    yield fake
    fake.close()
