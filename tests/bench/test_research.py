"""Research benchmark: a research turn over 20 fake pages of 200 KB each.

A real server process; the fake provider (in this process) plans 4 searches and writes a short
report; the fake SearXNG finds 5 pages a search, all 20 of which are read. Per run:
- peak memory growth: the server's VmHWM after the turn minus its VmRSS before (the peak is
  reset first through /proc/<pid>/clear_refs), target ≤ 100 MB;
- Numi's own time: send → turn_end, minus the time the fake web spent working out its answers
  (pages read side by side count once). Sending the pages over loopback and the fake provider's
  two short answers count as Numi's, so the figure errs high.
  Target ≤ 2 s.
Medians and ranges are printed; a target prints PASS / MISS and fails the test only when
grossly off (3x), since the machine may be small and noisy. Figures go to
test-artifacts/bench/research.json. Knobs: NUMI_BENCH_RUNS (3).
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from tests.bench.conftest import SMOKE, on_target, size, write_artifact
from tests.fakeprovider import script as S
from tests.research_fakes import FakeWeb, page_html, trust_local, use_searxng

PAGES, PAGE_KB, SEARCHES = (4, 20, 2) if SMOKE else (20, 200, 4)
MEMORY_MB, OWN_S = 100, 2.0


def big_page(i: int) -> str:
    para = f"<p>Paragraph about subject {i}: " + "words of a long article " * 8 + "</p>\n"
    body = para * (PAGE_KB * 1024 // len(para) + 1)
    return page_html(str(i), body)[: PAGE_KB * 1024]


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # 5: reset the peak RSS (VmHWM) to the current RSS


def one_run(setup, web: FakeWeb, n: int) -> dict:
    pid = setup.server.proc.pid
    queries = [f"query {n}.{k}" for k in range(SEARCHES)]
    setup.fake.enqueue([S.text(json.dumps(queries))], [S.text("A short report [1][20].")])
    chat = setup.chat(title=f"bench {n}")
    sock = setup.socket(chat)
    reset_peak(pid)
    before = status_kb(pid, "VmRSS")
    busy_before = web.busy_s
    web.queries.clear()
    started = time.perf_counter()
    sock.send(type="send", request_id=f"r{n}", content="Tell me about the subjects.", research=True)
    end = sock.until("turn_end", timeout=120)
    wall = time.perf_counter() - started
    sock.close()
    assert end["status"] == "completed", sock.of("error")
    last = sock.of("research_progress")[-1]
    assert (last["searches"], last["found"], last["read"]) == (SEARCHES, PAGES, PAGES), last
    grown = (status_kb(pid, "VmHWM") - before) / 1024
    fake_s = web.busy_s - busy_before
    return {"wall_s": wall, "fake_s": fake_s, "own_s": wall - fake_s, "peak_growth_mb": grown}


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


def test_research_turn_over_20_pages_of_200_kb(setup):
    runs = size("NUMI_BENCH_RUNS", 3, 1)
    web = FakeWeb({str(i): big_page(i) for i in range(1, PAGES + 1)}, per_query=PAGES // SEARCHES)
    try:
        use_searxng(setup.api, web.url)
        trust_local(setup.api, web.url)  # the fake pages are on this computer
        r = setup.api.patch("/api/settings", {"research": {"max_searches": SEARCHES, "max_pages": PAGES}})
        assert r.status == 200, r
        one_run(setup, web, 0)  # warm-up: first imports, first connections
        results = [one_run(setup, web, n) for n in range(1, runs + 1)]
    finally:
        web.close()
    own = [r["own_s"] for r in results]
    mem = [r["peak_growth_mb"] for r in results]
    summary = {"runs": results, "pages": PAGES, "page_kb": PAGE_KB,
               "own_s_median": statistics.median(own), "peak_growth_mb_median": statistics.median(mem)}
    write_artifact("research.json", summary)
    print(f"\nresearch over {PAGES} pages × {PAGE_KB} KB, {runs} runs:")
    print(f"  Numi's own time  median {statistics.median(own):.2f} s  range {min(own):.2f}–{max(own):.2f} s"
          f"  (fake web {statistics.median(r['fake_s'] for r in results):.2f} s)"
          f"  target ≤ {OWN_S} s  {verdict(max(own), OWN_S)}")
    print(f"  peak memory growth median {statistics.median(mem):.1f} MB  range {min(mem):.1f}–{max(mem):.1f} MB"
          f"  target ≤ {MEMORY_MB} MB  {verdict(max(mem), MEMORY_MB)}")
    assert on_target(max(own) <= 3 * OWN_S and max(mem) <= 3 * MEMORY_MB)
