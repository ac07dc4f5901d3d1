"""Turns outlive sockets but not processes: kill -9, restart, continue, SIGTERM, provider failures."""
import time

from tests.conftest import Setup
from tests.fakeprovider import script as S


def restart(setup: Setup) -> Setup:
    setup.server.start()
    setup.api = setup.server.api()
    return setup


def test_kill9_mid_reply_keeps_all_but_the_last_second_and_continue_finishes_it(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.delay(0.02)] + [S.text(f"w{i} ") for i in range(400)])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="write a lot")
    received = []  # (time, text so far)
    first = None
    while True:
        event = sock.recv()
        if event["type"] == "content":
            now = time.monotonic()
            first = first or now
            received.append((now, sock.text()))
            if now - first > 2.5:
                break
    killed_at = time.monotonic()
    setup.server.kill9()
    restart(setup)
    last = setup.messages(chat)[-1]
    assert last["role"] == "assistant" and last["status"] == "interrupted"
    # Everything the client had a second before the kill is on disk.
    safe = [text for t, text in received if t <= killed_at - 1.0][-1]
    assert last["content"].startswith(safe) and len(last["content"]) >= len(safe) > 0
    assert received[-1][1].startswith(last["content"])
    # Continue carries on in the same message.
    setup.fake.enqueue([S.text("and the rest.")])
    sock = setup.socket(chat)
    sock.send(type="continue")
    start = sock.until("turn_start")
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    final = setup.messages(chat)[-1]
    assert final["id"] == last["id"] and final["status"] == "complete"
    assert final["content"] == last["content"] + "and the rest."
    sent = setup.fake.requests[-1].body["messages"]
    assert sent[-2] == {"role": "assistant", "content": last["content"]}
    assert "cut off" in sent[-1]["content"]
    assert start["user_message_id"] is None and start["continue_message_id"] == last["id"]
    assert sock.text(start["turn_id"]) == final["content"]  # the turn's deltas add up to the message


def test_queued_messages_survive_a_kill_as_interrupted(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="first")
    setup.fake.wait_hanging()
    sock.send(type="send", request_id="r2", content="second")
    sock.until("accepted", request_id="r2")
    setup.server.kill9()
    restart(setup)
    msgs = setup.messages(chat)
    assert [(m["role"], m["content"], m["status"]) for m in msgs] == [
        ("user", "first", "complete"), ("user", "second", "interrupted")]
    assert msgs[1]["parent_id"] == msgs[0]["id"]  # it joined the branch where it was sent
    setup.fake.enqueue([S.text("answering both")])
    sock = setup.socket(chat)
    sock.send(type="continue")
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    assert [m["status"] for m in setup.messages(chat)] == ["complete", "complete", "complete"]


def test_sigterm_stops_running_turns_and_keeps_partial_text(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("half an answer"), S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    sock.until("content")
    setup.fake.wait_hanging()
    took = setup.server.terminate()
    assert took < 10
    assert not (setup.server.data_dir / "server.json").exists()
    restart(setup)
    last = setup.messages(chat)[-1]
    assert (last["status"], last["content"]) == ("cancelled", "half an answer")


def test_new_epoch_after_restart(setup):
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    epoch = sock.until("turn_end")["epoch"]
    setup.server.terminate()
    restart(setup)
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r2", content="q2")
    assert sock.until("turn_end")["epoch"] != epoch


def test_provider_error_names_the_provider_and_status_and_loses_nothing(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue(*[[S.error(500)]] * 3)
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hello?")
    error = sock.until("error")
    end = sock.until("turn_end")
    assert end["status"] == "failed"
    assert "Fake Local" in error["message"] and "500" in error["message"]
    assert len(setup.fake.requests) == 3  # retried before the first token, then gave up
    msgs = setup.messages(chat)
    assert msgs[0]["content"] == "hello?" and msgs[0]["status"] == "complete"
    assert msgs[1]["status"] == "error" and msgs[1]["error"]["message"] == error["message"]


def test_rate_limit_is_retried_after_retry_after(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.error(429, retry_after="0.2")], [S.text("made it")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    assert sock.until("turn_end")["status"] == "completed"
    assert sock.text() == "made it" and len(setup.fake.requests) == 2


def test_stream_cut_after_text_keeps_partial_as_error(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("so far so "), S.cut()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    error = sock.until("error")
    assert sock.until("turn_end")["status"] == "failed"
    assert "Fake Local" in error["message"]
    last = setup.messages(chat)[-1]
    assert (last["status"], last["content"]) == ("error", "so far so ")
    assert len(setup.fake.requests) == 1  # never retried once text had streamed


def test_garbage_from_the_provider_fails_the_turn_clearly(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.html()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    error = sock.until("error")
    assert sock.until("turn_end")["status"] == "failed"
    assert "Fake Local" in error["message"]


def test_hanging_provider_times_out(setup):
    assert setup.api.patch(f"/api/providers/{setup.provider['id']}", {"timeout": 1}).status == 200
    chat = setup.chat(title="t")
    setup.fake.enqueue(*[[S.hang()]] * 3)
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    error = sock.until("error", timeout=30)
    assert sock.until("turn_end")["status"] == "failed"
    assert error["code"] == "timeout" and "Fake Local" in error["message"]
    setup.fake.release(3)


def test_unreachable_provider(setup):
    chat = setup.chat(title="t")
    dead = setup.api.post("/api/providers", {"kind": "openai_compatible", "name": "Gone Server",
                                             "base_url": "http://127.0.0.1:9/v1", "timeout": 2}).body
    model = setup.api.post("/api/models", {"provider_id": dead["id"], "api_model": "m"}).body
    assert setup.api.patch(f"/api/chats/{chat}", {"model_id": model["id"]}).status == 200
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    error = sock.until("error", timeout=30)
    assert sock.until("turn_end")["status"] == "failed"
    assert "Gone Server" in error["message"] and error["code"] == "unreachable"


def test_chat_without_a_model_explains_what_to_do(setup):
    r = setup.api.post("/api/chats", {"title": "t"})
    chat = r.body["id"]
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    error = sock.until("error")
    assert sock.until("turn_end")["status"] == "failed"
    assert error["code"] == "no_model" and "Settings" in error["message"]
    assert setup.messages(chat)[0]["content"] == "q"


def test_turn_bigger_than_the_history_budget_fails_clearly(setup):
    assert setup.api.patch("/api/settings", {"compaction": {"auto": False}}).status == 200
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    for i in range(3):
        sock.send(type="send", request_id=f"r{i}", content="y" * 150_000)
        sock.until("turn_end", timeout=30)
    assert not sock.of("error")
    sock.send(type="send", request_id="big", content="z" * 199_000)
    sock.until("turn_end")
    body = setup.fake.requests[-1].body
    assert "left out" in body["messages"][0]["content"]  # older turns dropped, and the model is told


def test_steps_limit_ends_with_limit_and_continue_goes_on(setup_with):
    s = setup_with({"NUMI_MAX_STEPS": "2"})
    chat = s.chat(title="t")
    call = lambda i: [S.tool_call(0, f"c{i}", "upper", '{"text": "a"}')]
    s.fake.enqueue(call(1), call(2), call(3), [S.text("finally")])
    sock = s.socket(chat)
    sock.send(type="send", request_id="r1", content="loop")
    error = sock.until("error")
    assert error["code"] == "limit" and sock.until("turn_end")["status"] == "limit"
    sock.send(type="continue")
    sock.until("turn_start")
    assert sock.until("turn_end")["status"] == "completed"
    assert s.messages(chat)[-1]["content"] == "finally"


def test_fallback_model_answers_when_the_first_is_unreachable(setup):
    dead = setup.api.post("/api/providers", {"kind": "openai_compatible", "name": "Gone Server",
                                             "base_url": "http://127.0.0.1:9/v1", "timeout": 2}).body
    first = setup.api.post("/api/models", {"provider_id": dead["id"], "api_model": "gone",
                                           "fallbacks": [setup.model["id"]]})
    assert first.status == 201, first
    chat = setup.chat(title="t", model_id=first.body["id"])
    setup.fake.enqueue([S.text("backup speaking")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    fallback = sock.until("fallback")
    assert (fallback["from_model_id"], fallback["to_model_id"]) == (first.body["id"], setup.model["id"])
    assert "Gone Server" in fallback["reason"]
    assert sock.until("turn_end")["status"] == "completed"
    last = setup.messages(chat)[-1]
    assert (last["content"], last["model_id"]) == ("backup speaking", setup.model["id"])


def test_continue_after_a_failed_reply_answers_again(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.error(400)], [S.text("second try worked")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    assert sock.until("turn_end")["status"] == "failed"
    sock.send(type="continue")
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    sent = setup.fake.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]  # the empty failed reply is not sent back
    assert setup.messages(chat)[-1]["content"] == "second try worked"
