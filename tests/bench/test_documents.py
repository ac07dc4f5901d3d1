"""Documents (issue 37): opening a document with many versions, and a diff of two versions of a large one.

In process, on a database holding one 200 KB Markdown document with 200 versions (each a few lines
changed from the one before, as a model's and a person's edits leave them):
1. Opening it: `GET /api/documents/{id}` through the Flask test client (the documents routes on an app
   of their own: the route, its queries and its JSON), the latest version and version 1 in turn.
   Target: p95 ≤ 100 ms. Baseline: the same document with one version.
2. A diff of two of its versions on the server: `GET /api/documents/{id}/diff?from=A&to=B`, pairs
   from adjacent versions to version 1 against the latest. Target: p95 ≤ 50 ms. Baseline: difflib's
   own `unified_diff` over the two texts' lines (what the route improves on or pays for).
Medians, p95 and ranges are printed; figures go to test-artifacts/bench/documents.json.
Knobs (env): NUMI_BENCH_DOC_KB (200), NUMI_BENCH_DOC_VERSIONS (200), NUMI_BENCH_DOC_RUNS (60).
"""
from __future__ import annotations

import difflib
import os
import random
import statistics
import time

import pytest
from flask import Flask

from backend import errors
from backend.features.documents import routes, store
from backend.store.db import db, open_database

from .conftest import on_target, size, write_artifact
from .test_history_scale import pct, summary, verdict

KB = size("NUMI_BENCH_DOC_KB", 200, 4)
VERSIONS = size("NUMI_BENCH_DOC_VERSIONS", 200, 5)
RUNS = size("NUMI_BENCH_DOC_RUNS", 60, 3)
WARM = 3
OPEN_P95_MS = 100.0
DIFF_P95_MS = 50.0

WORDS = ("alpha", "budget", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
         "kettle", "lantern", "meadow", "nectar", "orbit", "pepper", "quartz", "river", "saffron", "tundra")


def first_text(rng: random.Random, kb: int) -> list[str]:
    lines: list[str] = []
    total, n = 0, 0
    while total < kb * 1024:
        line = (f"## Part {n // 40}" if n % 40 == 0 else
                f"- {' '.join(rng.choice(WORDS) for _ in range(rng.randrange(4, 12)))} ({n})")
        lines.append(line)
        total += len(line) + 1
        n += 1
    return lines


def edited(rng: random.Random, lines: list[str], version: int) -> list[str]:
    new = list(lines)
    for _ in range(rng.randrange(1, 5)):
        at = rng.randrange(len(new))
        kind = rng.randrange(3)
        if kind == 0:
            new[at] = f"- changed in version {version}: {rng.choice(WORDS)} {rng.choice(WORDS)}"
        elif kind == 1:
            new.insert(at, f"- added in version {version}")
        elif len(new) > 10:
            del new[at]
    return new


@pytest.fixture
def world(tmp_path):
    open_database(str(tmp_path / "numi.db"))
    db.connect(reuse_if_open=True)
    from backend.store.models import Chat

    chat_id = Chat.create(title="Bench").id
    rng = random.Random(37)
    lines = first_text(rng, KB)
    texts = ["\n".join(lines) + "\n"]
    with db.atomic():
        store.create(chat_id, "doc_bench0000000000", "Big plan", "markdown", texts[0])
        store.create(chat_id, "doc_single000000000", "Big plan", "markdown", texts[0])
        for version in range(2, VERSIONS + 1):
            lines = edited(rng, lines, version)
            texts.append("\n".join(lines) + "\n")
            store.revise("doc_bench0000000000", lambda old, d, t=texts[-1]: t, "model" if version % 3 else "person")
    app = Flask(__name__)
    errors.init_app(app)
    routes.register(app)
    yield app.test_client(), texts, rng
    db.close()


def timed(client, path: str) -> tuple[float, dict]:
    t = time.perf_counter()
    r = client.get(path)
    ms = (time.perf_counter() - t) * 1000
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    return ms, r.get_json()


def test_opening_a_document_with_many_versions_and_diffing_two(world):
    client, texts, rng = world
    started = time.monotonic()

    # 1. Opening: the latest and the first version in turn; the one-version document as the baseline.
    open_ms, single_ms = [], []
    for i in range(WARM + RUNS):
        version = "" if i % 2 else "?version=1"
        ms, body = timed(client, f"/api/documents/doc_bench0000000000{version}")
        base, single = timed(client, "/api/documents/doc_single000000000")
        if i >= WARM:
            open_ms.append(ms)
            single_ms.append(base)
    assert len(body["versions"]) == VERSIONS and body["content"] in (texts[0], texts[-1])
    assert len(single["versions"]) == 1

    # 2. Diffs: adjacent versions, a few apart, and the first against the latest.
    pairs = [(v, v + 1) for v in range(1, VERSIONS)] + [(v, min(VERSIONS, v + 10)) for v in range(1, VERSIONS)]
    rng.shuffle(pairs)
    pairs = [(1, VERSIONS)] + pairs
    diff_ms, difflib_ms, changed = [], [], []
    for i in range(WARM + RUNS):
        a, b = pairs[i % len(pairs)]
        ms, body = timed(client, f"/api/documents/doc_bench0000000000/diff?from={a}&to={b}")
        old, new = texts[a - 1].splitlines(keepends=True), texts[b - 1].splitlines(keepends=True)
        t = time.perf_counter()
        reference = "".join(difflib.unified_diff(old, new, n=3))
        base = (time.perf_counter() - t) * 1000
        if i >= WARM:
            diff_ms.append(ms)
            difflib_ms.append(base)
            changed.append(body["added"] + body["removed"])
        assert bool(reference) == (body["added"] + body["removed"] > 0)

    open_p95, diff_p95 = pct(open_ms, 95), pct(diff_ms, 95)
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(), "kb": KB,
              "versions": VERSIONS, "runs": RUNS, "open": summary(open_ms), "open_one_version": summary(single_ms),
              "diff": summary(diff_ms), "difflib_alone": summary(difflib_ms),
              "lines_changed_median": statistics.median(changed), "seconds": time.monotonic() - started}
    path = write_artifact("documents.json", report)

    print(f"\ndocuments  a {KB} KB document with {VERSIONS} versions, {RUNS} runs; {os.cpu_count()} CPUs")
    print(f"documents  open (GET /api/documents/{{id}}): median {statistics.median(open_ms):.2f} ms, "
          f"p95 {open_p95:.2f} ms, range {min(open_ms):.2f}–{max(open_ms):.2f} ms (target p95 ≤ {OPEN_P95_MS:.0f} ms) "
          f"{verdict(open_p95 <= OPEN_P95_MS)}")
    print(f"documents  baseline, one version: median {statistics.median(single_ms):.2f} ms, "
          f"p95 {pct(single_ms, 95):.2f} ms, range {min(single_ms):.2f}–{max(single_ms):.2f} ms")
    print(f"documents  diff of two versions (GET …/diff): median {statistics.median(diff_ms):.2f} ms, "
          f"p95 {diff_p95:.2f} ms, range {min(diff_ms):.2f}–{max(diff_ms):.2f} ms (target p95 ≤ {DIFF_P95_MS:.0f} ms) "
          f"{verdict(diff_p95 <= DIFF_P95_MS)}; median {statistics.median(changed):.0f} lines changed")
    print(f"documents  baseline, difflib.unified_diff alone: median {statistics.median(difflib_ms):.2f} ms, "
          f"p95 {pct(difflib_ms, 95):.2f} ms, range {min(difflib_ms):.2f}–{max(difflib_ms):.2f} ms")
    print(f"documents  figures: {path}")
    assert on_target(open_p95 <= OPEN_P95_MS), f"opening a document with {VERSIONS} versions: p95 {open_p95:.2f} ms"
    assert on_target(diff_p95 <= DIFF_P95_MS), f"a diff of two versions: p95 {diff_p95:.2f} ms"
