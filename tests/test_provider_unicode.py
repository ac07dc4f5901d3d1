"""Text from a provider that is not valid Unicode, through each wire API, the real server and its socket.

The SDKs json-decode `\\ud83d` escapes into Python strings as they are, so a
provider that splits a surrogate pair across two chunks, or sends half of one,
hands Numi text that UTF-8 (SQLite, the socket) cannot carry. The pair must be
joined, a lone half replaced with U+FFFD, and the turn must complete.
"""
from __future__ import annotations

import json

import pytest

from tests.fakeprovider import script as S

# (provider kind, the fake's address for it, wire API)
WIRES = [("openai_compatible", "base_url", "chat_completions"),
         ("openai", "base_url", "responses"),
         ("anthropic", "url", "anthropic_messages")]
GRIN = "\U0001F600"
THINK = "\U0001F914"


def model_on(setup, kind: str, address: str, wire_api: str) -> str:
    provider = setup.api.post("/api/providers", {"kind": kind, "name": f"Fake {wire_api}",
                                                 "base_url": getattr(setup.fake, address),
                                                 "api_key": "test-key-123", "timeout": 10})
    assert provider.status == 201, provider
    model = setup.api.post("/api/models", {"provider_id": provider.body["id"], "api_model": "m",
                                           "wire_api": wire_api,
                                           "supports": {"tools": True, "reasoning": True}})
    assert model.status == 201, model
    return model.body["id"]


@pytest.mark.parametrize("kind, address, wire_api", WIRES, ids=[w[2] for w in WIRES])
def test_split_and_lone_surrogates_are_mended_and_the_turn_completes(setup, kind, address, wire_api):
    chat = setup.chat(title="t", model_id=model_on(setup, kind, address, wire_api))
    setup.fake.enqueue([S.reasoning("hmm \ud83e"), S.reasoning("\udd14 ok"),
                        S.text("smile \ud83d"), S.text("\ude00 then a lone \ud800 half"), S.text(" \udfff"),
                        S.text(" and a high half last \ud83d")])
    sock, watcher = setup.socket(chat), setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    reply = setup.messages(chat)[-1]
    assert reply["content"] == f"smile {GRIN} then a lone \ufffd half \ufffd and a high half last \ufffd"
    assert reply["reasoning"] == f"hmm {THINK} ok"
    assert reply["status"] == "complete" and reply["error"] is None
    # Every socket of the chat saw the same text and is still open.
    watcher.until("turn_end")
    for s in (sock, watcher):
        assert s.text() == reply["content"]
        s.send(type="ping")
        s.until("pong")


@pytest.mark.parametrize("kind, address, wire_api", WIRES, ids=[w[2] for w in WIRES])
def test_tool_arguments_split_inside_a_surrogate_pair_are_joined(setup, kind, address, wire_api):
    chat = setup.chat(title="t", model_id=model_on(setup, kind, address, wire_api))
    setup.fake.enqueue([S.tool_call(0, "call_1", "upper", '{"text": "a\ud83d'), S.tool_args(0, '\ude00b"}')],
                       [S.text("done")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    assert json.loads(sock.of("tool_start")[0]["arguments"]) == {"text": f"a{GRIN}b"}
    assert sock.of("tool_end")[0]["output"] == f"A{GRIN}B"
    call = setup.messages(chat)[1]["tool_calls"][0]
    assert json.loads(call["arguments"]) == {"text": f"a{GRIN}b"}


def test_a_provider_error_quoting_a_lone_surrogate_reaches_every_socket(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("so far"), S.error(400, {"error": {"message": "bad \ud800 input", "code": 400}})])
    sock, watcher = setup.socket(chat), setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    error = sock.until("error")
    assert "bad \ufffd input" in error["message"]
    assert sock.until("turn_end")["status"] == "failed"
    reply = setup.messages(chat)[-1]
    assert reply["status"] == "error" and reply["content"] == "so far" and "\ufffd" in reply["error"]["message"]
    assert watcher.until("turn_end")["status"] == "failed"
    for s in (sock, watcher):
        s.send(type="ping")
        s.until("pong")


def test_tool_output_that_is_not_unicode_is_saved_and_sent_mended(setup_with):
    setup = setup_with({"NUMI_TOOL_PLUGINS": "tests.tool_plugin,tests.unicode_tool_plugin"})
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.tool_call(0, "call_1", "cut_text", '{"text": "ab"}')], [S.text("done")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    assert sock.until("turn_end")["status"] == "completed", sock.of("error")
    assert sock.of("tool_end")[0]["output"] == "ab\ufffd"
    assert [m["content"] for m in setup.messages(chat) if m["role"] == "tool"] == ["ab\ufffd"]


def test_discovery_leaves_out_a_model_id_that_is_not_unicode(server, api):
    from tests.fakeprovider import FakeProvider

    with FakeProvider(models=("good-model", "bad\ud800model")) as fake:
        provider = api.post("/api/providers", {"kind": "openai_compatible", "name": "Local",
                                               "base_url": fake.base_url}).body
        r = api.post(f"/api/providers/{provider['id']}/discover")
    assert r.status == 200, r
    assert [m["api_model"] for m in r.body["added"]] == ["good-model"]
