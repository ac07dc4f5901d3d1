"""Long chats with a compaction checkpoint, served by a real server process; every figure is a
full round trip from here.

Ten 10 000-message chats are compacted for real (POST /api/chats/{id}/compact, the fake
provider writing the summary), so their requests carry the summary and the few messages
after the boundary. Ten 50-message chats without a checkpoint, measured alternately in the
same run, are the baseline.

1. Send → provider: the time from a `send` frame to the fake provider's first write of its
   answer (it writes as soon as it has read the request; perf_counter is CLOCK_MONOTONIC in
   both processes), alternating long and short chats. The sends go round the ten chats of each
   kind, so that no chat grows by more than 11 turns during the run. Target: p95 of the
   long chats ≤ 1.2 × the short chats' p95 (the ratio of medians is printed too).
2. GET /api/chats/{id}/context (the meter), target p95 ≤ 30 ms on a long chat.
3. GET /api/chats/{id}/inspect, target p95 ≤ 50 ms on a long chat.
4. POST /api/chats/{id}/context with a draft (what the composer's meter asks while the
   person types; each draft differs, as typing makes it), target p95 ≤ 30 ms.
Each endpoint is timed on a long and a short chat in turn, before any send, with
GET /api/health beside it (the floor of any round trip here).

Targets print PASS / MISS; the test fails only when grossly off (3x the target).
Figures go to test-artifacts/bench/context.json.

Knob (env): NUMI_BENCH_CONTEXT_RUNS (5).
"""
from __future__ import annotations

import os
import random
import sqlite3
import statistics
import time

from peewee import SqliteDatabase

from backend.store.history import link_in_order_sql
from backend.store.migrations import migrate
from tests.fakeprovider import script as S
from tests.numi_client import ServerProcess

from . import history_gen
from .conftest import SMOKE, on_target, size, write_artifact
from .test_history_scale import Sender, pct, summary, verdict

RUNS = size("NUMI_BENCH_CONTEXT_RUNS", 5, 1)
SEND_RUNS = 2 if SMOKE else RUNS * 20  # per kind of chat: 10 sends in each chat
GET_RUNS = 2 if SMOKE else RUNS * 10  # per endpoint and chat
PAIRS = 2 if SMOKE else 10
LONG = [f"c_ctx_long{i}" for i in range(PAIRS)]
SHORT = [f"c_ctx_short{i}" for i in range(PAIRS)]
LONG_MESSAGES, SHORT_MESSAGES = (400 if SMOKE else 10_000), 50
WINDOW = 128_000
SEND_RATIO = 1.2
CONTEXT_P95_MS = 30.0
INSPECT_P95_MS = 50.0
GROSS = 3.0
ENDPOINTS = ("context", "inspect", "draft")


def build(data) -> None:
    """The chats, written straight into a migrated database before the server starts."""
    data.mkdir()
    path = data / "numi.db"
    db = SqliteDatabase(str(path))
    with db.connection_context():
        migrate(db)
    writer = history_gen.Writer(random.Random(23))
    texts = [(role, writer.user() if role == "user" else writer.assistant())
             for role in ("user" if i % 2 == 0 else "assistant" for i in range(LONG_MESSAGES))]
    con = sqlite3.connect(path)
    with con:
        for chat_id, n in [(c, LONG_MESSAGES) for c in LONG] + [(c, SHORT_MESSAGES) for c in SHORT]:
            con.execute("INSERT INTO chat (id, title, created_at, updated_at) VALUES (?, ?, 0, 0)",
                        (chat_id, chat_id))  # titled: no title request after a turn
            con.executemany("INSERT INTO message (chat_id, role, content, status, created_at) "
                            "VALUES (?, ?, ?, 'complete', ?)",
                            [(chat_id, role, text, float(i)) for i, (role, text) in enumerate(texts[-n:])])
            for statement, args in link_in_order_sql(chat_id):
                con.execute(statement, args)
    con.close()


def test_context_of_a_compacted_long_chat(tmp_path, bench_fake):
    fake = bench_fake
    started = time.monotonic()
    build(tmp_path / "data")
    server = ServerProcess(tmp_path / "data").start(timeout=60)
    api = server.api()
    sender = Sender(server, api, fake, LONG[0], SHORT[0])  # the model, set on these two chats
    try:
        _model(api, sender.model)
        compacted = [_compact(api, fake, chat) for chat in LONG]
        endpoints = _endpoints(api, LONG[0], SHORT[0])
        send = _send(sender, fake)
    finally:
        sender.close()
        server.stop()

    long_ends, short_ends = endpoints["long"], endpoints["short"]
    checks = {
        "send_p95_ratio": (send["p95_ratio"], SEND_RATIO),
        "context_p95_ms": (long_ends["context"]["p95_ms"], CONTEXT_P95_MS),
        "inspect_p95_ms": (long_ends["inspect"]["p95_ms"], INSPECT_P95_MS),
        "draft_p95_ms": (long_ends["draft"]["p95_ms"], CONTEXT_P95_MS),
    }
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(),
              "compaction": compacted, "endpoints": endpoints, "send": send,
              "summary": {name: {"value": v, "target": t, "ok": v <= t} for name, (v, t) in checks.items()},
              "seconds": time.monotonic() - started}
    path = write_artifact("context.json", report)

    first = compacted[0]
    print(f"\ncontext  {PAIRS} chats of {LONG_MESSAGES:,} messages compacted through message "
          f"{first['boundary_depth'] + 1:,} (summary {first['summary_tokens']:,} tokens, each made in "
          f"{statistics.median(c['seconds'] for c in compacted):.1f} s) vs {PAIRS} of {SHORT_MESSAGES}; "
          f"{os.cpu_count()} CPUs")
    (lo_l, hi_l), (lo_s, hi_s) = send["sent"]["long"], send["sent"]["short"]
    print(f"context  send → provider p95: {send['long']['p95_ms']:.1f} ms vs {send['short']['p95_ms']:.1f} ms, "
          f"ratio {send['p95_ratio']:.2f} (target ≤ {SEND_RATIO})  {verdict(send['p95_ratio'] <= SEND_RATIO)}; "
          f"medians {send['long']['p50_ms']:.1f} vs {send['short']['p50_ms']:.1f} ms, ratio {send['p50_ratio']:.2f} "
          f"(request messages {lo_l}–{hi_l} vs {lo_s}–{hi_s})")
    for name, label, target in (("context", "GET …/context", CONTEXT_P95_MS), ("inspect", "GET …/inspect",
                                INSPECT_P95_MS), ("draft", "POST …/context (draft)", CONTEXT_P95_MS)):
        a, b = long_ends[name], short_ends[name]
        print(f"context  {label}: p50 {a['p50_ms']:.1f} ms, p95 {a['p95_ms']:.1f} ms (target p95 ≤ {target:g} ms)  "
              f"{verdict(a['p95_ms'] <= target)}; {SHORT_MESSAGES}-message chat p50 {b['p50_ms']:.1f}, "
              f"p95 {b['p95_ms']:.1f} ms, ratio of p95s {a['p95_ms'] / b['p95_ms']:.2f}")
    floor = endpoints["health"]
    print(f"context  (a bare round trip, GET /api/health: p50 {floor['p50_ms']:.1f} ms, p95 {floor['p95_ms']:.1f} ms)"
          f"; figures {path} ({report['seconds']:.0f} s)")

    gross = [f"{name}: {v:.2f} is grossly off (target {t})" for name, (v, t) in checks.items() if v > GROSS * t]
    assert on_target(not gross), "; ".join(gross)


def _model(api, model: str) -> None:
    assert api.patch(f"/api/models/{model}", {"context_window": WINDOW}).status == 200
    for chat in LONG + SHORT:
        assert api.patch(f"/api/chats/{chat}", {"model_id": model}).status == 200


def _compact(api, fake, chat: str) -> dict:
    """Summarize a long chat through the endpoint; the checkpoint keeps only its newest turn."""
    writer = history_gen.Writer(random.Random(6))
    text = "\n\n".join(writer.assistant() for _ in range(15))  # a summary as long as a real one
    fake.reset()
    fake.enqueue([S.text(text)])
    t = time.perf_counter()
    r = api.post(f"/api/chats/{chat}/compact")
    seconds = time.perf_counter() - t
    assert r.status == 200, r
    [summary_request] = fake.requests
    assert "<transcript>" in summary_request.body["messages"][-1]["content"]
    context = api.get(f"/api/chats/{chat}/context").body
    assert context["compaction"]["boundary_message_id"] == r.body["boundary_message_id"]
    assert (context["messages_included"], context["messages_omitted"]) == (2, LONG_MESSAGES - 2), context
    return {"boundary_depth": LONG_MESSAGES - 3, "summary_tokens": context["parts"]["summary"],
            "tokens_before": r.body["tokens_before"], "tokens_after": r.body["tokens_after"], "seconds": seconds}


def _endpoints(api, long: str, short: str) -> dict:
    """Each endpoint on each chat in turn, a health round trip beside each."""
    draft = history_gen.Writer(random.Random(7)).assistant()
    calls = {"context": lambda chat, n: api.get(f"/api/chats/{chat}/context"),
             "inspect": lambda chat, n: api.get(f"/api/chats/{chat}/inspect"),
             "draft": lambda chat, n: api.post(f"/api/chats/{chat}/context", {"draft": f"{draft} {n}"})}
    times = {chat: {name: [] for name in ENDPOINTS} for chat in (long, short)}
    floor = []
    for k in range(GET_RUNS + 2):  # the first two rounds warm up
        for chat in ((long, short) if k % 2 else (short, long)):
            for name in ENDPOINTS:
                t = time.perf_counter()
                r = calls[name](chat, k)
                ms = (time.perf_counter() - t) * 1000
                assert r.status == 200, r
                assert name == "inspect" or (r.body["compaction"] is not None) == (chat == long), r.body
                t = time.perf_counter()
                assert api.get("/api/health").status == 200
                if k >= 2:
                    times[chat][name].append(ms)
                    floor.append((time.perf_counter() - t) * 1000)
    return {"long": {name: summary(v) for name, v in times[long].items()},
            "short": {name: summary(v) for name, v in times[short].items()}, "health": summary(floor)}


def _send(sender: Sender, fake) -> dict:
    times = {"long": [], "short": []}
    sent = {"long": [], "short": []}
    for k in range(SEND_RUNS + PAIRS):  # the first round in each chat warms up
        for kind in (("long", "short") if k % 2 else ("short", "long")):
            ms, count = sender.turn((LONG if kind == "long" else SHORT)[k % PAIRS])
            # One request, no summary written first; a long chat's carries its summary as
            # system text, then the messages after the boundary.
            [req] = fake.requests
            assert ("<summary>" in req.body["messages"][0]["content"]) == (kind == "long"), req.body["messages"][0]
            sent[kind].append(count)
            if k >= PAIRS:
                times[kind].append(ms)
    return {"long": summary(times["long"]), "short": summary(times["short"]), "times": times,
            "sent": {kind: (min(v), max(v)) for kind, v in sent.items()},
            "p95_ratio": pct(times["long"], 95) / pct(times["short"], 95),
            "p50_ratio": statistics.median(times["long"]) / statistics.median(times["short"])}
