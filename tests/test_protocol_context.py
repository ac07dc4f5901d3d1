"""Long conversations (CONTRACT §6) over the real server: the context, compaction, the inspector."""
from __future__ import annotations

import base64

from tests.fakeprovider import script as S
from tests.test_cross_api import add_model

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet "  # 10 tokens by any count


def long_text(tag: str, tokens: int = 300) -> str:
    return f"{tag}: " + WORDS * (tokens // 10)


def turn(sock, content: str, request_id: str) -> dict:
    sock.send(type="send", request_id=request_id, content=content)
    start = sock.until("turn_start")
    end = sock.until("turn_end", turn_id=start["turn_id"], timeout=30)
    return {"start": start, "end": end}


def small_window(setup, window: int = 2000, reply: int = 200) -> None:
    r = setup.api.patch(f"/api/models/{setup.model['id']}", {"context_window": window, "max_output_tokens": reply})
    assert r.status == 200, r


def summary_request(body: dict) -> bool:
    return any("<transcript>" in (m.get("content") or "") for m in body.get("messages", []))


def three_long_turns(setup):
    """A chat of three long turns on a 2 000-token window (1 800 for input, threshold 1 600)."""
    small_window(setup)
    chat = setup.chat(title="long", system_prompt="Be brief.")
    sock = setup.socket(chat)
    for i in range(3):
        setup.fake.enqueue([S.text(f"answer {i}")])
        assert turn(sock, long_text(f"question {i}", 250), f"r{i}")["end"]["status"] == "completed"
    return chat, sock


def test_context_counts_what_the_next_request_carries(setup):
    chat = setup.chat(title="t", system_prompt="Be brief.")
    empty = setup.api.get(f"/api/chats/{chat}/context").body
    assert empty["model_id"] == setup.model["id"] and empty["compaction"] is None
    assert empty["messages_included"] == 0 and empty["messages_omitted"] == 0
    assert empty["parts"]["system"] > 0 and empty["parts"]["history"] == 0 and empty["estimated"] is True
    assert empty["used_tokens"] == sum(empty["parts"].values())
    sock = setup.socket(chat)
    setup.fake.enqueue([S.text("short answer"), S.usage(321, 7)])
    turn(sock, long_text("q"), "r1")
    after = setup.api.get(f"/api/chats/{chat}/context").body
    assert after["messages_included"] == 2 and after["messages_omitted"] == 0
    # The last reply's own count: its request's input plus what it wrote, exactly.
    assert after["estimated"] is False and after["used_tokens"] == 321 + 7
    assert after["used_tokens"] == sum(after["parts"].values())
    # A draft is counted as the next message, estimated; the server is not changed by it.
    drafted = setup.api.post(f"/api/chats/{chat}/context", {"draft": long_text("draft", 500)}).body
    assert drafted["estimated"] is True and drafted["used_tokens"] > after["used_tokens"] + 400
    upload = setup.api.upload("notes.txt", (WORDS * 200).encode(), content_type="text/plain").body
    attached = setup.api.post(f"/api/chats/{chat}/context", {"draft": "", "file_ids": [upload["id"]]}).body
    assert attached["parts"]["attachments"] >= 1500
    assert len(setup.messages(chat)) == 2


def test_bad_context_requests_are_refused_and_change_nothing(setup):
    chat = setup.chat(title="t")
    assert setup.api.get("/api/chats/c_nope/context").status == 404
    assert setup.api.get("/api/chats/c_nope/inspect").status == 404
    assert setup.api.post("/api/chats/c_nope/compact").status == 404
    r = setup.api.post(f"/api/chats/{chat}/context", {"file_ids": ["file_missing"]})
    assert r.status == 422 and "Attach it again" in r.body["error"]["fields"]["file_ids"]
    r = setup.api.post(f"/api/chats/{chat}/context", {"draft": "x" * 1_000_001})
    assert r.status == 422 and "draft" in r.body["error"]["fields"]
    r = setup.api.post(f"/api/chats/{chat}/context", {"file_ids": "file_1"})
    assert r.status == 422
    r = setup.api.post(f"/api/chats/{chat}/compact")
    assert r.status == 422 and r.body["error"]["code"] == "nothing_to_compact"
    r = setup.api.patch("/api/settings", {"compaction": {"threshold": 0.99}})
    assert r.status == 422 and "compaction.threshold" in r.body["error"]["fields"]
    r = setup.api.patch("/api/settings", {"compaction": {"model_id": "m_nope"}})
    assert r.status == 422 and "compaction.model_id" in r.body["error"]["fields"]
    r = setup.api.patch("/api/settings", {"compaction": {"threshold": 0.6}})
    assert r.status == 200 and r.body["compaction"] == {"auto": True, "threshold": 0.6, "model_id": None}


def test_a_turn_past_the_threshold_compacts_first_and_sends_summary_and_tail(setup):
    chat, sock = three_long_turns(setup)
    before = setup.messages(chat)
    near = setup.api.get(f"/api/chats/{chat}/context").body
    assert near["level"] in ("near", "ok") and near["compaction"] is None
    requests_before = len(setup.fake.requests)
    setup.fake.enqueue([S.text("SUMMARY-ONE: the person asked three long questions.")], [S.text("answer 3")])
    done = turn(sock, long_text("question 3", 750), "r3")
    assert done["end"]["status"] == "completed"
    compacted = sock.of("compacted")[-1]
    summary_body, turn_body = [r.body for r in setup.fake.requests[requests_before:]]
    # The summary request came first, with the older turns as its transcript.
    assert summary_request(summary_body)
    transcript = summary_body["messages"][-1]["content"]
    assert "question 0" in transcript and "answer 0" in transcript and "question 3" not in transcript
    # The turn's request: the summary as system text, then only the messages after the boundary.
    system = turn_body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Be brief.")
    assert "SUMMARY-ONE" in system["content"]
    sent = [m["content"] for m in turn_body["messages"][1:]]
    assert sent[-1].startswith("question 3") and not any(c.startswith("question 0") for c in sent)
    ids = [m["id"] for m in before]
    boundary = compacted["boundary_message_id"]
    assert boundary in ids and compacted["tokens_after"] < compacted["tokens_before"]
    assert len(sent) == len(ids) - ids.index(boundary) - 1 + 1  # the messages after it, and the new one
    # The transcript is intact; the context names the checkpoint.
    after = setup.messages(chat)
    assert [m["id"] for m in after[:len(ids)]] == ids and len(after) == len(ids) + 2
    context = setup.api.get(f"/api/chats/{chat}/context").body
    assert context["compaction"]["boundary_message_id"] == boundary
    assert context["compaction"]["summary"].startswith("SUMMARY-ONE")
    assert context["parts"]["summary"] > 0
    assert context["messages_omitted"] == ids.index(boundary) + 1

    # A version at or before the boundary starts a branch without the checkpoint …
    setup.fake.enqueue([S.text("a new first answer")])
    sock.send(type="edit", message_id=ids[0], content="a short first question", request_id="e1")
    sock.until("turn_end", timeout=30)
    edited = setup.fake.requests[-1].body
    assert not any("SUMMARY-ONE" in (m.get("content") or "") for m in edited["messages"])
    assert setup.api.get(f"/api/chats/{chat}/context").body["compaction"] is None
    # … and switching back brings it back.
    assert setup.api.post(f"/api/chats/{chat}/active", {"message_id": after[-1]["id"]}).status == 200
    back = setup.api.get(f"/api/chats/{chat}/context").body
    assert back["compaction"]["boundary_message_id"] == boundary


def test_a_failed_summary_falls_back_to_trimming_and_the_turn_runs(setup):
    chat, sock = three_long_turns(setup)
    setup.fake.enqueue([S.error(400, {"error": {"message": "summary backend down"}})], [S.text("answer 3")])
    done = turn(sock, long_text("question 3", 750), "r3")
    assert done["end"]["status"] == "completed"
    trimmed = sock.of("context_trimmed")[-1]
    assert trimmed["messages_omitted"] > 0 and trimmed["tokens_after"] < trimmed["tokens_before"]
    assert "could not be summarized" in trimmed["notice"]
    assert not sock.of("compacted")
    body = setup.fake.requests[-1].body
    note = body["messages"][0]
    assert note["role"] == "system" and "left out" in note["content"]
    assert all(m["role"] != "system" for m in body["messages"][1:])
    assert setup.api.get(f"/api/chats/{chat}/context").body["compaction"] is None
    assert len(setup.messages(chat)) == 8


def test_summarize_now_keeps_only_the_newest_turn_and_refuses_while_busy(setup):
    chat, sock = three_long_turns(setup)
    items = setup.messages(chat)
    setup.fake.enqueue([S.text("SUMMARY-NOW")])
    r = setup.api.post(f"/api/chats/{chat}/compact")
    assert r.status == 200, r
    assert r.body["boundary_message_id"] == items[3]["id"] and r.body["summary"] == "SUMMARY-NOW"
    assert set(r.body) == {"boundary_message_id", "summary", "tokens_before", "tokens_after", "created_at"}
    context = setup.api.get(f"/api/chats/{chat}/context").body
    assert context["compaction"]["boundary_message_id"] == items[3]["id"]
    assert context["messages_included"] == 2 and context["messages_omitted"] == 4
    # A second summary takes the first one in.
    setup.fake.enqueue([S.text("answer 3")])
    turn(sock, "one more", "r3")
    setup.fake.enqueue([S.text("SUMMARY-TWO")])
    assert setup.api.post(f"/api/chats/{chat}/compact").status == 200
    assert "SUMMARY-NOW" in setup.fake.requests[-1].body["messages"][-1]["content"]
    # While a turn runs: 409 busy.
    setup.fake.enqueue([S.hang()])
    sock.send(type="send", request_id="r9", content="wait")
    sock.until("turn_start")
    setup.fake.wait_hanging()
    r = setup.api.post(f"/api/chats/{chat}/compact")
    assert r.status == 409 and r.body["error"]["code"] == "busy"
    sock.send(type="stop")
    setup.fake.release()
    sock.until("turn_end")


def _inspected_then_sent(setup, model_id: str) -> tuple[dict, dict]:
    chat = setup.chat(title="t", system_prompt="Be brief.", model_id=model_id)
    image = setup.api.upload("dot.png", base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
        content_type="image/png").body
    sock = setup.socket(chat)
    setup.fake.enqueue([S.text("first answer")])
    sock.send(type="send", request_id="r1", content="look at this", attachments=[image["id"]])
    assert sock.until("turn_end", timeout=30)["status"] == "completed"
    inspected = setup.api.get(f"/api/chats/{chat}/inspect").body
    setup.fake.enqueue([S.text("second answer")])
    turn(sock, "and now?", "r2")
    return inspected, setup.fake.requests[-1]


def _without_images(value):
    if isinstance(value, dict):
        return {k: _without_images(v) for k, v in value.items() if k not in ("data", "url", "image_url")}
    if isinstance(value, list):
        return [_without_images(v) for v in value]
    return value


def test_the_inspector_shows_the_request_each_wire_api_then_receives(setup):
    fake = setup.fake
    models = {"chat_completions": setup.model["id"],
              "responses": add_model(setup, "openai", fake.base_url, "responses", "Fake OpenAI"),
              "anthropic_messages": add_model(setup, "anthropic", fake.url, "anthropic_messages", "Fake Claude")}
    for p in setup.api.get("/api/models").body:
        setup.api.patch(f"/api/models/{p['id']}", {"supports": {"vision": True, "tools": True}})
    for wire_api, model_id in models.items():
        inspected, received = _inspected_then_sent(setup, model_id)
        assert inspected["wire_api"] == wire_api
        assert inspected["url"].endswith(received.path.removeprefix("/v1") if wire_api != "anthropic_messages"
                                         else received.path)
        assert "test-key" not in repr(inspected) and "sk-test" not in repr(inspected)
        body, sent = inspected["body"], received.body
        key = "input" if wire_api == "responses" else "messages"
        # The same request, but for the person's next message …
        assert {k: v for k, v in body.items() if k != key} == {k: v for k, v in sent.items() if k != key}
        assert _without_images(body[key]) == _without_images(sent[key][:len(body[key])])
        assert len(sent[key]) == len(body[key]) + 1
        # … and the image's bytes shown as its type, size and hash.
        shown = repr(body[key])
        assert "image/png, 70 bytes, sha256 " in shown and "iVBORw0KGgo" not in shown
        assert inspected["tokens"]["total"] > 0 and len(inspected["tokens"]["messages"]) == len(body[key])
        assert inspected["model"] == sent["model"]


def test_anthropic_counts_the_context_exactly_with_its_counting_endpoint(setup):
    fake = setup.fake
    claude = add_model(setup, "anthropic", fake.url, "anthropic_messages", "Fake Claude")
    counted = []

    def count(body):
        counted.append(body)
        return 200, {"input_tokens": 4242}

    fake.routes[("POST", "/v1/messages/count_tokens")] = count
    chat = setup.chat(title="t", system_prompt="Be brief.", model_id=claude)
    context = setup.api.get(f"/api/chats/{chat}/context").body
    assert context["estimated"] is False and context["used_tokens"] == 4242
    assert counted[0]["system"] == "Be brief." and counted[0]["model"] == "anthropic-model"
    # Asked once per distinct request.
    setup.api.get(f"/api/chats/{chat}/context")
    assert len(counted) == 1
    fake.routes[("POST", "/v1/messages/count_tokens")] = lambda body: (500, {"error": {"message": "down"}})
    other = setup.chat(title="t2", system_prompt="Be very brief.", model_id=claude)
    assert setup.api.get(f"/api/chats/{other}/context").body["estimated"] is True
