"""The Chat Completions adapter, through the real openai SDK, against the real
fake server on loopback. No mocks: httpx mocks cannot see httpx2 requests."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from backend.core.cancel import CancelToken
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
    StepEnd,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallStart,
    ToolSpec,
    Usage,
)
from backend.providers import complete_text, open_stream
from tests.fakeprovider import FakeProvider, FakeProviderProcess
from tests.fakeprovider import script as S

KEY = "sk-" + "test-SECRET-0123456789abcdef"  # built, so no scanner mistakes it for a real key
NAME = "OpenAI Local"


@pytest.fixture
def fp():
    with FakeProvider() as fake:
        yield fake


def provider(base_url: str, *, kind: str = "openai_compatible", api_key: str | None = KEY,
             timeout: float = 10.0) -> ProviderConfig:
    return ProviderConfig(id="p1", name=NAME, kind=kind, base_url=base_url, api_key=api_key,
                          timeout=timeout)


def request(base_url: str, *, messages=(Message("user", "Hi"),), system: str = "", tools=(),
            params=None, **prov) -> ModelRequest:
    return ModelRequest(provider=provider(base_url, **prov), wire_api="chat_completions",
                        model="test-model", system=system, messages=tuple(messages),
                        tools=tuple(tools), params=params or {})


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


# --- streaming content ----------------------------------------------------------------

def test_plain_text(fp):
    fp.enqueue([S.text("Hel"), S.text("lo"), S.text(" world"), S.usage(12, 3)])
    events = run(request(fp.base_url))
    assert events == [TextDelta("Hel"), TextDelta("lo"), TextDelta(" world"),
                      Usage(input_tokens=12, output_tokens=3), StepEnd("stop")]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_from_either_field(fp, field):
    fp.enqueue([S.reasoning("Let me ", field), S.reasoning("think.", field), S.text("42"), S.usage(5, 9)])
    events = run(request(fp.base_url))
    assert [type(e) for e in events[:3]] == [ReasoningDelta, ReasoningDelta, TextDelta]
    assert texts(events, ReasoningDelta) == "Let me think."
    assert texts(events) == "42"


def test_two_tool_calls_split_across_chunks(fp):
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
    assert events[-1] == StepEnd("tool_calls")


def test_text_that_is_not_unicode_is_mended_event_by_event(fp):
    # Pairs split across chunks are joined in the event that completes them; lone halves are U+FFFD.
    fp.enqueue([S.text("a\ud83d"), S.text("\ude00b"), S.reasoning("\ud83e"), S.text("\udc00"),
                S.reasoning("\udd14"), S.tool_call(0, "call\ud800", "f\udfff", '{"x": "\ud83d'),
                S.tool_args(0, '\ude00"}'), S.text("end\ud83d"), S.usage(1, 1)])
    events = run(request(fp.base_url))
    assert events == [TextDelta("a"), TextDelta("\U0001F600b"), TextDelta("\ufffd"), ReasoningDelta("\U0001F914"),
                      ToolCallStart(0, "call\ufffd", "f\ufffd"), ToolCallDelta(0, '{"x": "'),
                      ToolCallDelta(0, '\U0001F600"}'), TextDelta("end"), TextDelta("\ufffd"),
                      Usage(input_tokens=1, output_tokens=1), StepEnd("tool_calls")]


def test_a_provider_error_quoting_a_lone_surrogate_reads_as_unicode(fp):
    fp.enqueue([S.error(400, {"error": {"message": "bad \ud800 input"}})])
    _, err = failure(request(fp.base_url), ProviderError)
    assert "bad \ufffd input" in err.message and str(err) == err.message


def test_a_stored_key_no_header_can_carry_fails_with_a_sentence_and_sends_nothing(fp):
    _, err = failure(request(fp.base_url, api_key="sk-abc\r\nX-Injected: 1"), AuthError)
    assert "line break" in err.message and "Settings → Providers" in err.message and "X-Injected" not in err.message
    assert fp.requests == []


def test_tool_calls_with_finish_reason_stop_still_end_as_tool_calls(fp):
    fp.enqueue([S.tool_call(0, "c1", "f", "{}"), S.finish("stop"), S.usage(1, 1)])
    assert run(request(fp.base_url))[-1] == StepEnd("tool_calls")


def test_usage_details_from_the_stream(fp):
    fp.enqueue([S.text("ok"), S.finish("length"),
                S.usage(100, 50, reasoning_tokens=20, cached_tokens=64)])
    events = run(request(fp.base_url))
    assert events[-2:] == [Usage(input_tokens=100, output_tokens=50, reasoning_tokens=20,
                                 cached_tokens=64), StepEnd("length")]


def test_usage_estimated_when_the_server_sends_none(fp):
    fp.enqueue([S.reasoning("r" * 40), S.text("x" * 80)])  # no usage step
    events = run(request(fp.base_url, messages=[Message("user", "y" * 400)]))
    usage = events[-2]
    assert isinstance(usage, Usage) and usage.estimated
    assert usage.output_tokens == 30  # (40 + 80) chars / 4
    assert 100 <= usage.input_tokens <= 130  # ≈ 400 chars / 4 plus the JSON around them
    assert events[-1] == StepEnd("stop")


def test_server_that_ignores_stream_true(fp):
    fp.enqueue({"stream": False, "steps": [
        S.reasoning("why"), S.text("whole answer"), S.tool_call(0, "c1", "f", '{"x": 1}'),
        S.usage(8, 4)]})
    events = run(request(fp.base_url))
    assert events == [ReasoningDelta("why"), TextDelta("whole answer"), ToolCallStart(0, "c1", "f"),
                      ToolCallDelta(0, '{"x": 1}'), Usage(input_tokens=8, output_tokens=4),
                      StepEnd("tool_calls")]


def test_slow_tokens_are_written_apart():
    with FakeProvider(record_times=True) as fake:
        fake.enqueue([S.delay(0.02), S.text("a"), S.text("b"), S.text("c")])
        assert texts(run(request(fake.base_url))) == "abc"
        times = [t[1] for t in fake.requests[0].write_times]
        assert len(times) == 3 and all(b - a >= 0.015 for a, b in zip(times, times[1:]))


def test_complete_text(fp):
    fp.enqueue([S.reasoning("hmm"), S.text("A short "), S.text("title")])
    assert complete_text(request(fp.base_url)) == "A short title"


# --- what is sent ---------------------------------------------------------------------

def test_request_body_messages_tools_and_defaults(fp):
    history = [
        Message("user", "Weather in Paris?"),
        Message("assistant", "", reasoning="secret thoughts",
                tool_calls=(ToolCall("call_1", "get_weather", '{"city": "Paris"}'),)),
        Message("tool", "18 °C", tool_call_id="call_1"),
        Message("assistant", "It is 18 °C.", reasoning="more thoughts"),
        Message("user", "Thanks"),
    ]
    tool = ToolSpec("get_weather", "Current weather", {"type": "object", "properties": {}})
    run(request(fp.base_url, system="Be brief.", messages=history, tools=[tool]))
    (req,) = fp.wait_requests(1)
    body = req.body
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "test-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18 °C"},
        {"role": "assistant", "content": "It is 18 °C."},
        {"role": "user", "content": "Thanks"},
    ]
    assert "thoughts" not in json.dumps(body)  # reasoning is never sent back
    assert body["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather",
        "parameters": {"type": "object", "properties": {}}}}]
    for absent in ("temperature", "top_p", "max_tokens", "max_completion_tokens", "reasoning_effort"):
        assert absent not in body


def test_no_system_message_and_no_tools_when_empty(fp):
    run(request(fp.base_url))
    body = fp.wait_requests(1)[0].body
    assert body["messages"] == [{"role": "user", "content": "Hi"}]
    assert "tools" not in body


def test_images_are_image_url_parts_after_the_text_and_plain_messages_stay_strings(fp):
    history = [Message("user", "Earlier"), Message("assistant", "Yes."),
               Message("user", "What is this?", images=(Image("image/png", "iVBORw0KGgo="),)),
               Message("user", "", images=(Image("image/webp", "UklGRg=="),))]
    run(request(fp.base_url, messages=history))
    body = fp.wait_requests(1)[0].body
    assert body["messages"][0] == {"role": "user", "content": "Earlier"}
    assert body["messages"][2]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]
    assert body["messages"][3]["content"] == [
        {"type": "image_url", "image_url": {"url": "data:image/webp;base64,UklGRg=="}}]


def test_params_for_compatible_servers(fp):
    params = {"temperature": 0.2, "top_p": 0.9, "max_tokens": 256, "reasoning_effort": "high"}
    run(request(fp.base_url, params=params))
    body = fp.wait_requests(1)[0].body
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["reasoning_effort"]) == \
        (0.2, 0.9, 256, "high")
    assert "max_completion_tokens" not in body


def test_params_for_openai_use_max_completion_tokens_and_skip_off_and_none(fp):
    params = {"max_tokens": 100, "reasoning_effort": "off", "temperature": None}
    run(request(fp.base_url, kind="openai", params=params))
    body = fp.wait_requests(1)[0].body
    assert body["max_completion_tokens"] == 100
    for absent in ("max_tokens", "reasoning_effort", "temperature", "top_p"):
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


def test_401_without_a_key_asks_for_one(fp):
    fp.enqueue([S.error(401)])
    _, err = failure(request(fp.base_url, api_key=None), AuthError)
    assert "needs an API key" in err.message


def test_429_with_retry_after(fp):
    fp.enqueue([S.error(429, retry_after=7)])
    _, err = failure(request(fp.base_url), RateLimited)
    assert err.retryable and err.retry_after == 7 and err.status == 429
    assert "HTTP 429" in err.message and "7 s" in err.message


def test_429_out_of_quota_is_not_retryable(fp):
    fp.enqueue([S.error(429, {"error": {"message": "You exceeded your current quota.",
                                        "type": "insufficient_quota", "code": "insufficient_quota"}})])
    _, err = failure(request(fp.base_url), RateLimited)
    assert not err.retryable and "quota" in err.message


def test_500_is_retryable(fp):
    fp.enqueue([S.error(500)])
    _, err = failure(request(fp.base_url), ProviderError)
    assert type(err) is ProviderError
    assert err.retryable and err.status == 500 and "HTTP 500" in err.message


@pytest.mark.parametrize("upstream, quoted", [("Server overloaded!", ": Server overloaded! Try again."),
                                               ("upstream timed out", ": upstream timed out. Try again.")])
def test_a_quoted_error_is_punctuated_once(fp, upstream, quoted):
    fp.enqueue([S.error(500, {"error": {"message": upstream}})])
    _, err = failure(request(fp.base_url), ProviderError)
    assert err.message.endswith(quoted), err.message


def test_404_unknown_model(fp):
    fp.enqueue([S.error(404, {"error": {"message": "model 'test-model' not found", "code": None}})])
    _, err = failure(request(fp.base_url), ProviderError)
    assert "does not know the model 'test-model'" in err.message and "HTTP 404" in err.message
    assert not err.retryable


def test_404_html_page_points_at_the_base_url(fp):
    fp.enqueue([S.error(404, "<html><body>404 page not found</body></html>",
                        headers={"Content-Type": "text/html"})])
    _, err = failure(request(fp.base_url), ProviderError)
    assert "base URL" in err.message and "<html>" not in err.message


def test_400_context_length_is_context_too_long(fp):
    fp.enqueue([S.error(400, {"error": {
        "message": "This model's maximum context length is 8192 tokens. However, you requested 9000.",
        "type": "invalid_request_error", "code": "context_length_exceeded"}})])
    _, err = failure(request(fp.base_url), ContextTooLong)
    assert err.status == 400 and "too long" in err.message


def test_other_400_quotes_the_provider_scrubbed(fp):
    fp.enqueue([S.error(400, {"error": {"message": f"tools are not supported (key {KEY})"}})])
    _, err = failure(request(fp.base_url), ProviderError)
    assert "tools are not supported" in err.message and "HTTP 400" in err.message


def test_error_event_inside_the_stream(fp):
    fp.enqueue([S.text("par"), S.error(502, {"error": {"message": "Upstream overloaded", "code": 502}})])
    seen, err = failure(request(fp.base_url), ProviderError)
    assert texts(seen) == "par"
    assert "Upstream overloaded" in err.message and err.retryable


# --- broken streams -------------------------------------------------------------------

def test_garbage_data_line(fp):
    fp.enqueue([S.text("ok"), S.garbage("<<not json>>")])
    seen, err = failure(request(fp.base_url), BadResponse)
    assert texts(seen) == "ok"
    assert "not Chat Completions JSON" in err.message


def test_html_instead_of_a_stream(fp):
    fp.enqueue([S.html()])
    _, err = failure(request(fp.base_url), BadResponse)
    assert "web page" in err.message


@pytest.mark.parametrize("graceful", [False, True], ids=["truncated-body", "no-done"])
def test_stream_cut_mid_reply(fp, graceful):
    fp.enqueue([S.text("Once upon "), S.text("a time"), S.cut(graceful)])
    seen, err = failure(request(fp.base_url), ConnectionFailed)
    assert texts(seen) == "Once upon a time"
    assert err.message == f"The connection to {NAME} dropped mid-reply."
    assert err.retryable


def test_connection_refused():
    with socket.socket() as s:  # a port that was free a moment ago and has no listener
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/v1"
    _, err = failure(request(base), ConnectionFailed)
    assert err.message.startswith(f"Could not reach {NAME} at {base}")
    assert err.message.endswith("Is the server running?") and err.retryable


def test_no_base_url_for_a_compatible_server():
    with pytest.raises(ProviderError, match="has no base URL"):
        run(request(""))


def test_unsupported_wire_api_raises_on_iteration(fp):
    req = ModelRequest(provider=provider(fp.base_url), wire_api="bogus", model="m",
                       system="", messages=())
    stream = open_stream(req)  # no error yet: failures come from the iteration
    with pytest.raises(ProviderError, match="Unknown wire API 'bogus'"):
        list(stream)


# --- hangs, timeouts and close() ------------------------------------------------------

def test_hang_before_headers_times_out(fp):
    fp.enqueue([S.hang()])
    _, err = failure(request(fp.base_url, timeout=0.5), ProviderTimeout)
    assert err.message == f"{NAME} did not answer within 0.5 s." and err.retryable


def test_hang_mid_stream_times_out(fp):
    fp.enqueue([S.text("partial"), S.hang(), S.text("never")])
    seen, err = failure(request(fp.base_url, timeout=0.5), ProviderTimeout)
    assert texts(seen) == "partial"


def _consume_in_thread(stream):
    """Iterate a stream on another thread; returns (events, outcome, finished-event)."""
    events, outcome, finished = [], {}, threading.Event()
    first = threading.Event()

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
    stream = open_stream(request(fp.base_url, timeout=30))
    events, outcome, finished, _ = _consume_in_thread(stream)
    fp.wait_hanging(1)
    started = time.monotonic()
    stream.close()
    assert finished.wait(5), "close() did not unblock the read"
    assert time.monotonic() - started < 2  # far below the 30 s read timeout
    assert outcome == {"ended": True} and events == []
    assert stream.closed and list(stream) == []


def test_close_mid_stream_keeps_what_arrived(fp):
    fp.enqueue([S.text("first words"), S.hang(), S.text("never")])
    stream = open_stream(request(fp.base_url, timeout=30))
    events, outcome, finished, first = _consume_in_thread(stream)
    assert first.wait(5)
    fp.wait_hanging(1)
    stream.close()
    assert finished.wait(5)
    assert outcome == {"ended": True}
    assert events == [TextDelta("first words")]


def test_complete_text_ends_at_once_on_cancel(fp):
    # Cancelled while the provider hangs before any text: what the client had read when the
    # cancel came is then known (nothing). Text already sent is kept as a closed stream keeps
    # it (test_close_mid_stream_keeps_what_arrived), but when the client reads it races the cancel.
    fp.enqueue([S.hang(), S.text("never")])
    cancel = CancelToken()
    answer = {}
    worker = threading.Thread(target=lambda: answer.update(text=complete_text(request(fp.base_url, timeout=30),
                                                                              cancel)))
    worker.start()
    fp.wait_hanging(1)
    cancel.cancel("stopped")
    worker.join(5)
    assert not worker.is_alive(), "cancel did not end complete_text"
    assert answer == {"text": ""}  # ended quietly, no error, far below the 30 s read timeout


def test_close_before_iterating_sends_nothing(fp):
    stream = open_stream(request(fp.base_url))
    stream.close()
    assert list(stream) == []
    assert fp.requests == []


# --- the fake provider itself ---------------------------------------------------------

def test_fake_released_hang_continues_the_script(fp):
    fp.enqueue([S.text("a"), S.hang(), S.text("b")])
    fp.release(1)  # a release that comes first is kept for the hang
    assert texts(run(request(fp.base_url))) == "ab"


def test_fake_default_reply_and_models(fp):
    assert complete_text(request(fp.base_url)) == "Hello from the fake provider."
    import urllib.request
    with urllib.request.urlopen(fp.base_url + "/models") as r:
        assert [m["id"] for m in json.loads(r.read())["data"]] == ["fake-model"]


def test_fake_blast_records_write_times_by_delta_index():
    n = 20_000
    with FakeProvider(record_times=True) as fake:
        fake.enqueue([S.blast(n), S.usage(1, n)])
        events = run(request(fake.base_url))
        deltas = [e for e in events if isinstance(e, TextDelta)]
        assert len(deltas) == n and deltas[123].text == "123 "
        times = fake.requests[0].write_times
        assert [t[0] for t in times] == list(range(n))
        assert all(a[1] <= b[1] for a, b in zip(times, times[1:]))


def test_fake_in_a_subprocess_driven_over_http():
    with FakeProviderProcess() as fake:
        fake.enqueue([S.text("from "), S.hang(), S.text("afar"), S.usage(2, 2)])
        stream = open_stream(request(fake.base_url))
        events, outcome, finished, _ = _consume_in_thread(stream)
        fake.wait_hanging(1)
        fake.release(1)
        assert finished.wait(10)
        assert outcome == {"ended": True}
        assert texts(events) == "from afar"
        (req,) = fake.wait_requests(1)
        assert req.body["messages"] == [{"role": "user", "content": "Hi"}]
