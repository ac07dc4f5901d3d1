"""The Anthropic Messages adapter, through the real anthropic SDK, against the
real fake server on loopback (POST /v1/messages). No mocks: httpx mocks cannot
see httpx2 requests."""
from __future__ import annotations

import json
import socket
import threading
import time

import anthropic
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
from backend.providers.anthropic_messages import _base_url
from tests.fakeprovider import FakeProvider
from tests.fakeprovider import script as S

KEY = "sk-" + "ant-test-SECRET-0123456789abcdef"  # built, so no scanner mistakes it for a real key
NAME = "Anthropic"
MODEL_ID = "claude-fake"  # the catalog model asking


@pytest.fixture
def fp():
    with FakeProvider() as fake:
        yield fake




def provider(base_url: str | None, *, api_key: str | None = KEY, timeout: float = 10.0) -> ProviderConfig:
    return ProviderConfig(id="p1", name=NAME, kind="anthropic", base_url=base_url, api_key=api_key,
                          timeout=timeout)


def request(base_url: str | None, *, messages=(Message("user", "Hi"),), system: str = "", tools=(),
            params=None, model_id: str | None = MODEL_ID, max_output_tokens: int | None = None,
            **prov) -> ModelRequest:
    return ModelRequest(provider=provider(base_url, **prov), wire_api="anthropic_messages",
                        model="claude-test", system=system, messages=tuple(messages),
                        tools=tuple(tools), params=params or {}, model_id=model_id,
                        max_output_tokens=max_output_tokens)


def run(req: ModelRequest) -> list:
    return list(open_stream(req))


def sent(fp: FakeProvider, req: ModelRequest) -> dict:
    """The JSON body the adapter sent for `req`."""
    run(req)
    (rec,) = fp.wait_requests(1)
    assert rec.path == "/v1/messages"
    return rec.body


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


# --- streaming content ----------------------------------------------------------------

def test_plain_text(fp):
    fp.enqueue([S.text("Hel"), S.text("lo"), S.text(" world"), S.usage(12, 3)])
    events = run(request(fp.url))
    assert events == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" world"),
                      Usage(input_tokens=12, output_tokens=3), StepEnd("stop")]


def test_thinking_with_signature_becomes_a_reasoning_detail(fp):
    fp.enqueue([S.reasoning("Let me "), S.reasoning("think."), S.signature("EqQBCgIYAhIM"),
                S.text("42"), S.usage(5, 9, reasoning_tokens=6)])
    events = run(request(fp.url))
    assert events == [
        ReasoningDelta("Let me "), ReasoningDelta("think."),
        ReasoningDetail({"wire_api": "anthropic_messages", "type": "thinking",
                         "thinking": "Let me think.", "signature": "EqQBCgIYAhIM"}),
        TextDelta("42"),
        Usage(input_tokens=5, output_tokens=9, reasoning_tokens=6), StepEnd("stop")]


def test_redacted_thinking_is_kept_opaque(fp):
    fp.enqueue([S.redacted("EmwKAhgBEgy3va3pzix/LafPsn4a"), S.text("Done.")])
    events = run(request(fp.url))
    assert events[0] == ReasoningDetail({"wire_api": "anthropic_messages", "type": "redacted_thinking",
                                         "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"})
    assert texts(events) == "Done."
    assert not any(isinstance(e, ReasoningDelta) for e in events)  # nothing readable in it


def test_two_tool_uses_with_input_split_across_events(fp):
    fp.enqueue([
        S.text("Checking."),
        S.tool_call(0, "toolu_a", "get_weather"),
        S.tool_args(0, '{"ci'), S.tool_args(0, 'ty": "Par'), S.tool_args(0, 'is"}'),
        S.tool_call(1, "toolu_b", "get_time", '{"tz"'), S.tool_args(1, ': "CET"}'),
        S.usage(30, 20),
    ])
    events = run(request(fp.url))
    calls = [e for e in events if isinstance(e, (ToolCallStart, ToolCallDelta))]
    assert calls == [
        ToolCallStart(0, "toolu_a", "get_weather"),
        ToolCallDelta(0, '{"ci'), ToolCallDelta(0, 'ty": "Par'), ToolCallDelta(0, 'is"}'),
        ToolCallStart(1, "toolu_b", "get_time"), ToolCallDelta(1, '{"tz"'), ToolCallDelta(1, ': "CET"}'),
    ]
    assert json.loads("".join(e.arguments for e in calls[1:4])) == {"city": "Paris"}
    assert events[-1] == StepEnd("tool_calls")


def test_tool_call_indexes_count_calls_not_content_blocks(fp):
    # Thinking and text blocks come first, so the tool_use is content block 3.
    fp.enqueue([S.reasoning("hm"), S.signature("s"), S.redacted("r"), S.text("ok"),
                S.tool_call(0, "toolu_x", "f", "{}")])
    starts = [e for e in run(request(fp.url)) if isinstance(e, ToolCallStart)]
    assert starts == [ToolCallStart(0, "toolu_x", "f")]


def test_usage_normalized_cache_reads_count_as_input(fp):
    # prompt 100 of which 64 were read from the cache: Anthropic says
    # input_tokens 36 + cache_read_input_tokens 64.
    fp.enqueue([S.text("ok"), S.finish("length"), S.usage(100, 50, cached_tokens=64)])
    events = run(request(fp.url))
    assert events[-2:] == [Usage(input_tokens=100, output_tokens=50, cached_tokens=64), StepEnd("length")]


def test_usage_estimated_when_the_server_sends_none(fp):
    fp.enqueue([S.reasoning("r" * 40), S.text("x" * 80)])  # no usage step: no usage on the wire
    events = run(request(fp.url, messages=[Message("user", "y" * 400)]))
    usage = events[-2]
    assert isinstance(usage, Usage) and usage.estimated
    assert usage.output_tokens == 30  # (40 + 80) chars / 4
    assert 100 <= usage.input_tokens <= 140
    assert events[-1] == StepEnd("stop")


def test_server_that_ignores_stream_true(fp):
    fp.enqueue({"stream": False, "steps": [
        S.reasoning("why"), S.signature("sig"), S.text("whole answer"),
        S.tool_call(0, "toolu_1", "f", '{"x": 1}'), S.usage(8, 4)]})
    events = run(request(fp.url))
    assert events == [ReasoningDelta("why"),
                      ReasoningDetail({"wire_api": "anthropic_messages", "type": "thinking",
                                       "thinking": "why", "signature": "sig"}),
                      TextDelta("whole answer"), ToolCallStart(0, "toolu_1", "f"),
                      ToolCallDelta(0, '{"x": 1}'), Usage(input_tokens=8, output_tokens=4),
                      StepEnd("tool_calls")]


def test_complete_text_and_the_default_anthropic_url(fp):
    fp.enqueue([S.reasoning("hmm"), S.signature("s"), S.text("A short "), S.text("title")])
    assert complete_text(request(fp.url)) == "A short title"
    assert _base_url(provider(None)) == "https://api.anthropic.com"
    assert _base_url(provider("https://proxy.example/anthropic/v1/")) == "https://proxy.example/anthropic"


def test_the_fake_speaks_anthropic_to_the_sdk_itself(fp):
    """The fake's stream is real Anthropic SSE: the SDK's own accumulator reads it."""
    fp.enqueue([S.reasoning("a"), S.signature("sig"), S.redacted("r"), S.text("Hi"),
                S.tool_call(0, "toolu_1", "f", '{"a"'), S.tool_args(0, ": 1}"), S.usage(10, 5)])
    client = anthropic.Anthropic(base_url=fp.url, api_key=KEY, max_retries=0)
    with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}]) as s:
        message = s.get_final_message()
    client.close()
    assert [b.type for b in message.content] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert message.content[0].signature == "sig" and message.content[3].input == {"a": 1}
    assert message.stop_reason == "tool_use" and message.usage.input_tokens == 10


# --- what is sent ---------------------------------------------------------------------

def test_request_body_system_tools_and_max_tokens(fp):
    tool = ToolSpec("get_weather", "Current weather", {"type": "object", "properties": {}})
    body = sent(fp, request(fp.url, system="Be brief.", tools=[tool]))
    assert body["model"] == "claude-test" and body["stream"] is True
    assert body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    assert body["max_tokens"] == 8192  # required by the API: a default when nothing says otherwise
    assert body["tools"] == [{"name": "get_weather", "description": "Current weather",
                              "input_schema": {"type": "object", "properties": {}}}]
    for absent in ("thinking", "temperature", "top_p"):
        assert absent not in body


def test_no_system_and_no_tools_when_empty_and_the_key_is_sent(fp):
    run(request(fp.url))
    rec = fp.wait_requests(1)[0]
    assert "system" not in rec.body and "tools" not in rec.body
    assert KEY in (rec.headers.get("x-api-key") or rec.headers.get("authorization") or "")


def test_system_role_messages_join_the_system_parameter(fp):
    body = sent(fp, request(fp.url, system="Be brief.",
                            messages=[Message("system", "Speak French."), Message("user", "Hi")]))
    assert body["system"] == "Be brief.\n\nSpeak French."
    assert all(m["role"] in ("user", "assistant") for m in body["messages"])


def test_max_tokens_from_params_then_the_model_cap(fp):
    assert sent(fp, request(fp.url, params={"max_tokens": 300}, max_output_tokens=64000))["max_tokens"] == 300
    fp.reset()
    assert sent(fp, request(fp.url, max_output_tokens=64000))["max_tokens"] == 64000


@pytest.mark.parametrize("effort,budget", [("low", 1024), ("medium", 4096), ("high", 16384)])
def test_reasoning_effort_maps_to_a_thinking_budget_without_sampling_params(fp, effort, budget):
    params = {"reasoning_effort": effort, "temperature": 0.3, "top_p": 0.9, "max_tokens": 20000}
    body = sent(fp, request(fp.url, params=params))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["max_tokens"] == 20000
    assert "temperature" not in body and "top_p" not in body  # refused together with thinking


def test_max_tokens_is_raised_above_the_thinking_budget(fp):
    body = sent(fp, request(fp.url, params={"reasoning_effort": "high", "max_tokens": 1000}))
    assert body["thinking"]["budget_tokens"] == 16384 and body["max_tokens"] > 16384


def test_thinking_budget_fits_the_model_cap(fp):
    body = sent(fp, request(fp.url, params={"reasoning_effort": "high"}, max_output_tokens=8192))
    assert body["thinking"]["budget_tokens"] < body["max_tokens"] <= 8192


def test_effort_off_sends_no_thinking_and_clamps_temperature(fp):
    body = sent(fp, request(fp.url, params={"reasoning_effort": "off", "temperature": 1.7, "top_p": 0.8}))
    assert "thinking" not in body
    assert body["temperature"] == 1.0 and body["top_p"] == 0.8  # Anthropic's range is 0–1


def test_history_alternates_with_tool_results_merged_into_one_user_message(fp):
    history = [
        Message("user", "Weather in Paris and the time?"),
        Message("assistant", "Let me check.", reasoning="plain thoughts", model_id=MODEL_ID,
                tool_calls=(ToolCall("toolu_1", "get_weather", '{"city": "Paris"}'),
                            ToolCall("toolu_2", "get_time", "not json"))),
        Message("tool", "18 °C", tool_call_id="toolu_1"),
        Message("tool", "clock is broken", tool_call_id="toolu_2", is_error=True),
        Message("user", "Also, hello."),
        Message("assistant", "It is 18 °C.", model_id=MODEL_ID),
        Message("user", "Thanks"),
    ]
    body = sent(fp, request(fp.url, system="Be brief.", messages=history))
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and the time?"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18 °C"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "clock is broken", "is_error": True},
            {"type": "text", "text": "Also, hello."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is 18 °C."}]},
        {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
    ]
    assert "plain thoughts" not in json.dumps(body)  # unsigned reasoning is never sent back


def test_consecutive_user_messages_merge_and_empty_ones_vanish(fp):
    history = [Message("user", "one"), Message("assistant", ""), Message("user", "two")]
    body = sent(fp, request(fp.url, messages=history))
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "one"},
                                                             {"type": "text", "text": "two"}]}]


def test_images_are_base64_blocks_before_the_text(fp):
    msg = Message("user", "What is this?", images=(Image("image/png", "iVBORw0KGgo="),
                                                   Image("image/jpeg", "/9j/4AAQ")))
    body = sent(fp, request(fp.url, messages=[msg]))
    assert body["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}},
        {"type": "text", "text": "What is this?"}]


THINKING = {"wire_api": "anthropic_messages", "type": "thinking", "thinking": "I should call f.",
            "signature": "SIG-1"}
REDACTED = {"wire_api": "anthropic_messages", "type": "redacted_thinking", "data": "OPAQUE-1"}
FOREIGN = {"wire_api": "responses", "type": "reasoning", "encrypted_content": "gAAAA-other-api"}


def _continuation(writer: str | None) -> list[Message]:
    return [Message("user", "Call f."),
            Message("assistant", "", reasoning="I should call f.", model_id=writer,
                    reasoning_details=(THINKING, REDACTED, FOREIGN),
                    tool_calls=(ToolCall("toolu_1", "f", "{}"),)),
            Message("tool", "done", tool_call_id="toolu_1")]


def test_signed_thinking_is_replayed_to_the_model_that_wrote_it(fp):
    body = sent(fp, request(fp.url, messages=_continuation(MODEL_ID), params={"reasoning_effort": "low"}))
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "I should call f.", "signature": "SIG-1"},
        {"type": "redacted_thinking", "data": "OPAQUE-1"},
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]
    assert "gAAAA-other-api" not in json.dumps(body)  # reasoning from another wire API


def test_signed_thinking_is_dropped_for_another_model(fp):
    body = sent(fp, request(fp.url, messages=_continuation("some-other-model")))
    assert body["messages"][1]["content"] == [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]
    assert "SIG-1" not in json.dumps(body) and "OPAQUE-1" not in json.dumps(body)


def test_thinking_stays_off_in_a_tool_loop_whose_assistant_turn_did_not_think(fp):
    # Another model (or thinking off) began this tool loop; Anthropic refuses
    # thinking mid-loop without a thinking block to continue from.
    body = sent(fp, request(fp.url, messages=_continuation("some-other-model"),
                            params={"reasoning_effort": "high", "temperature": 0.5}))
    assert "thinking" not in body and body["temperature"] == 0.5
    fp.reset()
    fresh = _continuation("some-other-model") + [Message("assistant", "Done."), Message("user", "Next?")]
    assert sent(fp, request(fp.url, messages=fresh, params={"reasoning_effort": "high"}))["thinking"] == \
        {"type": "enabled", "budget_tokens": 16384}


def test_the_reasoning_detail_of_a_reply_replays_as_it_came(fp):
    fp.enqueue([S.reasoning("Plan: call f."), S.signature("SIG-XYZ"), S.tool_call(0, "toolu_9", "f", "{}")])
    details = tuple(e.detail for e in run(request(fp.url)) if isinstance(e, ReasoningDetail))
    history = [Message("user", "Go"),
               Message("assistant", "", model_id=MODEL_ID, reasoning_details=details,
                       tool_calls=(ToolCall("toolu_9", "f", "{}"),)),
               Message("tool", "ok", tool_call_id="toolu_9")]
    fp.reset()
    body = sent(fp, request(fp.url, messages=history))
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "Plan: call f.",
                                                 "signature": "SIG-XYZ"}


# --- HTTP errors ----------------------------------------------------------------------

def test_401_names_provider_and_status_without_the_key(fp):
    fp.enqueue([S.error(401, {"type": "error", "error": {"type": "authentication_error",
                                                         "message": f"invalid x-api-key {KEY}"}})])
    _, err = failure(request(fp.url), AuthError)
    assert err.message == f"{NAME} rejected the API key (HTTP 401). Check the key in Settings → Providers."
    assert err.status == 401 and not err.retryable


def test_401_without_a_key_asks_for_one(fp, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    fp.enqueue([S.error(401)])
    _, err = failure(request(fp.url, api_key=None), AuthError)
    assert "needs an API key" in err.message
    assert "sk-ant-from-env" not in json.dumps(fp.requests[0].headers)  # only the settings hold keys


def test_429_with_retry_after(fp):
    fp.enqueue([S.error(429, retry_after=7)])
    _, err = failure(request(fp.url), RateLimited)
    assert err.retryable and err.retry_after == 7 and err.status == 429
    assert "HTTP 429" in err.message and "7 s" in err.message


def test_529_overloaded_is_retryable(fp):
    fp.enqueue([S.error(529)])
    _, err = failure(request(fp.url), ProviderError)
    assert err.message == f"{NAME} is overloaded (HTTP 529). Try again in a moment."
    assert err.retryable and err.status == 529


def test_400_prompt_too_long_is_context_too_long(fp):
    fp.enqueue([S.error(400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}})])
    _, err = failure(request(fp.url), ContextTooLong)
    assert err.status == 400 and "too long" in err.message


def test_other_400_quotes_the_provider(fp):
    fp.enqueue([S.error(400, {"type": "error", "error": {
        "type": "invalid_request_error", "message": "messages: roles must alternate"}})])
    _, err = failure(request(fp.url), ProviderError)
    assert "roles must alternate" in err.message and "HTTP 400" in err.message and not err.retryable


def test_404_unknown_model_and_404_wrong_base_url(fp):
    fp.enqueue([S.error(404, {"type": "error", "error": {"type": "not_found_error",
                                                         "message": "model: claude-test"}})])
    _, err = failure(request(fp.url), ProviderError)
    assert "does not know the model 'claude-test'" in err.message
    fp.enqueue([S.error(404)])
    _, err = failure(request(fp.url), ProviderError)
    assert "base URL" in err.message and "without /v1" in err.message


def test_overloaded_error_event_mid_stream(fp):
    fp.enqueue([S.text("par"), S.error(529)])
    seen, err = failure(request(fp.url), ProviderError)
    assert texts(seen) == "par"
    assert err.message == f"{NAME} is overloaded mid-reply (HTTP 529). Try again in a moment."
    assert err.retryable


def test_api_error_event_mid_stream(fp):
    fp.enqueue([S.text("par"), S.error(500, {"type": "error", "error": {"type": "api_error",
                                                                       "message": "Internal server error"}})])
    _, err = failure(request(fp.url), ProviderError)
    assert "server error mid-reply" in err.message and "Internal server error" in err.message
    assert err.retryable


# --- broken streams -------------------------------------------------------------------

def test_garbage_data_line(fp):
    fp.enqueue([S.text("ok"), S.garbage("<<not json>>")])
    seen, err = failure(request(fp.url), BadResponse)
    assert texts(seen) == "ok"
    assert "not Anthropic Messages JSON" in err.message


def test_html_instead_of_a_stream(fp):
    fp.enqueue([S.html()])
    _, err = failure(request(fp.url), BadResponse)
    assert "web page" in err.message and "without /v1" in err.message


@pytest.mark.parametrize("graceful", [False, True], ids=["truncated-body", "no-message-stop"])
def test_stream_cut_mid_reply(fp, graceful):
    fp.enqueue([S.text("Once upon "), S.text("a time"), S.cut(graceful)])
    seen, err = failure(request(fp.url), ConnectionFailed)
    assert texts(seen) == "Once upon a time"
    assert err.message == f"The connection to {NAME} dropped mid-reply."
    assert err.retryable


# --- hangs, timeouts and close() ------------------------------------------------------

def test_hang_before_headers_times_out(fp):
    fp.enqueue([S.hang()])
    _, err = failure(request(fp.url, timeout=0.5), ProviderTimeout)
    assert err.message == f"{NAME} did not answer within 0.5 s." and err.retryable


def test_hang_mid_stream_times_out(fp):
    fp.enqueue([S.text("partial"), S.hang(), S.text("never")])
    seen, err = failure(request(fp.url, timeout=0.5), ProviderTimeout)
    assert texts(seen) == "partial"


def test_connection_refused():
    with socket.socket() as s:  # a port that was free a moment ago and has no listener
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    _, err = failure(request(base), ConnectionFailed)
    assert err.message.startswith(f"Could not reach {NAME} at {base}")
    assert err.retryable


def _consume_in_thread(stream):
    """Iterate a stream on another thread; returns (events, outcome, finished, first-event)."""
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
    fp.enqueue([S.hang(), S.text("never")])
    stream = open_stream(request(fp.url, timeout=30))
    events, outcome, finished, _ = _consume_in_thread(stream)
    fp.wait_hanging(1)
    started = time.monotonic()
    stream.close()
    assert finished.wait(5), "close() did not unblock the read"
    assert time.monotonic() - started < 2  # far below the 30 s read timeout
    assert outcome == {"ended": True} and events == []


def test_close_mid_stream_keeps_what_arrived(fp):
    fp.enqueue([S.text("first words"), S.hang(), S.text("never")])
    stream = open_stream(request(fp.url, timeout=30))
    events, outcome, finished, first = _consume_in_thread(stream)
    assert first.wait(5)
    fp.wait_hanging(1)
    stream.close()
    assert finished.wait(5)
    assert outcome == {"ended": True}
    assert events == [TextDelta("first words")]


def test_released_hang_continues_the_script(fp):
    fp.enqueue([S.text("a"), S.hang(), S.text("b")])
    fp.release(1)
    assert texts(run(request(fp.url))) == "ab"


def test_fake_blast_records_write_times_by_delta_index():
    n = 20_000
    with FakeProvider(record_times=True) as fake:
        fake.enqueue([S.blast(n), S.usage(1, n)])
        events = run(request(fake.url))
        deltas = [e for e in events if isinstance(e, TextDelta)]
        assert len(deltas) == n and deltas[123].text == "123 "
        times = fake.requests[0].write_times
        assert [t[0] for t in times] == list(range(n))
        assert all(a[1] <= b[1] for a, b in zip(times, times[1:]))
