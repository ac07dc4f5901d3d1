"""Compare (CONTRACT §10) over the real server: one message, three fake models answering at once."""
from __future__ import annotations

import time

import pytest

from tests.fakeprovider import script as S

MODELS = ("fake-model", "fake-two", "fake-three")


def for_model(model: str, *steps) -> dict:
    return {"steps": list(steps), "model": model}


@pytest.fixture
def compare(setup):
    """The setup with three catalog models on the fake; `compare.ids` their ids in MODELS order."""
    ids = [setup.model["id"]]
    for api_model in MODELS[1:]:
        r = setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": api_model,
                                           "label": api_model.title()})
        assert r.status == 201, r
        ids.append(r.body["id"])
    setup.ids = ids
    return setup


def replies_of(sock, turn_id) -> dict[int, str]:
    """Each reply's text as its deltas add up, by message id."""
    out: dict[int, str] = {}
    for e in sock.of("content", turn_id):
        out[e["message_id"]] = out.get(e["message_id"], "") + e["delta"]
    return out


def test_three_models_answer_one_message_at_the_same_time(compare):
    setup = compare
    chat = setup.chat(title="t")
    # Each model writes its first words and waits: all three are mid-stream at once before any ends.
    setup.fake.enqueue(*(for_model(m, S.text(f"{m} says "), S.hang(), S.text("done.")) for m in MODELS))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="Which is best?", compare=setup.ids)
    accepted = sock.until("accepted")
    start = sock.until("turn_start")
    assert [c["model_id"] for c in start["compare"]] == setup.ids
    setup.fake.wait_hanging(3, timeout=15)
    setup.fake.release(3)
    end = sock.until("turn_end")
    assert end["status"] == "completed"
    assert len(sock.of("turn_end")) == 1 and len(sock.of("accepted")) == 1

    columns = {c["message_id"]: c["model_id"] for c in start["compare"]}
    texts = replies_of(sock, start["turn_id"])
    assert set(texts) == set(columns)
    api_models = dict(zip(setup.ids, MODELS))
    for message_id, model_id in columns.items():
        assert texts[message_id] == f"{api_models[model_id]} says done."
    # Every event of a reply names its model and message.
    for e in sock.of("content") + sock.of("done") + sock.of("usage"):
        assert columns[e["message_id"]] == e["model_id"]
    assert {e["message_id"] for e in sock.of("done")} == set(columns)

    # Each model was asked the same history: the one user message, nothing of another's reply.
    asks = [r.body for r in setup.fake.requests if r.body and r.body.get("messages")]
    assert sorted(b["model"] for b in asks) == sorted(MODELS)
    assert all(b["messages"] == asks[0]["messages"] for b in asks)

    # One user message; three versions of its reply, the first model's active.
    msgs = setup.messages(chat)
    assert [(m["role"], m["id"]) for m in msgs] == [("user", accepted["message_id"]),
                                                     ("assistant", start["compare"][0]["message_id"])]
    assert msgs[1]["versions"]["count"] == 3
    assert msgs[1]["versions"]["ids"] == [c["message_id"] for c in start["compare"]]
    tree = setup.api.get(f"/api/chats/{chat}/tree").body["items"]
    saved = {m["id"]: (m["model_id"], m["status"]) for m in tree if m["role"] == "assistant"}
    assert saved == {mid: (model_id, "complete") for mid, model_id in columns.items()}


def test_use_this_makes_a_reply_active_and_the_chat_goes_on_from_it(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(*(for_model(m, S.text(f"answer of {m}")) for m in MODELS))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids)
    start = sock.until("turn_start")
    sock.until("turn_end")
    second = start["compare"][1]["message_id"]
    r = setup.api.post(f"/api/chats/{chat}/active", {"message_id": second})
    assert r.status == 200, r
    assert [m["content"] for m in r.body["items"]] == ["q", "answer of fake-two"]
    setup.fake.enqueue([S.text("next")])
    sock.send(type="send", request_id="r2", content="and then?")
    sock.until("turn_end")
    last = [r.body for r in setup.fake.requests if r.body and r.body.get("messages")][-1]
    assert [m.get("content") for m in last["messages"]] == ["q", "answer of fake-two", "and then?"]
    assert last["model"] == "fake-model"  # the chat's own model answers the chat again


def test_stop_ends_every_column_and_keeps_their_text(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(*(for_model(m, S.text(f"part of {m}"), S.hang()) for m in MODELS))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids)
    start = sock.until("turn_start")
    setup.fake.wait_hanging(3, timeout=15)
    # Every column's text has been published before Stop (each hangs after its first words).
    while len(replies_of(sock, start["turn_id"])) < 3:
        sock.recv()
    sock.send(type="stop")
    end = sock.until("turn_end")
    assert end["status"] == "cancelled"
    setup.fake.release(3)
    tree = {m["id"]: m for m in setup.api.get(f"/api/chats/{chat}/tree").body["items"]}
    for column in start["compare"]:
        row = tree[column["message_id"]]
        assert row["status"] == "cancelled"
    api_models = dict(zip(setup.ids, MODELS))
    msgs = {m["id"]: m for m in setup.messages(chat)}
    first = start["compare"][0]
    assert msgs[first["message_id"]]["content"] == f"part of {api_models[first['model_id']]}"


def test_one_failing_model_shows_its_error_while_the_others_finish(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(for_model("fake-model", S.text("fine")),
                       for_model("fake-two", S.error(400, {"error": {"message": "model exploded"}})),
                       for_model("fake-three", S.text("also fine")))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids)
    start = sock.until("turn_start")
    end = sock.until("turn_end")
    assert end["status"] == "completed"
    failed = start["compare"][1]
    errors = sock.of("error")
    assert len(errors) == 1
    assert errors[0]["model_id"] == failed["model_id"] and errors[0]["message_id"] == failed["message_id"]
    assert "Fake Local" in errors[0]["message"]
    tree = {m["id"]: m for m in setup.api.get(f"/api/chats/{chat}/tree").body["items"]}
    assert tree[failed["message_id"]]["status"] == "error"
    assert {tree[c["message_id"]]["status"] for c in (start["compare"][0], start["compare"][2])} == {"complete"}


def test_every_model_failing_fails_the_turn(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(*(for_model(m, S.error(400, {"error": {"message": "no"}})) for m in MODELS[:2]))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids[:2])
    assert sock.until("turn_end")["status"] == "failed"
    assert len(sock.of("error")) == 2


def test_a_late_socket_gets_every_columns_events_or_one_snapshot_each(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(*(for_model(m, S.text(f"{m}: "), S.text("x")) for m in MODELS))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids)
    start = sock.until("turn_start")
    sock.until("turn_end")
    late = setup.socket(chat)
    late.send(type="resume", after_event_id=0)
    late.until("turn_end")
    assert replies_of(late, start["turn_id"]) == replies_of(sock, start["turn_id"])


def test_a_socket_behind_the_log_gets_one_snapshot_per_column(setup_with, fake):
    setup = setup_with({"NUMI_EVENT_LOG_CAPACITY": "16"})
    ids = [setup.model["id"]]
    for api_model in MODELS[1:]:
        ids.append(setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": api_model}
                                  ).body["id"])
    chat = setup.chat(title="t")
    fake.enqueue(*(for_model(m, S.blast(40, m + "{i} ")) for m in MODELS))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=ids)
    start = sock.until("turn_start")
    sock.until("turn_end", timeout=30)
    late = setup.socket(chat)
    late.send(type="resume", after_event_id=0)
    snaps = [late.until("snapshot") for _ in MODELS]
    assert [(s["message_id"], s["model_id"]) for s in snaps] == [(c["message_id"], c["model_id"])
                                                                  for c in start["compare"]]
    saved = {m["id"]: m for m in setup.api.get(f"/api/chats/{chat}/tree").body["items"]}
    for snap in snaps:
        assert snap["turn_id"] == start["turn_id"] and snap["status"] == "complete"
        assert snap["content"].startswith(saved[snap["message_id"]]["preview"][:20])


@pytest.mark.parametrize("models, said", [
    (lambda ids: ids[:1], "2 to 4 models"),
    (lambda ids: ids + ids[:2], "2 to 4 models"),
    (lambda ids: [ids[0], ids[0]], "each model once"),
    (lambda ids: [ids[0], "m_nope"], "no model 'm_nope'"),
    (lambda ids: [ids[0], 7], "model ids"),
])
def test_a_bad_compare_is_refused_and_saves_nothing(compare, models, said):
    setup = compare
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=models(setup.ids))
    error = sock.until("error")
    assert error["code"] == "bad_request" and said in error["message"]
    assert setup.messages(chat) == []
    assert not [r for r in setup.fake.requests if r.body and r.body.get("messages")]


def test_a_compare_sent_during_a_turn_waits_and_then_compares(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(for_model("fake-model", S.text("first"), S.hang()))
    setup.fake.enqueue(*(for_model(m, S.text(f"then {m}")) for m in MODELS[1:]))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="one")
    sock.until("turn_start")
    setup.fake.wait_hanging(1, timeout=15)
    sock.send(type="send", request_id="r2", content="two", compare=setup.ids[1:])
    assert sock.until("accepted", request_id="r2")["queued"] is True
    setup.fake.release(1)
    start = sock.until("turn_start", user_message_id=sock.of("accepted")[-1]["message_id"])
    assert [c["model_id"] for c in start["compare"]] == setup.ids[1:]
    assert sock.until("turn_end", turn_id=start["turn_id"])["status"] == "completed"
    assert [m["content"] for m in setup.messages(chat)] == ["one", "first", "two", "then fake-two"]


def test_after_a_kill_every_column_comes_back_as_saved(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(*(for_model(m, S.text(f"{m} began"), S.hang()) for m in MODELS))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids)
    start = sock.until("turn_start")
    setup.fake.wait_hanging(3, timeout=15)
    # The partial text reaches the disk within a second (CONTRACT §4 rule 3): wait until it has.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        tree = setup.api.get(f"/api/chats/{chat}/tree").body["items"]
        if sum(1 for m in tree if m["role"] == "assistant" and m["preview"]) == 3:
            break
        time.sleep(0.05)
    setup.server.kill9()
    setup.fake.release(3)
    setup.server.start()
    setup.api = setup.server.api()
    late = setup.socket(chat)
    late.send(type="resume", after_event_id=0)
    snaps = [late.until("snapshot") for _ in MODELS]
    api_models = dict(zip(setup.ids, MODELS))
    assert [(s["message_id"], s["model_id"]) for s in snaps] == [(c["message_id"], c["model_id"])
                                                                  for c in start["compare"]]
    for snap in snaps:
        assert snap["status"] == "interrupted" and snap["content"] == f"{api_models[snap['model_id']]} began"


def test_the_columns_of_a_compare_are_read_back_for_a_reload(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(*(for_model(m, S.text(f"answer of {m}")) for m in MODELS))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids)
    start = sock.until("turn_start")
    sock.until("turn_end")
    user = setup.messages(chat)[0]
    assert user["compare"] == setup.ids
    body = setup.api.get(f"/api/chats/{chat}/messages/{user['id']}/compare").body
    assert [c["model_id"] for c in body["columns"]] == setup.ids
    assert [c["message_id"] for c in body["columns"]] == [c["message_id"] for c in start["compare"]]
    assert [[m["content"] for m in c["messages"]] for c in body["columns"]] == [[f"answer of {m}"] for m in MODELS]
    assert body["active_leaf_id"] == start["compare"][0]["message_id"]
    # A message that asked no compare, and one of no chat, are not found.
    reply = setup.messages(chat)[1]["id"]
    assert setup.api.get(f"/api/chats/{chat}/messages/{reply}/compare").status == 404
    assert setup.api.get(f"/api/chats/{chat}/messages/999999/compare").status == 404


def test_each_column_calls_its_own_tools_and_asks_its_own_approvals(compare):
    setup = compare
    chat = setup.chat(title="t")
    # The first model runs a tool that needs no approval; the second one that asks first.
    setup.fake.enqueue(for_model("fake-model", S.tool_call(0, "c1", "upper", '{"text": "abc"}')),
                       for_model("fake-model", S.text("upper gave ABC")),
                       for_model("fake-two", S.tool_call(0, "c2", "guarded", '{"text": "x"}')),
                       for_model("fake-two", S.text("guarded ran")))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="use tools", compare=setup.ids[:2])
    start = sock.until("turn_start")
    asked = sock.until("approval_required")
    assert asked["model_id"] == setup.ids[1] and asked["message_id"] == start["compare"][1]["message_id"]
    sock.send(type="approve", approval_id=asked["approval_id"], decision="allow")
    assert sock.until("turn_end")["status"] == "completed"
    ends = {e["call_id"]: e for e in sock.of("tool_end")}
    assert ends["c1"]["model_id"] == setup.ids[0] and ends["c1"]["output"] == "ABC"
    assert ends["c2"]["model_id"] == setup.ids[1]
    # Each column's tool result went back to its own model only.
    asks = [r.body for r in setup.fake.requests if r.body and r.body.get("messages")]
    followups = {b["model"]: b["messages"] for b in asks if b["messages"][-1]["role"] == "tool"}
    assert followups["fake-model"][-1]["content"] == "ABC"
    assert "echo" in followups["fake-two"][-1]["content"]
    assert all(m["role"] != "tool" or m["tool_call_id"] == "c1" for m in followups["fake-model"])
    # The active branch is the first model's whole reply; the second's lives beside it.
    assert [(m["role"], m["content"]) for m in setup.messages(chat)] == [
        ("user", "use tools"), ("assistant", ""), ("tool", "ABC"), ("assistant", "upper gave ABC")]
    user = setup.messages(chat)[0]["id"]
    columns = setup.api.get(f"/api/chats/{chat}/messages/{user}/compare").body["columns"]
    assert [m["role"] for m in columns[1]["messages"]] == ["assistant", "tool", "assistant"]
    assert columns[1]["messages"][-1]["content"] == "guarded ran"


def test_regenerating_one_column_makes_one_new_version_by_its_model(compare):
    setup = compare
    chat = setup.chat(title="t")
    setup.fake.enqueue(*(for_model(m, S.text(f"first of {m}")) for m in MODELS[:2]))
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q", compare=setup.ids[:2])
    start = sock.until("turn_start")
    sock.until("turn_end")
    second = start["compare"][1]
    setup.fake.enqueue(for_model("fake-two", S.text("again by two")))
    sock.send(type="regenerate", message_id=second["message_id"], model_id=second["model_id"])
    again = sock.until("turn_start")
    assert "compare" not in again
    assert sock.until("turn_end")["status"] == "completed"
    msgs = setup.messages(chat)
    assert [(m["role"], m["content"]) for m in msgs] == [("user", "q"), ("assistant", "again by two")]
    assert msgs[1]["versions"]["count"] == 3
    tree = setup.api.get(f"/api/chats/{chat}/tree").body["items"]
    assert not [m for m in tree if m["status"] == "streaming"]
