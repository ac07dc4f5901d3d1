"""Memory (issue 36): choosing the memories a request carries, and what they add to building it.

In process, on a database of 1 000 memories (far past the 1 500-token budget, so each request
ranks them by full text against the chat's latest message) and one chat with a few messages:
1. Choosing: the memory part of a request's system text (the chat's latest user message read,
   the memories ranked and filled to the budget, quoted), each run against another message.
   Target: p95 ≤ 5 ms.
2. A request's system text with memories built in: `context.plan_request` (what a turn, the meter
   and the inspector run) with memory on, against the same with memory off in Settings, timed in
   alternation in the same run. Target: the medians differ by ≤ 2 ms.
Medians, p95 and ranges are printed; figures go to test-artifacts/bench/memory_choice.json.
Knobs (env): NUMI_BENCH_MEMORY_COUNT (1000), NUMI_BENCH_MEMORY_RUNS (300).
"""
from __future__ import annotations

import os
import random
import statistics
import time

import pytest

from backend.features.memory import choice, store, turn
from backend.keys import KeyStore
from backend.store import chats, history, settings
from backend.store.db import db, open_database
from backend.store.models import Chat, ModelEntry, Provider
from backend.turns import context

from .conftest import on_target, size, write_artifact
from .test_history_scale import pct, summary, verdict

COUNT = size("NUMI_BENCH_MEMORY_COUNT", 1000, 30)
RUNS = size("NUMI_BENCH_MEMORY_RUNS", 300, 5)
WARM = 5
CHOOSE_P95_MS = 5.0
ADDED_MS = 2.0

SUBJECTS = ("garden", "bicycle", "kitchen", "violin", "python", "marathon", "tea", "camera", "sailing",
            "chess", "pottery", "hiking", "coffee", "novel", "dog", "piano", "spanish", "budget", "yoga",
            "birdwatching", "carpentry", "astronomy", "knitting", "climbing", "baking")
VERBS = ("prefers", "enjoys", "avoids", "is learning", "owns", "writes about", "teaches", "collects")
DETAILS = ("on weekends", "every morning", "since 2019", "with their sister", "in Lisbon", "for work",
           "when travelling", "in metric units", "without sugar", "at the local club")


def fact(rng: random.Random, i: int) -> str:
    words = [rng.choice(VERBS), rng.choice(SUBJECTS), rng.choice(DETAILS), "and", rng.choice(SUBJECTS),
             rng.choice(DETAILS)]
    return f"Fact {i}: the person " + " ".join(words) + f"; noted detail {rng.randrange(10_000)}."


@pytest.fixture
def world(tmp_path):
    open_database(str(tmp_path / "numi.db"))
    db.connect(reuse_if_open=True)
    rng = random.Random(36)
    with db.atomic():
        for i in range(COUNT):
            store.create(fact(rng, i), None)
    provider = Provider.create(kind="openai_compatible", name="Bench", base_url="http://127.0.0.1:9/v1")
    model_id = ModelEntry.create(provider=provider, wire_api="chat_completions", api_model="bench",
                                 label="Bench", supports_tools=True).id
    chat_id = Chat.create(model_id=model_id, title="Bench").id
    for n in range(6):
        history.append_to_branch(chat_id, role="user", content=f"Question {n} about my {rng.choice(SUBJECTS)}?")
        history.append_to_branch(chat_id, role="assistant", content="An answer. " * 40)
    yield chat_id, model_id, rng
    db.close()


def timed_ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def test_memory_choice_and_what_it_adds_to_a_request(world):
    chat_id, model_id, rng = world
    started = time.monotonic()
    keys = KeyStore()

    # 1. The memory part of a request, against another latest message each time.
    questions = [f"What should I know about {a} and {b} {d}?" for a in SUBJECTS for b in SUBJECTS[:4]
                 for d in DETAILS[:2]]
    rng.shuffle(questions)
    choose_ms, carried = [], []
    for i in range(WARM + RUNS):
        history.append_to_branch(chat_id, role="user", content=questions[i % len(questions)])
        chat = chats.get(chat_id)
        ms = timed_ms(lambda: turn.system_text(chat, ["remember"]))
        if i >= WARM:
            choose_ms.append(ms)
            carried.append(len(choice.last_carried(chat_id) or []))
    assert min(carried) > 0

    # 2. The whole request plan, memory on and off in turn.
    model = chats.model(model_id)
    plan_ms: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(WARM + RUNS):
        for state in (("on", "off") if i % 2 else ("off", "on")):
            settings.put("memory", {"enabled": state == "on"})
            chat = chats.get(chat_id)
            ms = timed_ms(lambda: context.plan_request(chat, model, keys))
            if i >= WARM:
                plan_ms[state].append(ms)
    settings.put("memory", {"enabled": True})
    with_memories = context.plan_request(chats.get(chat_id), model, keys).request.system
    assert "<memories>" in with_memories

    choose_p95 = pct(choose_ms, 95)
    added = statistics.median(plan_ms["on"]) - statistics.median(plan_ms["off"])
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(), "memories": COUNT,
              "runs": RUNS, "choose": summary(choose_ms), "memories_carried": statistics.median(carried),
              "plan_on": summary(plan_ms["on"]), "plan_off": summary(plan_ms["off"]), "added_ms": added,
              "seconds": time.monotonic() - started}
    path = write_artifact("memory_choice.json", report)

    print(f"\nmemory_choice  {COUNT:,} memories, {RUNS} runs; {os.cpu_count()} CPUs; "
          f"a request carries {statistics.median(carried):.0f} of them (median)")
    print(f"memory_choice  choosing: median {statistics.median(choose_ms):.2f} ms, p95 {choose_p95:.2f} ms, "
          f"range {min(choose_ms):.2f}–{max(choose_ms):.2f} ms (target p95 ≤ {CHOOSE_P95_MS} ms) "
          f"{verdict(choose_p95 <= CHOOSE_P95_MS)}")
    for state in ("off", "on"):
        ms = plan_ms[state]
        print(f"memory_choice  request plan, memory {state}: median {statistics.median(ms):.2f} ms, "
              f"p95 {pct(ms, 95):.2f} ms, range {min(ms):.2f}–{max(ms):.2f} ms")
    print(f"memory_choice  memories add {added:.2f} ms to the median plan (target ≤ {ADDED_MS} ms) "
          f"{verdict(added <= ADDED_MS)}")
    print(f"memory_choice  figures: {path}")
    assert on_target(choose_p95 <= CHOOSE_P95_MS), f"choosing memories: p95 {choose_p95:.2f} ms"
    assert on_target(added <= ADDED_MS), f"memories add {added:.2f} ms to a request's plan"
