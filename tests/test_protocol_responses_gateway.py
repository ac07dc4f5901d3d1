"""A Responses-compatible gateway through the real server: what it streams is
shown and saved once, though its ending events name items by other ids."""
import json

import pytest

from tests.fakeprovider import script as S


@pytest.fixture
def gateway(setup):
    """A chat on a Responses-wire model of the fake, its socket, and its model id."""
    provider = setup.api.post("/api/providers", {"kind": "openai", "name": "Gateway", "timeout": 10,
                                                 "base_url": setup.fake.base_url, "api_key": "test-key-123"})
    assert provider.status == 201, provider
    model = setup.api.post("/api/models", {"provider_id": provider.body["id"], "api_model": "gw-model",
                                           "wire_api": "responses",
                                           "supports": {"tools": True, "reasoning": True}})
    assert model.status == 201, model
    chat = setup.chat(title="t", model_id=model.body["id"], params={"reasoning_effort": "low"})
    return chat, setup.socket(chat)


def turn(setup, sock, content: str, request_id: str) -> str:
    """Send a message, wait for the turn to complete; its turn id."""
    sock.send(type="send", request_id=request_id, content=content)
    start = sock.until("turn_start")
    assert sock.until("turn_end", timeout=30)["status"] == "completed", sock.of("error")
    return start["turn_id"]


@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "text-only-in-ending-events"])
def test_a_reply_with_renamed_ids_is_streamed_and_saved_once(setup, gateway, deltas):
    chat, sock = gateway
    setup.fake.enqueue({"steps": [S.reasoning("Thinking it "), S.reasoning("over."), S.text("The answer "),
                                  S.text("is 42."), S.usage(9, 6)],
                        "quirks": {"rename_ids": True, "deltas": deltas}})
    turn_id = turn(setup, sock, "What is it?", "r1")
    assert sock.text(turn_id) == "The answer is 42."
    assert "".join(e["delta"] for e in sock.of("reasoning", turn_id)) == "Thinking it over."
    reply = setup.messages(chat)[-1]
    assert (reply["role"], reply["status"]) == ("assistant", "complete")
    assert (reply["content"], reply["reasoning"]) == ("The answer is 42.", "Thinking it over.")


def test_a_tool_call_whose_arguments_come_only_at_the_end_runs_once(setup, gateway):
    chat, sock = gateway
    quirks = {"rename_ids": True, "deltas": False, "done": ["item"]}
    setup.fake.enqueue({"steps": [S.tool_call(0, "call_1", "upper", '{"text": "abc"}')], "quirks": quirks},
                       {"steps": [S.text("It is ABC.")], "quirks": quirks})
    turn_id = turn(setup, sock, "Shout abc", "r1")
    assert [(e["call_id"], json.loads(e["arguments"])) for e in sock.of("tool_start", turn_id)] == \
        [("call_1", {"text": "abc"})]
    assert sock.text(turn_id) == "It is ABC."
    saved = setup.messages(chat)
    assert [m["role"] for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert [(c["id"], c["arguments"]) for c in saved[1]["tool_calls"]] == [("call_1", '{"text": "abc"}')]
    assert saved[2]["content"] == "ABC" and saved[3]["content"] == "It is ABC."
