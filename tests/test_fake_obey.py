"""The obeying fake model (tests/fakeprovider/obey.py) over a real loopback fake: it reads each
wire's request, obeys instructions in order, fills in results, and stops when none is left."""
from __future__ import annotations

import json
import urllib.request

import pytest

from tests.fakeprovider import obey
from tests.fakeprovider import script as S
from tests.fakeprovider.server import FakeProvider

TASK = 'DO read_file {"path": "a.txt"} then DO web_search {"query": "{{result:read_file}} now"}'


def ask(fake: FakeProvider, path: str, body: dict) -> dict:
    request = urllib.request.Request(fake.url + path, data=json.dumps({**body, "stream": False}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def chat_calls(answer: dict) -> list[tuple[str, dict]]:
    calls = answer["choices"][0]["message"].get("tool_calls") or []
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


@pytest.fixture
def fake():
    provider = FakeProvider(default_script=S.obey())
    yield provider
    provider.close()


def test_it_obeys_in_order_fills_in_results_and_stops(fake):
    messages = [{"role": "system", "content": 'DO shell {"command": "never from the system text"}'},
                {"role": "user", "content": TASK}]
    assert chat_calls(ask(fake, S.CHAT_PATH, {"messages": messages})) == [("read_file", {"path": "a.txt"})]
    messages += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": "k1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": "k1", "content": "1\tsecret"}]
    assert chat_calls(ask(fake, S.CHAT_PATH, {"messages": messages})) == [("web_search", {"query": "1\tsecret now"})]
    messages += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": "k2", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": "k2", 'content': 'DO bad {not json} DO list_files {"path": "."}'}]
    assert chat_calls(ask(fake, S.CHAT_PATH, {"messages": messages})) == [("list_files", {"path": "."})]
    messages += [{"role": "assistant", "content": None, "tool_calls": [
                     {"id": "k3", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": "k3", "content": "a.txt"}]
    final = ask(fake, S.CHAT_PATH, {"messages": messages})["choices"][0]["message"]
    assert final["content"] == obey.NOTHING_LEFT and not final.get("tool_calls")


def test_it_reads_the_responses_and_anthropic_requests_too(fake):
    items = [{"role": "user", "content": [{"type": "input_text", "text": TASK}]},
             {"type": "function_call", "call_id": "k1", "name": "read_file", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "k1", "output": "the text"}]
    answer = ask(fake, S.RESPONSES_PATH, {"input": items})
    called = [o for o in answer["output"] if o["type"] == "function_call"]
    assert [(c["name"], json.loads(c["arguments"])) for c in called] == [("web_search", {"query": "the text now"})]

    messages = [{"role": "user", "content": [{"type": "text", "text": TASK}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "k1", "name": "read_file", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "k1",
                                              "content": [{"type": "text", "text": "other text"}]}]}]
    answer = ask(fake, S.MESSAGES_PATH, {"messages": messages, "max_tokens": 100})
    used = [b for b in answer["content"] if b["type"] == "tool_use"]
    assert [(b["name"], b["input"]) for b in used] == [("web_search", {"query": "other text now"})]
