"""Shared pieces of the benchmarks: where they write their figures, and the fake's placement."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "bench"


def write_artifact(name: str, data: dict) -> Path:
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
