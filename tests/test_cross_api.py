"""One conversation with reasoning and tool use, carried across all three wire APIs.

Each turn runs on another model; the request bodies the fake received show what
each adapter replayed: tool calls and results in its own shape, signed thinking
only to the model that wrote it, and no reasoning where the API would reject it.
"""
from tests.fakeprovider import script as S


def add_model(setup, kind, base_url, wire_api, name):
    provider = setup.api.post("/api/providers", {"kind": kind, "name": name, "base_url": base_url,
                                                 "api_key": "test-key-123", "timeout": 10})
    assert provider.status == 201, provider
    model = setup.api.post("/api/models", {"provider_id": provider.body["id"], "api_model": f"{kind}-model",
                                           "wire_api": wire_api, "supports": {"tools": True, "reasoning": True}})
    assert model.status == 201, model
    return model.body["id"]


def run_turn(setup, sock, chat, model_id, content, request_id):
    assert setup.api.patch(f"/api/chats/{chat}", {"model_id": model_id}).status == 200
    before = len(setup.fake.requests)
    sock.send(type="send", request_id=request_id, content=content)
    assert sock.until("turn_end", timeout=30)["status"] == "completed", sock.of("error")
    return [r.body for r in setup.fake.requests[before:]]


def test_a_conversation_survives_switching_between_every_wire_api(setup):
    fake = setup.fake
    claude = add_model(setup, "anthropic", fake.url, "anthropic_messages", "Fake Anthropic")
    gpt = add_model(setup, "openai", fake.base_url, "responses", "Fake OpenAI")
    local = setup.model["id"]  # chat_completions through the openai_compatible provider
    chat = setup.chat(title="t", system_prompt="Be brief.", params={"reasoning_effort": "low"})
    sock = setup.socket(chat)

    # 1. Anthropic: thinks (signed), calls a tool, then answers.
    fake.enqueue([S.reasoning("Upper-case it."), S.signature("sig-1"),
                  S.tool_call(0, "toolu_1", "upper", '{"text": "abc"}')],
                 [S.reasoning("Got it."), S.signature("sig-2"), S.text("It is ABC.")])
    first, continuation = run_turn(setup, sock, chat, claude, "Shout abc", "r1")
    assert first["system"] == "Be brief." and all(m["role"] != "system" for m in first["messages"])
    assert first["thinking"]["type"] == "enabled" and first["max_tokens"] > first["thinking"]["budget_tokens"]
    replayed = continuation["messages"][1]["content"]
    assert replayed[0] == {"type": "thinking", "thinking": "Upper-case it.", "signature": "sig-1"}
    assert replayed[-1]["type"] == "tool_use" and replayed[-1]["input"] == {"text": "abc"}
    result = continuation["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"
    saved = setup.messages(chat)
    assert saved[1]["reasoning"] == "Upper-case it." and saved[1]["tool_calls"][0]["id"] == "toolu_1"

    # 2. Responses: sees the tool exchange as function_call items, no Anthropic thinking.
    fake.enqueue([S.reasoning("Summarising."), S.encrypted("enc-1"), S.text("Second answer.")])
    (body,) = run_turn(setup, sock, chat, gpt, "And now?", "r2")
    assert body["instructions"] == "Be brief."
    items = body["input"]
    call = next(i for i in items if i.get("type") == "function_call")
    output = next(i for i in items if i.get("type") == "function_call_output")
    assert (call["call_id"], call["name"], output["call_id"], output["output"]) == ("toolu_1", "upper", "toolu_1", "ABC")
    assert not any(i.get("type") == "reasoning" for i in items)
    assert "sig-1" not in str(body)

    # 3. Chat Completions: tool messages, and no reasoning of any API.
    fake.enqueue([S.text("Third answer.")])
    (body,) = run_turn(setup, sock, chat, local, "Once more", "r3")
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    assert body["messages"][2]["tool_calls"][0]["id"] == "toolu_1" and body["messages"][3]["content"] == "ABC"
    assert "sig-1" not in str(body) and "enc-1" not in str(body)
    assert not any("reasoning_content" in m for m in body["messages"])

    # 4. Back to Anthropic: its own signed thinking comes back, nobody else's.
    fake.enqueue([S.text("Fourth answer.")])
    (body,) = run_turn(setup, sock, chat, claude, "Last one", "r4")
    blocks = [b for m in body["messages"] if m["role"] == "assistant" and isinstance(m["content"], list)
              for b in m["content"]]
    signatures = [b.get("signature") for b in blocks if b["type"] == "thinking"]
    assert signatures == ["sig-1", "sig-2"] and "enc-1" not in str(body)
    assert [m["content"] for m in setup.messages(chat) if m["role"] == "assistant" and m["content"]] == [
        "It is ABC.", "Second answer.", "Third answer.", "Fourth answer."]
