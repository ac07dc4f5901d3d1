"""The Responses API adapter, through the real openai SDK, against the real fake
server on loopback (tests/fakeprovider/responses_wire.py). No mocks."""
from __future__ import annotations

import json
import threading
import time

import openai
import pytest

from backend.core.errors import (
    AuthError,
    BadResponse,
    ConnectionFailed,
    ContextTooLong,
    ProviderError,
    ProviderTimeout,
    RateLimited,
)
from backend.core.types import (
    Image,
    Message,
    ModelRequest,
    ProviderConfig,
    ReasoningDelta,
    ReasoningDetail,
    StepEnd,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallStart,
    ToolSpec,
    Usage,
)
from backend.providers import complete_text, open_stream
from tests.fakeprovider import FakeProvider
from tests.fakeprovider import script as S

KEY = "sk-" + "test-SECRET-0123456789abcdef"  # built, so no scanner mistakes it for a real key
NAME = "OpenAI"
MODEL_ID = "model-a"


@pytest.fixture
def fp():
    with FakeProvider() as fake:
        yield fake


def request(base_url: str, *, messages=(Message("user", "Hi"),), system: str = "", tools=(),
            params=None, api_key: str | None = KEY, timeout: float = 10.0,
            model_id: str | None = MODEL_ID) -> ModelRequest:
    provider = ProviderConfig(id="p1", name=NAME, kind="openai", base_url=base_url, api_key=api_key,
                              timeout=timeout)
    return ModelRequest(provider=provider, wire_api="responses", model="gpt-test", system=system,
                        messages=tuple(messages), tools=tuple(tools), params=params or {},
                        model_id=model_id)


def run(req: ModelRequest) -> list:
    return list(open_stream(req))


def failure(req: ModelRequest, expected: type[ProviderError]) -> tuple[list, ProviderError]:
    """Events seen before the error, and the error (checked for a good message)."""
    seen: list = []
    with pytest.raises(expected) as info:
        for event in open_stream(req):
            seen.append(event)
    err = info.value
    assert NAME in err.message
    assert KEY not in err.message and KEY not in str(err)
    return seen, err


def texts(events, kind=TextDelta) -> str:
    return "".join(e.text for e in events if isinstance(e, kind))



def sse(kind: str, **fields) -> dict:
    """A raw step carrying one Responses event exactly as given."""
    return S.raw(f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n")


# --- streaming content ----------------------------------------------------------------

def test_plain_text(fp):
    fp.enqueue([S.text("Hel"), S.text("lo"), S.text(" world"), S.usage(12, 3)])
    events = run(request(fp.base_url))
    assert events == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" world"),
                      Usage(input_tokens=12, output_tokens=3), StepEnd("stop")]


def test_reasoning_summary_and_encrypted_item_become_a_reasoning_detail(fp):
    fp.enqueue([S.reasoning("Let me "), S.reasoning("think."), S.encrypted("gAAAA-opaque"),
                S.text("42"), S.usage(5, 9, reasoning_tokens=7)])
    events = run(request(fp.base_url))
    assert events == [
        ReasoningDelta("Let me "), ReasoningDelta("think."),
        ReasoningDetail({"wire_api": "responses", "type": "reasoning", "id": "rs_fake0",
                         "encrypted_content": "gAAAA-opaque",
                         "summary": [{"type": "summary_text", "text": "Let me think."}]}),
        TextDelta("42"),
        Usage(input_tokens=5, output_tokens=9, reasoning_tokens=7), StepEnd("stop")]


def test_reasoning_without_encrypted_content_stores_nothing(fp):
    # With store=false an item id alone cannot be replayed, so it is not kept.
    fp.enqueue([S.reasoning("hmm"), S.text("ok")])
    events = run(request(fp.base_url))
    assert not [e for e in events if isinstance(e, ReasoningDetail)]
    assert texts(events, ReasoningDelta) == "hmm"


def test_raw_reasoning_text_deltas(fp):
    fp.enqueue([S.reasoning("step one", field="reasoning_text"), S.text("done")])
    events = run(request(fp.base_url))
    assert events[:2] == [ReasoningDelta("step one"), TextDelta("done")]


def test_summary_parts_are_separate_paragraphs(fp):
    def delta(part: int, text: str) -> dict:
        return sse("response.reasoning_summary_text.delta", item_id="rs_1", output_index=0,
                   summary_index=part, delta=text)
    fp.enqueue([sse("response.output_item.added", output_index=0,
                    item={"id": "rs_1", "type": "reasoning", "summary": []}),
                delta(0, "**Plan**"), delta(0, " a"), delta(1, "**Check**"), S.text("x")])
    events = run(request(fp.base_url))
    assert texts(events, ReasoningDelta) == "**Plan** a\n\n**Check**"


def test_two_function_calls_with_split_arguments(fp):
    fp.enqueue([
        S.text("Checking."),
        S.tool_call(0, "call_a", "get_weather"),
        S.tool_args(0, '{"ci'), S.tool_args(0, 'ty": "Par'),
        S.tool_call(1, "call_b", "get_time", '{"tz"'),
        S.tool_args(0, 'is"}'),
        S.tool_args(1, ': "CET"}'),
        S.usage(30, 20),
    ])
    events = run(request(fp.base_url))
    calls = [e for e in events if isinstance(e, (ToolCallStart, ToolCallDelta))]
    assert calls == [
        ToolCallStart(0, "call_a", "get_weather"),
        ToolCallDelta(0, '{"ci'), ToolCallDelta(0, 'ty": "Par'),
        ToolCallStart(1, "call_b", "get_time"), ToolCallDelta(1, '{"tz"'),
        ToolCallDelta(0, 'is"}'),
        ToolCallDelta(1, ': "CET"}'),
    ]
    joined = {i: "".join(e.arguments for e in calls if isinstance(e, ToolCallDelta) and e.index == i)
              for i in (0, 1)}
    assert json.loads(joined[0]) == {"city": "Paris"}
    assert json.loads(joined[1]) == {"tz": "CET"}
    assert texts(events) == "Checking."
    assert events[-1] == StepEnd("tool_calls")


def test_arguments_only_in_the_done_event(fp):
    # Some servers send no argument deltas, only function_call_arguments.done.
    item = {"id": "fc_1", "type": "function_call", "call_id": "call_z", "name": "f", "arguments": ""}
    fp.enqueue([sse("response.output_item.added", output_index=0, item=item),
                sse("response.function_call_arguments.done", item_id="fc_1", output_index=0,
                    arguments='{"x": 1}'),
                sse("response.output_item.done", output_index=0, item={**item, "arguments": '{"x": 1}'}),
                S.cut(graceful=True)])
    seen, _ = failure(request(fp.base_url), ConnectionFailed)
    assert seen == [ToolCallStart(0, "call_z", "f"), ToolCallDelta(0, '{"x": 1}')]


def test_usage_details_and_incomplete_is_length(fp):
    fp.enqueue([S.text("ok"), S.finish("length"),
                S.usage(100, 50, reasoning_tokens=20, cached_tokens=64)])
    events = run(request(fp.base_url))
    assert events[-2:] == [Usage(input_tokens=100, output_tokens=50, reasoning_tokens=20,
                                 cached_tokens=64), StepEnd("length")]


def test_incomplete_tool_call_is_length_not_tool_calls(fp):
    fp.enqueue([S.tool_call(0, "c1", "f", '{"x": '), S.finish("length"), S.usage(1, 1)])
    assert run(request(fp.base_url))[-1] == StepEnd("length")


def test_usage_estimated_when_the_server_sends_none(fp):
    fp.enqueue([S.text("x" * 80),
                sse("response.completed", response={"id": "r", "status": "completed", "usage": None})])
    events = run(request(fp.base_url, messages=[Message("user", "y" * 400)]))
    usage = events[-2]
    assert isinstance(usage, Usage) and usage.estimated
    assert usage.output_tokens == 20
    assert 100 <= usage.input_tokens <= 140
    assert events[-1] == StepEnd("stop")


def test_server_that_ignores_stream_true(fp):
    fp.enqueue({"stream": False, "steps": [
        S.reasoning("why"), S.encrypted("ENC"), S.text("whole answer"),
        S.tool_call(0, "c1", "f", '{"x": 1}'), S.usage(8, 4)]})
    events = run(request(fp.base_url))
    assert events == [
        ReasoningDelta("why"),
        ReasoningDetail({"wire_api": "responses", "type": "reasoning", "id": "rs_fake0",
                         "encrypted_content": "ENC", "summary": [{"type": "summary_text", "text": "why"}]}),
        TextDelta("whole answer"), ToolCallStart(0, "c1", "f"), ToolCallDelta(0, '{"x": 1}'),
        Usage(input_tokens=8, output_tokens=4), StepEnd("tool_calls")]


def test_anthropic_only_steps_are_skipped(fp):
    fp.enqueue([S.reasoning("r"), {"type": "signature", "signature": "sig"},
                {"type": "redacted", "data": "x"}, S.text("t")])
    events = run(request(fp.base_url))
    assert [type(e) for e in events] == [ReasoningDelta, TextDelta, Usage, StepEnd]


def test_complete_text(fp):
    fp.enqueue([S.reasoning("hmm"), S.text("A short "), S.text("title")])
    assert complete_text(request(fp.base_url)) == "A short title"


def test_the_fake_satisfies_the_sdks_own_stream_helper(fp):
    # responses.stream() asserts the event order of the real API, so the fake
    # speaking it correctly is worth a test of its own.
    fp.enqueue([S.reasoning("r"), S.encrypted("E"), S.text("Hi "), S.text("there"),
                S.tool_call(0, "call_1", "f", '{"a": 1}'), S.usage(3, 4, reasoning_tokens=1)])
    client = openai.OpenAI(base_url=fp.base_url, api_key=KEY, max_retries=0)
    with client.responses.stream(model="gpt-test", input="hi") as s:
        for _ in s:
            pass
        final = s.get_final_response()
    assert [o.type for o in final.output] == ["reasoning", "message", "function_call"]
    assert final.output[0].encrypted_content == "E"
    assert final.output_text == "Hi there"
    assert (final.output[2].call_id, final.output[2].arguments) == ("call_1", '{"a": 1}')
    assert final.usage.output_tokens_details.reasoning_tokens == 1


# --- gateways: other ids in the ending events, text only in them ---------------------

ENDINGS = [("text",), ("part",), ("item",), ("text", "part", "item")]


def gateway(steps: list, **quirks) -> dict:
    return {"steps": steps, "quirks": quirks}


def calls_of(events) -> tuple[list, dict]:
    """The ToolCallStarts, and each call's joined arguments."""
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    args = {s.index: "".join(e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == s.index)
            for s in starts}
    return starts, args


@pytest.mark.parametrize("rename_ids", [False, True], ids=["same-ids", "renamed-ids"])
@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no-deltas"])
@pytest.mark.parametrize("done", ENDINGS, ids="+".join)
def test_reasoning_and_answer_are_shown_once_whatever_the_ending_events(fp, rename_ids, deltas, done):
    fp.enqueue(gateway([S.reasoning("Let me "), S.reasoning("think."), S.text("Hello "), S.text("world."),
                        S.usage(5, 4)], rename_ids=rename_ids, deltas=deltas, done=list(done)))
    events = run(request(fp.base_url))
    assert texts(events) == "Hello world."
    assert texts(events, ReasoningDelta) == "Let me think."
    assert events[-1] == StepEnd("stop")


@pytest.mark.parametrize("rename_ids", [False, True], ids=["same-ids", "renamed-ids"])
@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no-deltas"])
@pytest.mark.parametrize("done", [("text",), ("item",), ("text", "part", "item")], ids="+".join)
def test_function_call_arguments_arrive_once_whatever_the_ending_events(fp, rename_ids, deltas, done):
    fp.enqueue(gateway([S.text("Checking."), S.tool_call(0, "call_a", "get_weather", '{"ci'),
                        S.tool_args(0, 'ty": "Paris"}'), S.tool_call(1, "call_b", "get_time", '{"tz": "CET"}')],
                       rename_ids=rename_ids, deltas=deltas, done=list(done)))
    events = run(request(fp.base_url))
    starts, args = calls_of(events)
    assert starts == [ToolCallStart(0, "call_a", "get_weather"), ToolCallStart(1, "call_b", "get_time")]
    assert args == {0: '{"city": "Paris"}', 1: '{"tz": "CET"}'}
    assert texts(events) == "Checking."
    assert events[-1] == StepEnd("tool_calls")


@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no-deltas"])
def test_two_messages_at_two_positions_are_each_shown_once(fp, deltas):
    fp.enqueue(gateway([S.text("First. "), S.text("Second.")], split_messages=True, rename_ids=True,
                       deltas=deltas))
    assert texts(run(request(fp.base_url))) == "First. Second."


def _message_events(item_id: str, index: int, text: str) -> list:
    """The events that end a message item, all naming it `item_id`."""
    part = {"type": "output_text", "text": text, "annotations": []}
    return [sse("response.output_text.done", item_id=item_id, output_index=index, content_index=0, text=text),
            sse("response.content_part.done", item_id=item_id, output_index=index, content_index=0, part=part),
            sse("response.output_item.done", output_index=index,
                item={"id": item_id, "type": "message", "role": "assistant", "content": [part]})]


def _opened(item_id: str, index: int, **where) -> list:
    return [sse("response.output_item.added", **where, item={"id": item_id, "type": "message", "content": []}),
            sse("response.content_part.added", item_id=item_id, **where, content_index=0,
                part={"type": "output_text", "text": ""})]


def test_ending_events_add_only_what_the_deltas_left_out(fp):
    fp.enqueue([*_opened("msg_a", 0, output_index=0),
                sse("response.output_text.delta", item_id="msg_a", output_index=0, content_index=0, delta="Hel"),
                *_message_events("msg_b", 0, "Hello"), S.usage(1, 1)])
    events = run(request(fp.base_url))
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("Hel"), TextDelta("lo")]


def test_ending_text_that_disagrees_with_the_deltas_adds_nothing(fp):
    # What was shown stands; appending the other text would show both.
    fp.enqueue([*_opened("msg_a", 0, output_index=0),
                sse("response.output_text.delta", item_id="msg_a", output_index=0, content_index=0, delta="Hello"),
                *_message_events("msg_b", 0, "Goodbye"), S.usage(1, 1)])
    assert texts(run(request(fp.base_url))) == "Hello"


def test_renamed_ids_without_output_indexes(fp):
    def strip(step: dict) -> dict:
        ev = json.loads(step["data"].split("data: ", 1)[1])
        ev.pop("output_index", None)
        return sse(ev.pop("type"), **ev)
    fp.enqueue([*(strip(s) for s in _opened("msg_a", 0, output_index=0)),
                sse("response.output_text.delta", item_id="msg_a", content_index=0, delta="Hi"),
                *(strip(s) for s in _message_events("msg_b", 0, "Hi there")), S.usage(1, 1)])
    assert texts(run(request(fp.base_url))) == "Hi there"


def test_summary_parts_only_in_ending_events_with_renamed_ids(fp):
    parts = [{"type": "summary_text", "text": "**Plan** a"}, {"type": "summary_text", "text": "**Check** b"}]
    ending = [sse("response.reasoning_summary_text.done", item_id="rs_x", output_index=0, summary_index=i,
                  text=p["text"]) for i, p in enumerate(parts)]
    ending += [sse("response.reasoning_summary_part.done", item_id="rs_y", output_index=0, summary_index=i,
                   part=p) for i, p in enumerate(parts)]
    fp.enqueue([sse("response.output_item.added", output_index=0,
                    item={"id": "rs_1", "type": "reasoning", "summary": []}),
                sse("response.reasoning_summary_text.delta", item_id="rs_1", output_index=0, summary_index=0,
                    delta="**Plan**"),
                *ending,
                sse("response.output_item.done", output_index=0,
                    item={"id": "rs_z", "type": "reasoning", "summary": parts}),
                *_opened("msg_1", 1, output_index=1), *_message_events("msg_2", 1, "Done."), S.usage(1, 1)])
    events = run(request(fp.base_url))
    assert texts(events, ReasoningDelta) == "**Plan** a\n\n**Check** b"
    assert texts(events) == "Done."


@pytest.mark.parametrize("ids, indexes", [(("fc_a", "fc_b"), (0, 0)), (("fc", "fc"), (0, 1))],
                         ids=["one-index-for-all", "one-id-for-all"])
def test_two_calls_told_apart_by_whichever_of_id_and_index_differs(fp, ids, indexes):
    steps = []
    for call, item_id, index, args in zip(("call_a", "call_b"), ids, indexes, ('{"n": 1}', '{"n": 2}')):
        item = {"id": item_id, "type": "function_call", "call_id": call, "name": "f", "arguments": ""}
        steps += [sse("response.output_item.added", output_index=index, item=item),
                  sse("response.function_call_arguments.delta", item_id=item_id, output_index=index,
                      delta=args),
                  sse("response.function_call_arguments.done", item_id=item_id, output_index=index,
                      arguments=args),
                  sse("response.output_item.done", output_index=index, item={**item, "arguments": args})]
    fp.enqueue(steps + [S.usage(1, 1)])
    starts, args = calls_of(run(request(fp.base_url)))
    assert starts == [ToolCallStart(0, "call_a", "f"), ToolCallStart(1, "call_b", "f")]
    assert args == {0: '{"n": 1}', 1: '{"n": 2}'}


def test_a_final_response_alone_is_read_once(fp):
    message = {"id": "msg_1", "type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "whole answer", "annotations": []}]}
    fp.enqueue([sse("response.completed", response={"id": "r", "status": "completed", "output": [message],
                                                    "usage": None})])
    assert texts(run(request(fp.base_url))) == "whole answer"


@pytest.mark.parametrize("quirks", [{"deltas": False}, {"done": ["item"]}, {"split_messages": True}],
                         ids=["no-deltas", "item-done-only", "split-messages"])
def test_the_quirky_fake_still_satisfies_the_sdks_own_stream_helper(fp, quirks):
    fp.enqueue(gateway([S.reasoning("r"), S.text("Hi "), S.text("there"), S.usage(3, 4)], **quirks))
    client = openai.OpenAI(base_url=fp.base_url, api_key=KEY, max_retries=0)
    with client.responses.stream(model="gpt-test", input="hi") as s:
        for _ in s:
            pass
        final = s.get_final_response()
    assert final.output_text == "Hi there"


# --- what is sent ---------------------------------------------------------------------

def _history(other_model: str = MODEL_ID) -> list[Message]:
    rs = {"wire_api": "responses", "type": "reasoning", "id": "rs_1", "encrypted_content": "ENC1",
          "summary": [{"type": "summary_text", "text": "thinking"}]}
    return [
        Message("user", "What is in this picture?", images=(Image("image/png", "iVBORw0K"),)),
        Message("assistant", "", reasoning="thinking", model_id=MODEL_ID,
                reasoning_details=(rs, {"wire_api": "anthropic_messages", "type": "thinking",
                                        "thinking": "x", "signature": "sig"}),
                tool_calls=(ToolCall("call_1", "look", '{"zoom": 2}'),)),
        Message("tool", "a cat", tool_call_id="call_1"),
        Message("assistant", "A cat.", reasoning="more", model_id=other_model,
                reasoning_details=({**rs, "id": "rs_2", "encrypted_content": "ENC2"},)),
        Message("user", "Thanks"),
    ]


def test_request_body_input_items_tools_and_defaults(fp):
    tool = ToolSpec("look", "Look closer", {"type": "object", "properties": {}})
    run(request(fp.base_url, system="Be brief.", messages=_history(), tools=[tool]))
    (req,) = fp.wait_requests(1)
    body = req.body
    assert req.path == "/v1/responses"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "gpt-test"
    assert body["stream"] is True and body["store"] is False
    assert body["instructions"] == "Be brief."
    assert body["input"] == [
        {"role": "user", "content": [
            {"type": "input_text", "text": "What is in this picture?"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K", "detail": "auto"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking"}],
         "encrypted_content": "ENC1"},
        {"type": "function_call", "call_id": "call_1", "name": "look", "arguments": '{"zoom": 2}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "a cat"},
        {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "thinking"}],
         "encrypted_content": "ENC2"},
        {"role": "assistant", "content": "A cat."},
        {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
    ]
    assert "signature" not in json.dumps(body)  # another API's reasoning is never sent
    assert body["tools"] == [{"type": "function", "name": "look", "description": "Look closer",
                              "parameters": {"type": "object", "properties": {}}, "strict": False}]
    for absent in ("temperature", "top_p", "max_output_tokens", "reasoning", "include"):
        assert absent not in body


def test_reasoning_from_another_model_is_dropped(fp):
    run(request(fp.base_url, messages=_history(other_model="model-b")))
    items = fp.wait_requests(1)[0].body["input"]
    assert [i.get("id") for i in items if i.get("type") == "reasoning"] == ["rs_1"]
    assert "ENC2" not in json.dumps(items)


def test_reasoning_is_not_replayed_when_the_asking_model_is_unknown(fp):
    run(request(fp.base_url, messages=_history(), model_id=None))
    assert "reasoning" not in json.dumps(fp.wait_requests(1)[0].body["input"])


def test_reasoning_without_the_output_it_led_to_is_not_replayed(fp):
    rs = {"wire_api": "responses", "type": "reasoning", "id": "rs_9", "encrypted_content": "E", "summary": []}
    history = [Message("user", "a"), Message("assistant", "", model_id=MODEL_ID, reasoning_details=(rs,)),
               Message("user", "b")]
    run(request(fp.base_url, messages=history))
    assert [i["role"] for i in fp.wait_requests(1)[0].body["input"]] == ["user", "user"]


def test_no_instructions_and_no_tools_when_empty(fp):
    run(request(fp.base_url))
    body = fp.wait_requests(1)[0].body
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]
    assert "instructions" not in body and "tools" not in body


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
def test_reasoning_effort_asks_for_summaries_and_encrypted_items_without_sampling(fp, effort):
    params = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 256, "reasoning_effort": effort}
    run(request(fp.base_url, params=params))
    body = fp.wait_requests(1)[0].body
    assert body["reasoning"] == {"effort": effort, "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 256
    assert "temperature" not in body and "top_p" not in body
    assert "max_tokens" not in body and "max_completion_tokens" not in body


def test_effort_off_sends_sampling_and_no_reasoning(fp):
    params = {"temperature": 0.2, "top_p": 0.9, "reasoning_effort": "off", "max_tokens": None}
    run(request(fp.base_url, params=params))
    body = fp.wait_requests(1)[0].body
    assert (body["temperature"], body["top_p"]) == (0.2, 0.9)
    for absent in ("reasoning", "include", "max_output_tokens"):
        assert absent not in body


def test_missing_key_sends_a_placeholder_not_the_environment(fp, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    run(request(fp.base_url, api_key=None))
    assert fp.wait_requests(1)[0].headers["authorization"] == "Bearer not-needed"


# --- HTTP errors ----------------------------------------------------------------------

def test_401_names_provider_and_status_without_the_key(fp):
    fp.enqueue([S.error(401, {"error": {"message": f"Incorrect API key provided: {KEY}",
                                        "type": "invalid_request_error", "code": "invalid_api_key"}})])
    _, err = failure(request(fp.base_url), AuthError)
    assert err.message == (f"{NAME} rejected the API key (HTTP 401). "
                           f"Check the key in Settings → Providers.")
    assert err.status == 401 and not err.retryable


def test_429_with_retry_after(fp):
    fp.enqueue([S.error(429, retry_after=7)])
    _, err = failure(request(fp.base_url), RateLimited)
    assert err.retryable and err.retry_after == 7 and err.status == 429
    assert "HTTP 429" in err.message and "7 s" in err.message


def test_500_is_retryable(fp):
    fp.enqueue([S.error(500)])
    _, err = failure(request(fp.base_url), ProviderError)
    assert type(err) is ProviderError
    assert err.retryable and err.status == 500 and "HTTP 500" in err.message


def test_400_context_length_is_context_too_long(fp):
    fp.enqueue([S.error(400, {"error": {
        "message": "Your input exceeds the context window of this model.",
        "type": "invalid_request_error", "code": "context_length_exceeded"}})])
    _, err = failure(request(fp.base_url), ContextTooLong)
    assert err.status == 400


def test_404_from_a_server_without_the_responses_api(fp):
    fp.enqueue([S.error(404, "404 page not found")])
    _, err = failure(request(fp.base_url), ProviderError)
    assert f"{fp.base_url}/responses" in err.message and "Chat Completions" in err.message
    assert not err.retryable


# --- failures inside the stream -------------------------------------------------------

def test_response_failed_mid_stream(fp):
    fp.enqueue([S.text("par"), S.error(500, {"error": {"message": "The model crashed.",
                                                       "code": "server_error"}})])
    seen, err = failure(request(fp.base_url), ProviderError)
    assert texts(seen) == "par"
    assert type(err) is ProviderError and err.retryable
    assert err.message == f"{NAME} had a server error mid-reply: The model crashed. Try again."


def test_rate_limit_mid_stream(fp):
    fp.enqueue([S.text("a"), S.error(429)])
    _, err = failure(request(fp.base_url), RateLimited)
    assert err.retryable and "rate limit" in err.message


def test_error_event_context_too_long(fp):
    fp.enqueue([S.text("a"), S.error(400, {"type": "error", "code": "context_length_exceeded",
                                           "message": "Too long.", "param": None})])
    _, err = failure(request(fp.base_url), ContextTooLong)
    assert "too long for gpt-test" in err.message


def test_error_event_of_another_kind_is_quoted(fp):
    fp.enqueue([S.text("a"), S.error(400, {"type": "error", "code": "invalid_prompt",
                                           "message": f"Flagged ({KEY})", "param": None})])
    _, err = failure(request(fp.base_url), ProviderError)
    assert "(invalid_prompt)" in err.message and "Flagged" in err.message and not err.retryable


# --- broken streams -------------------------------------------------------------------

def test_garbage_data_line(fp):
    fp.enqueue([S.text("ok"), S.garbage("<<not json>>")])
    seen, err = failure(request(fp.base_url), BadResponse)
    assert texts(seen) == "ok"
    assert "not Responses API JSON" in err.message


def test_html_instead_of_a_stream(fp):
    fp.enqueue([S.html()])
    _, err = failure(request(fp.base_url), BadResponse)
    assert "web page" in err.message


@pytest.mark.parametrize("graceful", [False, True], ids=["truncated-body", "no-completed"])
def test_stream_cut_mid_reply(fp, graceful):
    fp.enqueue([S.text("Once upon "), S.text("a time"), S.cut(graceful)])
    seen, err = failure(request(fp.base_url), ConnectionFailed)
    assert texts(seen) == "Once upon a time"
    assert err.message == f"The connection to {NAME} dropped mid-reply."
    assert err.retryable


def test_stream_cut_before_any_output(fp):
    fp.enqueue([S.cut(graceful=True)])
    _, err = failure(request(fp.base_url), ConnectionFailed)
    assert err.message == f"The connection to {NAME} closed before it answered."


# --- hangs, timeouts and close() ------------------------------------------------------

def test_hang_mid_stream_times_out(fp):
    fp.enqueue([S.text("partial"), S.hang(), S.text("never")])
    seen, err = failure(request(fp.base_url, timeout=0.5), ProviderTimeout)
    assert texts(seen) == "partial"


def _consume_in_thread(stream):
    events, outcome, finished, first = [], {}, threading.Event(), threading.Event()

    def consume():
        try:
            for e in stream:
                events.append(e)
                first.set()
            outcome["ended"] = True
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc
        finally:
            first.set()
            finished.set()

    threading.Thread(target=consume, daemon=True).start()
    return events, outcome, finished, first


def test_close_from_another_thread_unblocks_a_hang_promptly(fp):
    fp.enqueue([S.text("first words"), S.hang(), S.text("never")])
    stream = open_stream(request(fp.base_url, timeout=30))
    events, outcome, finished, first = _consume_in_thread(stream)
    assert first.wait(5)
    fp.wait_hanging(1)
    started = time.monotonic()
    stream.close()
    assert finished.wait(5), "close() did not unblock the read"
    assert time.monotonic() - started < 2  # far below the 30 s read timeout
    assert outcome == {"ended": True}
    assert events == [TextDelta("first words")]
    assert stream.closed and list(stream) == []


def test_released_hang_continues(fp):
    fp.enqueue([S.text("a"), S.hang(), S.text("b")])
    fp.release(1)
    assert texts(run(request(fp.base_url))) == "ab"


# --- the fake itself ------------------------------------------------------------------

def test_fake_blast_records_write_times_by_delta_index():
    n = 20_000
    with FakeProvider(record_times=True) as fake:
        fake.enqueue([S.blast(n), S.usage(1, n)])
        events = run(request(fake.base_url))
        deltas = [e for e in events if isinstance(e, TextDelta)]
        assert len(deltas) == n and deltas[123].text == "123 "
        assert events[-2:] == [Usage(input_tokens=1, output_tokens=n), StepEnd("stop")]
        times = fake.requests[0].write_times
        assert [t[0] for t in times] == list(range(n))
        assert all(a[1] <= b[1] for a, b in zip(times, times[1:]))
