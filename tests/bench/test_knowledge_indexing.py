"""Knowledge-base indexing through the real server: files/s, PDF pages/s, memory, a watched change.

A real server process (tests/numi_client.py) is given folders through the API (POST /api/knowledge)
and polled (GET /api/knowledge/<id>) until the base is `ready`; what it reads, it reads as a person's
app does: the scanning thread, the parse pool's worker processes, the index file.

1. Files: 10 000 text, Markdown and HTML files (~200 MB, 2–70 KB each, log-uniform, in 100 folders)
   of English-like text from the query benchmark's Zipf vocabulary. Target ≥ 100 files/s (from the
   POST to `ready`). Baselines in the same run: reading every file's bytes and hashing them (SHA-256)
   in this process, so the ratio says what indexing costs over I/O; and, informative, the same
   readers (readers.read_file: parse and chunk, no pool, no index) in this one process on every
   tenth file, so the ratio says what the pool and the index add to the parsing itself.
2. Memory while (1) runs: the server's RSS plus its child processes' (the parse workers and
   multiprocessing's resource tracker), summed, sampled from /proc every 50 ms; idle is the
   median of a second's samples after start, before any base exists. Target: peak ≤ 300 MB over
   idle. PSS (shared pages split between processes) is printed too, as the fairer sum.
3. PDFs: 100 PDFs of 20 pages (tests/sample_files.py `pdf`, ~45 lines a page) in a second base.
   Target ≥ 100 pages/s. Baseline: pypdfium2's text extraction alone (open, each page's text)
   in this process, no chunking, no pool, no index.
4. A watched change: a new word is appended to one file of the 10 000, and the base's query
   endpoint is polled until that file is found by it. Target ≤ 1 s from the write (median of the
   touches). Baseline: the same query's latency, taken from the polls themselves.

Targets print PASS / MISS; the test fails when one is missed (not in a smoke run). Figures go to
test-artifacts/bench/knowledge_indexing.json.

Knobs (env): NUMI_BENCH_KNOWLEDGE_FILES (10000), NUMI_BENCH_KNOWLEDGE_PDFS (100),
NUMI_BENCH_KNOWLEDGE_TOUCHES (5).
"""
from __future__ import annotations

import hashlib
import math
import os
import platform
import random
import statistics
import threading
import time
from pathlib import Path

from backend.features.knowledge.readers import read_file
from tests import sample_files
from tests.numi_client import ServerProcess

from . import history_gen
from .conftest import SMOKE, on_target, size, write_artifact
from .test_history_scale import summary, verdict

FILES = size("NUMI_BENCH_KNOWLEDGE_FILES", 10_000, 60)
PDFS = size("NUMI_BENCH_KNOWLEDGE_PDFS", 100, 3)
PAGES_EACH = 3 if SMOKE else 20
TOUCHES = size("NUMI_BENCH_KNOWLEDGE_TOUCHES", 5, 1)
MIN_KB, MAX_KB = (1, 8) if SMOKE else (2, 70)
PER_FOLDER = 100
PARSE_SAMPLE = 10  # the in-process parse baseline reads every tenth file

FILES_PER_S = 100.0
PAGES_PER_S = 100.0
MEMORY_MB = 300.0
TOUCH_S = 1.0
SEED = 20260315
POLL_S = 0.05
DEADLINE_S = 30 if SMOKE else 1200


# --- the files ---------------------------------------------------------------------------------------------------

class Prose:
    """English-like sentences from the Zipf vocabulary, cut from one long run of them (fast to slice)."""

    def __init__(self, seed: int, words: int = 600_000):
        self.rng = random.Random(seed)
        vocab, cum = history_gen.vocabulary(self.rng)
        table = self.rng.choices(vocab, cum_weights=cum, k=words)
        out, i = [], 0
        while i < len(table):
            n = self.rng.randint(6, 22)
            ws = table[i:i + n]
            out.append(ws[0].capitalize() + " " + " ".join(ws[1:]) + self.rng.choice("....?!"))
            i += n
        self.run = " ".join(out) + " "

    def text(self, chars: int) -> str:
        """About `chars` characters of whole sentences."""
        at = self.rng.randrange(len(self.run) - chars - 200)
        start = self.run.find(" ", at) + 1
        end = self.run.find(" ", start + chars)
        return self.run[start:end]

    def words(self, lo: int, hi: int) -> str:
        return self.text(self.rng.randint(lo, hi) * 7).rstrip(".?!").split(" ", 1)[-1][:60].strip() or "Part"

    def paragraphs(self, chars: int) -> list[str]:
        out, left = [], chars
        while left > 0:
            n = min(left, self.rng.randint(300, 1500))
            out.append(self.text(n))
            left -= n + 2
        return out


def write_file(prose: Prose, path: Path, chars: int, kind: str) -> None:
    title = prose.words(2, 6).capitalize()
    parts: list[str] = []
    if kind == "md":
        parts.append(f"# {title}\n")
        while sum(map(len, parts)) < chars:
            parts.append(f"\n## {prose.words(1, 4).capitalize()}\n\n")
            parts.append("\n\n".join(prose.paragraphs(prose.rng.randint(1500, 6000))) + "\n")
        path.write_text("".join(parts))
    elif kind == "html":
        parts.append(f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
                     f"<style>body {{font: 14px sans-serif}}</style></head><body><nav><a href='/'>Home</a></nav>"
                     f"<h1>{title}</h1>\n")
        while sum(map(len, parts)) < chars:
            parts.append(f"<h2>{prose.words(1, 4).capitalize()}</h2>\n")
            parts.extend(f"<p>{p}</p>\n" for p in prose.paragraphs(prose.rng.randint(1500, 6000)))
        parts.append("<script>var x = 1;</script></body></html>\n")
        path.write_text("".join(parts))
    else:
        path.write_text(title + "\n\n" + "\n\n".join(prose.paragraphs(chars)) + "\n")


def make_files(root: Path, prose: Prose, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        folder = root / f"part{i // PER_FOLDER:03d}"
        if i % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        kind = ("md", "txt", "html")[i % 3]
        chars = int(1024 * math.exp(prose.rng.uniform(math.log(MIN_KB), math.log(MAX_KB))))
        path = folder / f"doc{i:05d}.{kind}"
        write_file(prose, path, chars, kind)
        paths.append(path)
    return paths


def pdf_lines(prose: Prose) -> list[str]:
    """A page's lines: ~45 lines of ~90 characters, as a printed page of prose holds."""
    text = prose.text(45 * 90)
    lines, line = [], []
    for word in text.split(" "):
        line.append(word)
        if sum(map(len, line)) + len(line) > 90:
            lines.append(" ".join(line))
            line = []
    return lines + ([" ".join(line)] if line else [])


def make_pdfs(root: Path, prose: Prose, n: int, pages: int) -> list[Path]:
    root.mkdir(parents=True)
    paths = []
    for i in range(n):
        path = root / f"paper{i:04d}.pdf"
        path.write_bytes(sample_files.pdf([pdf_lines(prose) for _ in range(pages)], font_size=9, leading=12,
                                          origin=(54, 740)))
        paths.append(path)
    return paths


# --- measuring ------------------------------------------------------------------------------------------------------

def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


def _kb(path: str, field: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Memory:
    """The server's RSS and PSS with its child processes', sampled from /proc on a thread."""

    def __init__(self, pid: int, every_s: float = POLL_S):
        self.pid, self.every_s = pid, every_s
        self.samples: list[tuple[float, float, float, int]] = []  # (t, rss MB, pss MB, processes)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> tuple[float, float, float, int]:
        pids = [self.pid, *_descendants(self.pid)]
        rss = sum(_kb(f"/proc/{p}/status", "VmRSS:") for p in pids) / 1024
        pss = sum(_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids) / 1024
        return time.monotonic(), rss, pss, len(pids)

    def start(self) -> None:
        def run():
            while not self._stop.wait(self.every_s):
                self.samples.append(self.sample())
        self._thread = threading.Thread(target=run, name="bench-memory", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def idle(self, seconds: float = 1.0) -> tuple[float, float]:
        """Median RSS and PSS over `seconds` of samples."""
        got = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            got.append(self.sample())
            time.sleep(self.every_s)  # a sampling interval, not a wait for an event
        return statistics.median(s[1] for s in got), statistics.median(s[2] for s in got)


def wait_ready(api, base_id: str, documents: int) -> dict:
    """The base once `ready` with `documents` read (or listed as problems), polled every POLL_S."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        r = api.get(f"/api/knowledge/{base_id}")
        assert r.status == 200, r
        body = r.body
        if body["status"] == "ready":
            # The scan is over (the base was `indexing` from the POST on): what it has is all it will have.
            assert body["documents"] + len(body["problems"]) == documents, body
            return body
        assert time.monotonic() < deadline, f"the base was not read within {DEADLINE_S} s: {body}"
        time.sleep(POLL_S)


def index_folder(api, name: str, folder: Path, documents: int) -> tuple[float, dict]:
    t = time.perf_counter()
    r = api.post("/api/knowledge", {"name": name, "paths": [str(folder)]})
    assert r.status == 201, r
    body = wait_ready(api, r.body["id"], documents)
    return time.perf_counter() - t, body


def query_ms(api, base_id: str, q: str) -> tuple[float, list]:
    t = time.perf_counter()
    r = api.post(f"/api/knowledge/{base_id}/query", {"q": q, "limit": 5})
    ms = (time.perf_counter() - t) * 1000
    assert r.status == 200, r
    return ms, r.body["items"]


def touch(api, base_id: str, path: Path, word: str) -> tuple[float, list[float]]:
    """Seconds from adding `word` to `path` until a query finds it there, and the polls' latencies (ms)."""
    sentence = f"The {word} was seen here last."
    text = path.read_text()
    if path.suffix == ".html":  # an edit inside the page (libxml2 drops text after </html>)
        text = text.replace("</body>", f"<p>{sentence}</p></body>")
    else:
        text += f"\n{sentence}\n"
    path.write_text(text)
    t = time.perf_counter()
    polls = []
    deadline = time.monotonic() + 30
    while True:
        ms, items = query_ms(api, base_id, word)
        polls.append(ms)
        if any(i["file"] == str(path) for i in items):
            return time.perf_counter() - t, polls
        assert time.monotonic() < deadline, f"{path.name}'s new word was not found within 30 s"
        time.sleep(0.01)  # the poll's period: a change is seen within 10 ms of being searchable


# --- baselines ------------------------------------------------------------------------------------------------------

def hash_all(paths: list[Path]) -> tuple[float, int]:
    t = time.perf_counter()
    total = 0
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        hashlib.sha256(data).digest()
        total += len(data)
    return time.perf_counter() - t, total


def parse_sample(paths: list[Path]) -> tuple[float, int, int]:
    """(seconds, files, chunks) of read_file over every PARSE_SAMPLE-th file, in this process."""
    sample = paths[::PARSE_SAMPLE]
    t = time.perf_counter()
    chunks = sum(len(read_file(str(p)).chunks) for p in sample)
    return time.perf_counter() - t, len(sample), chunks


def pdfium_text(paths: list[Path]) -> tuple[float, int]:
    import pypdfium2 as pdfium

    t = time.perf_counter()
    pages = 0
    for p in paths:
        pdf = pdfium.PdfDocument(str(p))
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
            pages += 1
        pdf.close()
    return time.perf_counter() - t, pages


# --- the benchmark --------------------------------------------------------------------------------------------------

def test_knowledge_indexing(tmp_path):
    started = time.monotonic()
    print()
    prose = Prose(SEED, 30_000 if SMOKE else 600_000)
    t = time.monotonic()
    paths = make_files(tmp_path / "docs", prose, FILES)
    pdfs = make_pdfs(tmp_path / "papers", prose, PDFS, PAGES_EACH)
    total_bytes = sum(p.stat().st_size for p in paths)
    print(f"indexing  {FILES:,} files ({total_bytes / 1e6:.0f} MB) and {PDFS} PDFs of {PAGES_EACH} pages written in "
          f"{time.monotonic() - t:.1f} s; {os.cpu_count()} CPUs, a shared machine")

    # Baselines first, which also bring the files into the page cache for the server as for them.
    hash_s, hashed = hash_all(paths)
    assert hashed == total_bytes
    parse_s, parsed_files, parsed_chunks = parse_sample(paths)
    pdfium_s, pdfium_pages = pdfium_text(pdfs)
    assert pdfium_pages == PDFS * PAGES_EACH

    server = ServerProcess(tmp_path / "data").start()
    memory = Memory(server.proc.pid)
    try:
        api = server.api()
        idle_rss, idle_pss = memory.idle(0.2 if SMOKE else 1.0)
        memory.start()
        files_s, base = index_folder(api, "Docs", tmp_path / "docs", FILES)
        memory.stop()
        assert base["problems"] == [] and base["documents"] == FILES, base
        peak = max(memory.samples, key=lambda s: s[1])
        peak_pss = max(s[2] for s in memory.samples)

        pdf_s, papers = index_folder(api, "Papers", tmp_path / "papers", PDFS)
        assert papers["problems"] == [] and papers["documents"] == PDFS, papers
        hit = query_ms(api, papers["id"], pdf_lines(prose)[0])  # warms the statements; any answer will do
        assert hit[0] >= 0

        touches, polls = [], []
        rng = random.Random(SEED)
        for k in range(TOUCHES):
            target = paths[rng.randrange(FILES)]
            took, latencies = touch(api, base["id"], target, f"zanzibarquokka{k}")
            touches.append(took)
            polls.extend(latencies)
            wait_ready(api, base["id"], FILES)
    finally:
        memory.stop()
        server.stop()

    files_per_s = FILES / files_s
    pages = PDFS * PAGES_EACH
    pages_per_s = pages / pdf_s
    over_idle = peak[1] - idle_rss
    touch_median = statistics.median(touches)
    poll = summary(polls)
    report = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "shared": True},
        "files": {"count": FILES, "bytes": total_bytes, "seconds": files_s, "files_per_s": files_per_s,
                  "mb_per_s": total_bytes / 1e6 / files_s, "chunks": base["chunks"],
                  "baseline_hash_s": hash_s, "ratio_over_hash": files_s / hash_s,
                  "baseline_parse": {"files": parsed_files, "chunks": parsed_chunks, "seconds": parse_s,
                                     "files_per_s": parsed_files / parse_s},
                  "ratio_over_parse": files_s / (parse_s * FILES / parsed_files)},
        "memory_mb": {"idle_rss": idle_rss, "idle_pss": idle_pss, "peak_rss": peak[1], "peak_pss": peak_pss,
                      "peak_processes": peak[3], "rss_over_idle": over_idle, "pss_over_idle": peak_pss - idle_pss,
                      "samples": len(memory.samples)},
        "pdf": {"files": PDFS, "pages": pages, "seconds": pdf_s, "pages_per_s": pages_per_s,
                "chunks": papers["chunks"], "baseline_pdfium_s": pdfium_s, "ratio_over_pdfium": pdf_s / pdfium_s},
        "touch": {"seconds": touches, "median_s": touch_median, "query": poll},
        "targets": {"files_per_s": FILES_PER_S, "pages_per_s": PAGES_PER_S, "memory_over_idle_mb": MEMORY_MB,
                    "touch_s": TOUCH_S},
        "seconds": time.monotonic() - started,
    }
    path = write_artifact("knowledge_indexing.json", report)
    f = report["files"]
    print(f"indexing  {FILES:,} files through the server: {files_s:.1f} s, {files_per_s:.0f} files/s, "
          f"{f['mb_per_s']:.1f} MB/s, {base['chunks']:,} chunks (target ≥ {FILES_PER_S:g} files/s)  "
          f"{verdict(files_per_s >= FILES_PER_S)}")
    print(f"indexing    baseline read + SHA-256 here: {hash_s:.2f} s; indexing is {f['ratio_over_hash']:.0f}x that. "
          f"read_file alone here (1 process, every {PARSE_SAMPLE}th file): "
          f"{f['baseline_parse']['files_per_s']:.0f} files/s; the server takes {f['ratio_over_parse']:.2f}x its time")
    m = report["memory_mb"]
    print(f"indexing  memory, server + {peak[3] - 1} child processes: idle RSS {idle_rss:.0f} MB, peak {peak[1]:.0f} MB "
          f"= {over_idle:.0f} MB over idle (target ≤ {MEMORY_MB:g})  {verdict(over_idle <= MEMORY_MB)}; "
          f"PSS idle {idle_pss:.0f} MB, peak {peak_pss:.0f} MB ({m['pss_over_idle']:.0f} over)")
    print(f"indexing  {PDFS} PDFs, {pages} pages: {pdf_s:.1f} s, {pages_per_s:.0f} pages/s "
          f"(target ≥ {PAGES_PER_S:g})  {verdict(pages_per_s >= PAGES_PER_S)}; baseline pypdfium2 text alone here "
          f"{pdfium_s:.2f} s ({pages / pdfium_s:.0f} pages/s), indexing {pdf_s / pdfium_s:.1f}x that")
    print(f"indexing  one file of {FILES:,} touched: found by a query after "
          + ", ".join(f"{s:.2f}" for s in touches) + f" s, median {touch_median:.2f} s (target ≤ {TOUCH_S:g} s)  "
          f"{verdict(touch_median <= TOUCH_S)}; baseline, the query alone: p50 {poll['p50_ms']:.1f} ms "
          f"p95 {poll['p95_ms']:.1f} ms")
    print(f"indexing  figures {path} ({report['seconds']:.0f} s)")

    assert on_target(files_per_s >= FILES_PER_S), f"{files_per_s:.0f} files/s (target ≥ {FILES_PER_S:g})"
    assert on_target(pages_per_s >= PAGES_PER_S), f"{pages_per_s:.0f} pages/s (target ≥ {PAGES_PER_S:g})"
    assert on_target(over_idle <= MEMORY_MB), f"{over_idle:.0f} MB over idle (target ≤ {MEMORY_MB:g})"
    assert on_target(touch_median <= TOUCH_S), f"a touched file found after {touch_median:.2f} s (target ≤ {TOUCH_S:g})"
