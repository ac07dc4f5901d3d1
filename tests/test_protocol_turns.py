"""The WebSocket turn protocol against the real server process and the fake provider."""
import json

from backend.turns import hub
from tests.fakeprovider import script as S


def send(sock, content, request_id):
    sock.send(type="send", request_id=request_id, content=content)


def test_send_streams_saves_and_titles(setup):
    chat = setup.chat()
    setup.fake.enqueue([S.text("Hel"), S.text("lo "), S.text("there"), S.usage(7, 3)])
    sock = setup.socket(chat)
    send(sock, "Hi!", "r1")
    accepted = sock.until("accepted")
    assert accepted["request_id"] == "r1" and accepted["queued"] is False
    start = sock.until("turn_start")
    assert start["user_message_id"] == accepted["message_id"]
    assert "rewound" not in start  # nothing was discarded
    done = sock.until("done")
    end = sock.until("turn_end")
    assert end["status"] == "completed"
    turn = start["turn_id"]
    ids = [e["event_id"] for e in sock.events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert {e["epoch"] for e in sock.events} == {start["epoch"]}
    assert sock.text(turn) == "Hello there"
    usage = sock.of("usage", turn)[0]
    assert (usage["input_tokens"], usage["output_tokens"], usage["estimated"]) == (7, 3, False)
    msgs = setup.messages(chat)
    assert [(m["role"], m["status"]) for m in msgs] == [("user", "complete"), ("assistant", "complete")]
    assert msgs[1]["id"] == done["message_id"] and msgs[1]["content"] == "Hello there"
    saved = [e["message_id"] for e in sock.of("message_saved")]
    assert saved == [msgs[1]["id"]]
    title = sock.until("title_update")
    assert title["title"] == "Hello from the fake provider"
    assert setup.api.get(f"/api/chats/{chat}").body["title"] == title["title"]
    body = setup.fake.wait_requests(1)[0].body
    assert body["messages"][-1] == {"role": "user", "content": "Hi!"}


def test_same_request_id_is_one_message_and_one_turn(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("once")])
    sock = setup.socket(chat)
    send(sock, "Hi", "dup")
    first = sock.until("accepted")
    sock.until("turn_end")
    send(sock, "Hi", "dup")
    again = sock.until("accepted")
    assert again["message_id"] == first["message_id"] and again["queued"] is False
    sock.send(type="ping")
    sock.until("pong")
    assert not [e for e in sock.events if e["type"] == "turn_start"][1:]
    assert [m["role"] for m in setup.messages(chat)] == ["user", "assistant"]
    assert len(setup.fake.requests) == 1


def test_closing_every_socket_does_not_stop_the_turn_and_resume_replays(setup):
    chat = setup.chat(title="t")
    words = [f"w{i} " for i in range(40)]
    setup.fake.enqueue([S.delay(0.02)] + [S.text(w) for w in words])
    first = setup.socket(chat)
    send(first, "go", "r1")
    first.until("content")
    first.close()
    second = setup.socket(chat)
    second.send(type="resume", after_event_id=0)
    start = second.until("turn_start")
    second.until("turn_end")
    assert second.text(start["turn_id"]) == "".join(words)
    assert setup.messages(chat)[-1]["content"] == "".join(words)


def test_resume_after_missed_events_replays_only_the_rest(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("a"), S.text("b"), S.text("c")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    sock.until("turn_end")
    first_content = sock.of("content")[0]
    other = setup.socket(chat)
    other.send(type="resume", after_event_id=first_content["event_id"])
    other.until("turn_end")
    assert all(e["event_id"] > first_content["event_id"] for e in other.events)
    assert first_content["delta"] + other.text() == "abc"


def test_resume_behind_the_log_gets_one_snapshot(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.blast(hub.LOG_CAPACITY + 2000, "x{i} ")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    sock.until("turn_end", timeout=60)
    saved = setup.messages(chat)[-1]["content"]
    late = setup.socket(chat)
    late.send(type="resume", after_event_id=0)
    snap = late.until("snapshot")
    assert snap["content"] == saved and snap["status"] == "complete"
    assert snap["message_id"] == setup.messages(chat)[-1]["id"]


def test_a_paced_socket_gets_every_delta_of_a_burst_larger_than_the_log(setup_with):
    # A burst of five times the event log, written as fast as the fake can, under a text
    # pace so long that the whole burst fits in one wait: the socket must be woken before
    # the log moves past what it has not sent, not handed a snapshot instead.
    setup = setup_with({"NUMI_WS_TEXT_PACE_MS": "5000"})
    chat = setup.chat(title="t")
    n = 5 * hub.LOG_CAPACITY
    setup.fake.enqueue([S.blast(n, "x{i} ")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    while sock.recv(timeout=60)["type"] not in ("turn_end", "snapshot"):
        pass
    assert not sock.of("snapshot"), "the socket fell behind the event log and was sent a snapshot"
    deltas = "".join(e["delta"] for e in sock.of("content"))
    assert deltas == setup.messages(chat)[-1]["content"]
    assert deltas.endswith(f"x{n - 1} ")


def test_resume_with_nothing_retained_sends_stored_snapshot(setup):
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    sock.send(type="resume", after_event_id=0)
    snap = sock.until("snapshot")
    assert snap["message_id"] is None and snap["content"] == "" and snap["queue"] == []


def test_queue_runs_in_order_and_caps_at_ten(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("first "), S.hang()])
    for i in range(9):
        setup.fake.enqueue([S.text(f"answer {i}")])
    sock = setup.socket(chat)
    send(sock, "m0", "r0")
    sock.until("accepted")
    setup.fake.wait_hanging()
    queued = []
    for i in range(1, 11):
        send(sock, f"m{i}", f"r{i}")
        queued.append(sock.until("accepted", request_id=f"r{i}"))
    assert all(a["queued"] for a in queued)
    send(sock, "m11", "r11")
    assert sock.until("error")["code"] == "queue_full"
    listed = {m["id"]: m["status"] for m in setup.messages(chat)}
    assert all(listed[a["message_id"]] == "queued" for a in queued)
    queue = sock.of("queue")[-1]["items"]
    assert [q["message_id"] for q in queue] == [a["message_id"] for a in queued]
    assert queue[0]["preview"] == "m1"
    # Drop the last one, then let everything run.
    sock.send(type="queue_discard", message_id=queued[-1]["message_id"])
    assert [q["message_id"] for q in sock.until("queue")["items"]] == [a["message_id"] for a in queued[:-1]]
    sock.send(type="stop")
    for _ in range(10):
        sock.until("turn_end", timeout=30)
    starts = [e["user_message_id"] for e in sock.of("turn_start")]
    assert starts[1:] == [a["message_id"] for a in queued[:-1]]
    # A queued message's turn follows what came before it; it discards nothing.
    assert not [e for e in sock.of("turn_start") if "rewound" in e]
    msgs = setup.messages(chat)
    users = [m["content"] for m in msgs if m["role"] == "user"]
    assert users == [f"m{i}" for i in range(10)]
    assert all(m["status"] != "queued" for m in msgs)


def test_stop_with_clear_queue_drops_waiting_messages(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.hang()])
    sock = setup.socket(chat)
    send(sock, "m0", "r0")
    setup.fake.wait_hanging()
    send(sock, "m1", "r1")
    sock.until("accepted", request_id="r1")
    sock.send(type="stop", clear_queue=True)
    assert sock.until("turn_end")["status"] == "cancelled"
    assert [m["content"] for m in setup.messages(chat) if m["role"] == "user"] == ["m0"]


def test_tool_calls_with_approval_commit_in_order(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue(
        [S.tool_call(0, "call_a", "upper", '{"te'), S.tool_args(0, 'xt": "abc"}'),
         S.tool_call(1, "call_b", "guarded", '{"text": "hi"}'),
         S.tool_call(2, "call_c", "missing_tool", "{}")],
        [S.text("All done.")])
    sock = setup.socket(chat)
    send(sock, "use tools", "r1")
    ask = sock.until("approval_required")
    assert ask["name"] == "guarded" and json.loads(ask["arguments"]) == {"text": "hi"}
    # The assistant message asking for tools is saved before any tool runs.
    saved = sock.of("message_saved")
    assert [e["role"] for e in saved] == ["assistant"]
    msgs = setup.messages(chat)
    assert [c["id"] for c in msgs[-1]["tool_calls"]] == ["call_a", "call_b", "call_c"]
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    sock.until("turn_end")
    ends = {e["call_id"]: e for e in sock.of("tool_end")}
    assert ends["call_a"]["ok"] and ends["call_a"]["output"] == "ABC"
    assert ends["call_b"]["ok"] and json.loads(ends["call_b"]["output"]) == {"echo": "hi"}
    assert not ends["call_c"]["ok"]
    msgs = setup.messages(chat)
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
    assert [m["tool_call_id"] for m in msgs[2:5]] == ["call_a", "call_b", "call_c"]
    second = setup.fake.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "tool", "tool", "tool"]


def test_chats_run_at_the_same_time_without_crossing(setup):
    chats = [setup.chat(title=f"t{i}") for i in range(3)]
    socks = [setup.socket(c) for c in chats]
    for i, sock in enumerate(socks):
        setup.fake.enqueue([S.delay(0.01)] + [S.text(f"c{i}-{k} ") for k in range(20)])
    for i, sock in enumerate(socks):
        send(sock, f"hello {i}", f"r{i}")
    for sock in socks:
        sock.until("turn_end", timeout=30)
    texts = [sock.text() for sock in socks]
    for i, text in enumerate(texts):
        words = text.split()
        prefix = words[0].split("-")[0]
        assert all(w.startswith(prefix + "-") for w in words) and len(words) == 20
    assert len({t.split("-")[0] for t in texts}) == 3


def test_reasoning_streams_apart_and_usage_is_estimated_without_a_usage_chunk(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue({"steps": [S.reasoning("think "), S.reasoning("more", field="reasoning"),
                                  S.text("answer")]})
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    sock.until("turn_end")
    assert "".join(e["delta"] for e in sock.of("reasoning")) == "think more"
    assert sock.text() == "answer"
    last = setup.messages(chat)[-1]
    assert (last["content"], last["reasoning"]) == ("answer", "think more")
    usage = sock.of("usage")[0]
    assert usage["output_tokens"] > 0


def test_usage_speed_and_cost_are_stored_and_summed(setup):
    model = setup.api.patch(f"/api/models/{setup.model['id']}", {"price": {"input": 2.0, "output": 10.0}})
    assert model.status == 200, model
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("a"), S.text("b"), S.usage(1000, 200)], [S.text("c"), S.usage(500, 100)])
    sock = setup.socket(chat)
    for i in range(2):
        sock.send(type="send", request_id=f"r{i}", content="q")
        sock.until("turn_end")
    replies = [m for m in setup.messages(chat) if m["role"] == "assistant"]
    first = replies[0]["usage"]
    assert (first["input_tokens"], first["output_tokens"], first["estimated"]) == (1000, 200, False)
    assert first["ttft_ms"] is not None and first["ttft_ms"] >= 0
    total = setup.api.get(f"/api/chats/{chat}/usage").body
    assert (total["input_tokens"], total["output_tokens"], total["replies"]) == (1500, 300, 2)
    assert first["cost"] == 0.004 and total["cost"] == 0.006  # $2 and $10 per million tokens
    assert setup.api.get("/api/chats/c_nope/usage").status == 404


def test_resume_in_the_url_replays_before_anything_live(setup):
    chat = setup.chat(title="t")
    words = [f"w{i} " for i in range(30)]
    setup.fake.enqueue([S.delay(0.02)] + [S.text(w) for w in words])
    first = setup.socket(chat)
    send(first, "go", "r1")
    seen = first.until("content")
    late = setup.socket(chat, query=f"after_event_id={seen['event_id']}&epoch={seen['epoch']}")
    late.until("turn_end")
    ids = [e["event_id"] for e in late.events]
    # Nothing the client already had, nothing out of order (a replay run may come merged).
    assert ids == sorted(ids) and ids[0] > seen["event_id"]
    assert seen["delta"] + late.text() == "".join(words)


def test_resume_from_another_epoch_replays_the_turn_from_its_start(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("fresh "), S.text("text")])
    sock = setup.socket(chat)
    send(sock, "go", "r1")
    last = sock.until("turn_end")
    other = setup.socket(chat)
    other.send(type="resume", after_event_id=last["event_id"] + 100, epoch="an-old-epoch")
    other.until("turn_end")
    assert other.text() == "fresh text"
