"""Tools per chat (issue 34, CONTRACT §15): a chat with 5 MCP servers of 20 tools each, on a real
server process with real MCP servers (tests/mcp_many_tools_server.py).

1. Building the request: GET /api/chats/{id}/context (next_request.prepare, as a turn and the
   inspector build it, MCP listings included), timed in rotation in the same run on three Numi
   servers: A with the 5 servers configured (a chat with nothing off, one with all but one server
   off, one with every server off), B with no MCP server configured, C with only the one server
   A's second chat keeps on. Targets (ratio of medians ≤ 1.1): every server off on A against B
   (servers switched off cost what servers never configured cost), and all but one off on A against
   C (the four switched off add nothing to the one left on). Printed beside them: all but one off
   against B, which is what listing the one server left on costs at each request (listings are
   never cached: a changed tool must be seen), and against nothing off, the saving.
2. The popover's count: for each of A's chats, the `tokens` of what GET …/tools says is on,
   summed, against the meter's `parts.tools`. Target: within 5 %.
Medians and ranges are printed; figures go to test-artifacts/bench/tools_off.json.
Knobs (env): NUMI_BENCH_TOOLS_OFF_RUNS (40), NUMI_BENCH_TOOLS_OFF_SERVERS (5), NUMI_BENCH_TOOLS_OFF_TOOLS (20).
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from tests.numi_client import ServerProcess

from .conftest import on_target, size, write_artifact
from .test_history_scale import summary, verdict

RUNS = size("NUMI_BENCH_TOOLS_OFF_RUNS", 40, 3)
SERVERS = size("NUMI_BENCH_TOOLS_OFF_SERVERS", 5, 2)
TOOLS = size("NUMI_BENCH_TOOLS_OFF_TOOLS", 20, 3)
WARM = 3
RATIO = 1.1
TOKENS_OFF_BY = 0.05
KINDS = ("none_off", "one_on", "all_off")  # the chats on server A
LABELS = {"none_off": "A, nothing off", "one_on": "A, all but one server off", "all_off": "A, every server off",
          "none_configured": "B, no MCP server configured", "only_that_one": "C, only that one server configured"}
MANY = str(Path(__file__).resolve().parents[1] / "mcp_many_tools_server.py")


def test_tools_off_costs_no_more_and_the_popover_counts_what_the_meter_counts(tmp_path, fake):
    started = time.monotonic()
    servers = {name: ServerProcess(tmp_path / name).start(timeout=60) for name in ("a", "b", "c")}
    try:
        ids = [f"s{i}" for i in range(SERVERS)]
        a = servers["a"].api()
        chats = {kind: (a, chat) for kind, chat in _setup(a, fake, ids).items()}
        chats["none_configured"] = (servers["b"].api(), _setup(servers["b"].api(), fake, [], kinds=("none",))["none"])
        c = servers["c"].api()
        chats["only_that_one"] = (c, _setup(c, fake, ids[:1], kinds=("none",))["none"])
        times = _time_context(chats)
        counts = {kind: _counts(a, chat) for kind, (_, chat) in chats.items() if kind in KINDS}
    finally:
        for server in servers.values():
            server.stop()

    def ratio(kind: str, baseline: str) -> float:
        return statistics.median(times[kind]) / statistics.median(times[baseline])

    off_like_none = ratio("all_off", "none_configured")
    four_add_nothing = ratio("one_on", "only_that_one")
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(), "servers": SERVERS,
              "tools_per_server": TOOLS, "runs": RUNS, "context": {k: summary(v) for k, v in times.items()},
              "all_off_to_none_configured": off_like_none, "one_on_to_only_that_one": four_add_nothing,
              "one_on_to_none_configured": ratio("one_on", "none_configured"),
              "one_on_to_none_off": ratio("one_on", "none_off"), "tokens": counts,
              "seconds": time.monotonic() - started}
    path = write_artifact("tools_off.json", report)

    print(f"\ntools_off  {SERVERS} MCP servers × {TOOLS} tools, {RUNS} runs of GET …/context each; "
          f"{os.cpu_count()} CPUs")
    for kind, label in LABELS.items():
        ms = times[kind]
        tokens = f", parts.tools {counts[kind]['parts_tools']:,} tokens, popover {counts[kind]['popover']:,}" \
            if kind in counts else ""
        print(f"tools_off  {label}: median {statistics.median(ms):.1f} ms, range {min(ms):.1f}–{max(ms):.1f} ms"
              f"{tokens}")
    print(f"tools_off  every server off / none configured: ratio of medians {off_like_none:.2f} (target ≤ {RATIO})  "
          f"{verdict(off_like_none <= RATIO)}")
    print(f"tools_off  all but one off / only that one configured: {four_add_nothing:.2f} (target ≤ {RATIO})  "
          f"{verdict(four_add_nothing <= RATIO)}")
    print(f"tools_off  all but one off / none configured: {report['one_on_to_none_configured']:.2f} (the one left on "
          f"is listed at each request); / nothing off: {report['one_on_to_none_off']:.2f}; figures {path} "
          f"({report['seconds']:.0f} s)")

    # The counts are no timing: they hold at every size.
    for kind, c in counts.items():
        assert abs(c["popover"] - c["parts_tools"]) <= TOKENS_OFF_BY * c["parts_tools"], (kind, c)
    assert counts["one_on"]["parts_tools"] < counts["none_off"]["parts_tools"]
    assert on_target(off_like_none <= RATIO), f"every server off costs {off_like_none:.2f} × none configured"
    assert on_target(four_add_nothing <= RATIO), \
        f"all but one server off costs {four_add_nothing:.2f} × only that one configured (target ≤ {RATIO})"


def _setup(api, fake, ids: list[str], kinds=KINDS) -> dict[str, str]:
    """The provider, a tool-calling model, the servers, and a chat of each kind: nothing off, all but
    one off, all off."""
    provider = api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake", "base_url": fake.base_url,
                                           "api_key": "sk-test-not-real"}).body
    model = api.post("/api/models", {"provider_id": provider["id"], "api_model": "fake-model", "label": "Fake"}).body
    assert api.patch(f"/api/models/{model['id']}", {"supports": {"tools": True}, "context_window": 200_000}).status == 200
    for server in ids:
        r = api.post("/api/mcp/servers", {"id": server, "transport": "stdio", "command": sys.executable,
                                          "args": [MANY], "env": {"NUMI_MCP_MANY_TOOLS": str(TOOLS)}})
        assert r.status == 201, r
    patterns = [f"mcp__{s}__*" for s in ids]
    chats = {}
    offs = {"none_off": None, "one_on": patterns[1:], "all_off": patterns, "none": None}
    for kind in kinds:
        r = api.post("/api/chats", {"title": kind, "model_id": model["id"], "tools_off": offs[kind]})
        assert r.status == 201, r
        chats[kind] = r.body["id"]
    return chats


def _time_context(chats: dict[str, tuple]) -> dict[str, list[float]]:
    """GET …/context on each chat in turn, the order rotating each round; the first rounds warm up
    (they start the servers and list their tools)."""
    kinds = list(chats)
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for n in range(RUNS + WARM):
        turn = n % len(kinds)
        for kind in kinds[turn:] + kinds[:turn]:
            api, chat = chats[kind]
            t = time.perf_counter()
            r = api.get(f"/api/chats/{chat}/context")
            ms = (time.perf_counter() - t) * 1000
            assert r.status == 200, r
            if n >= WARM:
                times[kind].append(ms)
    return times


def _counts(api, chat: str) -> dict:
    """The meter's parts.tools and the popover's sum of what is on (GET …/tools)."""
    parts = api.get(f"/api/chats/{chat}/context").body["parts"]["tools"]
    listing = api.get(f"/api/chats/{chat}/tools").body
    mcp = [g for g in listing["groups"] if g["server"] is not None]
    assert all(len(g["tools"]) == TOOLS for g in mcp), [(g["id"], len(g["tools"])) for g in mcp]
    on = sum(t["tokens"] for g in listing["groups"] for t in g["tools"] if t["on"])
    return {"parts_tools": parts, "popover": on, "groups_on": sum(g["on"] for g in listing["groups"])}
