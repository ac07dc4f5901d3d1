"""Text from outside that could break what carries it: the socket's encoder, tool progress,
a turn's sources, and a short model answer (complete_text) that would not end."""
from __future__ import annotations

import json

import pytest

from backend.core.cancel import CancelToken
from backend.core.tools import CallContext, report_progress
from backend.core.types import Message, ModelRequest, ProviderConfig
from backend.providers import COMPLETE_TEXT_CHARS, complete_text
from backend.turns.events import problems
from backend.turns.sources import TurnSources
from backend.ws_frames import encode
from tests.fakeprovider import FakeProvider
from tests.fakeprovider import script as S

GRIN = "\U0001F600"


def strict(text: str):
    """JSON as a browser's JSON.parse reads it: no NaN or Infinity."""
    def refuse(literal):
        raise ValueError(f"{literal} is not JSON")
    return json.loads(text, parse_constant=refuse)


# --- the socket's encoder ---------------------------------------------------------------------

def sources_event(title: str, url: str, snippet: str) -> dict:
    return {"type": "sources", "event_id": 7, "turn_id": "t_1", "epoch": "e", "kind": "web",
            "items": [{"n": 1, "title": title, "url": url, "snippet": snippet}]}


def test_the_encoder_sends_a_lone_surrogate_as_a_replacement_character():
    event = sources_event("half \ud800 a title", "https://one.example/\udfff",
                          "joined \ud83d\ude00, alone \ud83d")
    frame = encode(event)
    frame.encode("utf-8")  # what the socket does with it: a lone surrogate raised here
    sent = strict(frame)
    assert sent["items"][0] == {"n": 1, "title": "half \ufffd a title", "url": "https://one.example/\ufffd",
                                "snippet": f"joined {GRIN}, alone \ufffd"}
    assert not problems(sent)
    # Control: an ordinary event is sent exactly as before.
    plain = sources_event("A title", "https://one.example/", f"{GRIN} ünïcode")
    assert encode(plain) == json.dumps(plain, ensure_ascii=False, separators=(",", ":"))


def circular() -> dict:
    loop: dict = {}
    loop["self"] = loop
    return loop


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), {1, 2}, b"bytes", object(), circular()],
                         ids=["nan", "infinity", "set", "bytes", "object", "cycle"])
def test_an_event_that_is_not_json_goes_out_as_an_error_under_its_id(bad):
    event = {"type": "tool_end", "event_id": 9, "turn_id": "t_1", "epoch": "e", "call_id": "c", "ok": True,
             "output": bad, "duration_ms": 1}
    sent = strict(encode(event))  # never raises, and is JSON a browser reads
    assert sent["type"] == "error" and sent["code"] == "internal" and sent["retryable"] is False
    assert (sent["event_id"], sent["turn_id"], sent["epoch"]) == (9, "t_1", "e")  # the cursor goes on
    assert "tool_end" in sent["message"] and "Reload the chat" in sent["message"]
    assert not problems(sent)


# --- what tools report and find ---------------------------------------------------------------

def test_progress_a_tool_reports_is_made_well_formed():
    seen = []
    context = CallContext(CancelToken(), lambda **fields: seen.append(fields))
    report_progress(context, output="half \ud800", message="pair \ud83d\ude00 then \udc00")
    report_progress(context, output="plain text")  # control: text as it was
    assert seen == [{"output": "half \ufffd", "message": f"pair {GRIN} then \ufffd"}, {"output": "plain text"}]
    json.dumps(seen, ensure_ascii=False).encode("utf-8")


def test_sources_are_numbered_announced_and_kept_well_formed():
    announced = []
    sources = TurnSources(lambda type_, **fields: announced.append(fields))
    numbered = sources.add("web", [{"title": "T\ud800", "url": "https://a.example/\udfff", "snippet": "s\ud83d\ude00"},
                                   {"title": "Plain", "url": "https://b.example/", "snippet": "ok"}])
    assert numbered == [{"n": 1, "title": "T\ufffd", "url": "https://a.example/\ufffd", "snippet": f"s{GRIN}"},
                        {"n": 2, "title": "Plain", "url": "https://b.example/", "snippet": "ok"}]
    assert announced == [{"kind": "web", "items": numbered}]
    assert sources.all() == [dict(item, kind="web") for item in numbered]  # what the reply saves
    json.dumps([announced, sources.all()], ensure_ascii=False).encode("utf-8")
    # The same URL written with the lone half again keeps its number.
    assert sources.add("web", [{"title": "again", "url": "https://a.example/\udfff", "snippet": ""}])[0]["n"] == 1


# --- complete_text's cap ------------------------------------------------------------------------

def text_request(base_url: str) -> ModelRequest:
    provider = ProviderConfig(id="p1", name="Fake", kind="openai_compatible", base_url=base_url,
                              api_key="test-key-123", timeout=10.0)
    return ModelRequest(provider=provider, wire_api="chat_completions", model="m", system="Title this.",
                        messages=(Message("user", "Hi"),))


DELTAS = 200_000  # of 200 characters each: 40 million characters the model would write
DELTA = "{i:>8} " + "w" * 191


@pytest.mark.parametrize("cap", [COMPLETE_TEXT_CHARS, 1_000], ids=["default", "given"])
def test_complete_text_stops_reading_at_its_cap_and_hangs_up(cap):
    with FakeProvider(record_times=True) as fake:
        fake.enqueue([S.blast(DELTAS, DELTA)])
        text = complete_text(text_request(fake.base_url)) if cap == COMPLETE_TEXT_CHARS else \
            complete_text(text_request(fake.base_url), max_chars=cap)
        assert len(text) == cap and text.startswith(DELTA.format(i=0) + DELTA.format(i=1))
        # It hung up: past the cap the fake could write what the socket buffers hold (none
        # of its 64 KiB writes, when the first one is cut), then no more: far from the whole answer.
        written = len(fake.requests[-1].write_times)
        assert written < DELTAS // 4, written


def test_complete_text_below_its_cap_is_the_whole_answer():
    with FakeProvider() as fake:
        fake.enqueue([S.blast(50, DELTA)])
        text = complete_text(text_request(fake.base_url), max_chars=50 * 200)
        assert text == "".join(DELTA.format(i=i) for i in range(50))
