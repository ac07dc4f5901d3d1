"""Versions at scale, served by a real server process; every figure is a full round trip from here.

1. Switching versions: POST /api/chats/{id}/active to each of 50 versions of one
   message of a 10 000-message chat, in two chats: (a) the versions are of the
   newest reply (regenerated 50 times); (b) they are of message 5 001, a reply in
   the middle, whose newest version carries the other 4 999 messages below it (each
   switch there goes to a one-message leaf and back to the long branch, so both
   walks are measured). Target p95 ≤ 20 ms for each.
2. Sending on a deep branch: a chat whose active branch is 5 000 messages deep,
   with an older version at every tenth message (each with a few messages under
   it), against a linear chat of the same 5 000 messages. The time from `send`
   to the fake provider's first write, alternating the two chats.
   Target: ratio of medians ≤ 1.2.

Each switch is followed by a GET /api/health, the floor of any round trip here (the
client, the loopback, the server's threads), so the figures say how much of a switch
is the switch: its p50 minus the floor's, and the ratio of the two.

Targets print PASS / MISS; the test fails only when grossly off (3x the target).
Figures go to test-artifacts/bench/versions.json.
"""
from __future__ import annotations

import json
import sqlite3
import statistics
import time
from contextlib import ExitStack

from peewee import SqliteDatabase
from websockets.sync.client import connect

from backend.store import lines
from backend.store.migrations import migrate
from tests.fakeprovider import script as S
from tests.numi_client import ServerProcess

from .conftest import SMOKE, answer_request, on_target, size, write_artifact
from .test_history_scale import pct, summary, verdict

RUNS = size("NUMI_BENCH_VERSIONS_RUNS", 5, 1)
SWITCH_P95_MS = 20.0
SEND_RATIO = 1.2
GROSS = 3.0
CHAT_MESSAGES = 600 if SMOKE else 10_000  # a smoke run still passes the 200-message cap
VERSIONS = 12 if SMOKE else 50
AT = CHAT_MESSAGES // 2  # the versions are of the message at this depth
DEEP = CHAT_MESSAGES // 2


class Writer:
    """Rows written straight into the database before the server starts, links and all."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self.next_id = 1

    def chat(self, chat_id: str) -> None:
        self.con.execute("INSERT INTO chat (id, title, created_at, updated_at) VALUES (?, ?, 0, 0)",
                         (chat_id, chat_id))

    def message(self, chat_id: str, parent: tuple[int, int] | None, role: str, text: str) -> tuple[int, int]:
        """(id, depth) of a new message under `parent`; the parent's active child is the newest."""
        row_id, depth = self.next_id, (parent[1] + 1 if parent else 0)
        self.next_id += 1
        self.con.execute("INSERT INTO message (id, chat_id, role, content, status, parent_id, depth, created_at) "
                         "VALUES (?, ?, ?, ?, 'complete', ?, ?, ?)",
                         (row_id, chat_id, role, text, parent and parent[0], depth, float(row_id)))
        if parent:
            self.con.execute("UPDATE message SET active_child_id = ? WHERE id = ?", (row_id, parent[0]))
        return row_id, depth

    def line(self, chat_id: str, parent, n: int, start_role: str = "user") -> tuple[int, int] | None:
        roles = ("user", "assistant") if start_role == "user" else ("assistant", "user")
        for i in range(n):
            parent = self.message(chat_id, parent, roles[i % 2], f"{roles[i % 2]} message {i} of {chat_id}")
        return parent

    def leaf(self, chat_id: str, leaf) -> None:
        self.con.execute("UPDATE chat SET active_leaf_id = ? WHERE id = ?", (leaf[0], chat_id))


def build(data) -> dict:
    data.mkdir()
    path = data / "numi.db"
    db = SqliteDatabase(str(path))
    with db.connection_context():
        migrate(db)
    con = sqlite3.connect(path)
    w = Writer(con)
    with con:
        # 1. 50 versions of the reply at depth AT; the newest carries the rest of the chat.
        w.chat("c_versions")
        above = w.line("c_versions", None, AT)  # ends with a user message
        versions = [w.message("c_versions", above, "assistant", f"version {v}") for v in range(VERSIONS)]
        tail = w.line("c_versions", versions[-1], CHAT_MESSAGES - AT - 1, start_role="user")
        w.leaf("c_versions", tail)
        w.chat("c_versions_end")
        above = w.line("c_versions_end", None, CHAT_MESSAGES - 1)
        at_end = [w.message("c_versions_end", above, "assistant", f"version {v}") for v in range(VERSIONS)]
        w.leaf("c_versions_end", at_end[-1])
        # 2. The deep branch, and the linear chat of the same length.
        w.chat("c_deep")
        parent = None
        for i in range(DEEP):
            role = "user" if i % 2 == 0 else "assistant"
            if i % 10 == 9:  # an older version here, with a short branch under it
                old = w.message("c_deep", parent, role, f"older version {i}")
                w.line("c_deep", old, 4, start_role="user" if role == "assistant" else "assistant")
            parent = w.message("c_deep", parent, role, f"{role} message {i}")
        w.leaf("c_deep", parent)
        w.chat("c_linear")
        w.leaf("c_linear", w.line("c_linear", None, DEEP))
        for chat in ("c_versions", "c_versions_end", "c_deep", "c_linear"):
            lines.relink(chat, con)
    con.close()
    return {"versions": [v[0] for v in versions], "at_end": [v[0] for v in at_end]}


def test_versions_at_scale(tmp_path, bench_fake):
    built = build(tmp_path / "data")
    server = ServerProcess(tmp_path / "data").start()
    try:
        api = server.api()
        switch_end = measure_switch(api, "c_versions_end", built["at_end"], back=False)
        switch = measure_switch(api, "c_versions", built["versions"], back=True)
        send = measure_send(server, api, bench_fake)
    finally:
        server.stop()
    results = {"switch_newest_reply": switch_end, "switch": switch, "send": send,
               "targets": {"switch_p95_ms": SWITCH_P95_MS, "send_ratio": SEND_RATIO, "gross_factor": GROSS}}
    path = write_artifact("versions.json", results)
    for name, figures in (("of the newest reply", switch_end), ("of a reply in the middle", switch)):
        print(f"\nswitch among {VERSIONS} versions {name} in a {CHAT_MESSAGES}-message chat: "
              f"p50 {figures['p50_ms']:.1f} ms, p95 {figures['p95_ms']:.1f} ms (target ≤ {SWITCH_P95_MS})  "
              f"{verdict(figures['p95_ms'] <= SWITCH_P95_MS)}; GET /api/health beside it p50 "
              f"{figures['health']['p50_ms']:.1f} ms, p95 {figures['health']['p95_ms']:.1f} ms "
              f"(switch = floor + {figures['over_floor_p50_ms']:.1f} ms, ratio {figures['ratio_to_floor']:.2f})")
    print(f"send on a {DEEP}-deep branch {send['deep']['p50_ms']:.1f} ms vs linear {send['linear']['p50_ms']:.1f} ms:"
          f" ratio {send['ratio']:.2f} (target ≤ {SEND_RATIO})  {verdict(send['ratio'] <= SEND_RATIO)}")
    print(f"figures: {path}")
    assert on_target(max(switch["p95_ms"], switch_end["p95_ms"]) <= SWITCH_P95_MS * GROSS)
    assert on_target(send["ratio"] <= SEND_RATIO * GROSS)


def measure_switch(api, chat: str, versions: list[int], back: bool) -> dict:
    floor = []

    def once(version: int) -> float:
        t = time.perf_counter()
        r = api.post(f"/api/chats/{chat}/active", {"message_id": version})
        ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        assert api.get("/api/health").status == 200
        floor.append((time.perf_counter() - t) * 1000)
        assert r.status == 200, r
        ids = [m["id"] for m in r.body["items"]]
        assert ids[-1] == version if not back or version != versions[-1] else version not in ids
        return ms

    for v in versions[:10] * 2:  # warm-up: the page cache, the server's first requests
        once(v)
    floor.clear()
    times = []
    for _ in range(RUNS):
        for v in versions:
            times.append(once(v))
            if back:
                times.append(once(versions[-1]))  # back to the long branch: 5 000 messages under it
    floor = floor[-len(times):]
    return {**summary(times), "switches": len(times), "health": summary(floor),
            "over_floor_p50_ms": statistics.median(times) - statistics.median(floor),
            "ratio_to_floor": statistics.median(times) / statistics.median(floor)}


def measure_send(server, api, fake) -> dict:
    r = api.post("/api/providers", {"kind": "openai_compatible", "name": "Bench", "base_url": fake.base_url,
                                    "timeout": 30})
    model = api.post("/api/models", {"provider_id": r.body["id"], "api_model": "fake-model", "label": "Bench"}).body
    for chat in ("c_deep", "c_linear"):
        assert api.patch(f"/api/chats/{chat}", {"model_id": model["id"]}).status == 200
    times = {"deep": [], "linear": []}
    sent = {}
    with ExitStack() as stack:
        sockets = {chat: stack.enter_context(connect(
            server.ws_url(f"c_{chat}"), compression=None, max_size=None, open_timeout=10,
            additional_headers={"Authorization": f"Bearer {server.token}"})) for chat in times}
        n = 0
        for k in range(RUNS * 2 + 1):
            for kind in (("deep", "linear") if k % 2 else ("linear", "deep")):
                n += 1
                fake.reset()
                fake.enqueue([S.text("ok")])
                ws = sockets[kind]
                t_send = time.perf_counter()
                question = f"question {n}"
                ws.send(json.dumps({"type": "send", "request_id": f"bench-{n}", "content": question}))
                while True:
                    event = json.loads(ws.recv(timeout=60))
                    assert event["type"] != "error", event
                    if event["type"] == "turn_end":
                        break
                req = answer_request(fake.requests, question)
                sent[kind] = len(req.body["messages"])
                if k:  # the first round warms up
                    times[kind].append((req.write_times[0][1] - t_send) * 1000)
    med = {kind: statistics.median(v) for kind, v in times.items()}
    return {"deep": summary(times["deep"]), "linear": summary(times["linear"]), "ratio": med["deep"] / med["linear"],
            "history_sent": sent, "p95_deep_ms": pct(times["deep"], 95)}
