"""A long chat whose tokens fit is carried whole (CONTRACT §6): no message cap trims it,
and the meter's level says so; only the window leaves messages out, and says it is the window."""
from __future__ import annotations

from tests.fakeprovider import script as S
from tests.long_chats import long_chat


def test_a_chat_of_300_short_messages_is_ok_and_sent_whole(setup):
    chat = long_chat(setup, 150)
    ctx = setup.api.get(f"/api/chats/{chat}/context").body
    assert ctx["messages_included"] == 300 and ctx["messages_omitted"] == 0, ctx
    assert ctx["level"] == "ok" and ctx["trimmed_by"] is None, ctx
    assert ctx["used_tokens"] < 0.1 * ctx["context_window"]
    sock = setup.socket(chat)
    setup.fake.enqueue([S.text("answer 150")])
    sock.send(type="send", request_id="next", content="question 150")
    assert sock.until("turn_end", timeout=30)["status"] == "completed"
    assert not sock.of("context_trimmed")
    [request] = [r for r in setup.fake.requests if "question 150" in str(r.body)]
    sent = [m for m in request.body["messages"] if m["role"] != "system"]
    assert len(sent) == 301 and sent[0]["content"] == "question 0"
    sock.close()


def test_messages_left_out_for_the_window_say_it_is_the_window(setup):
    chat = long_chat(setup, 150)
    assert setup.api.patch("/api/settings", {"compaction": {"auto": False}}).status == 200
    r = setup.api.patch(f"/api/models/{setup.model['id']}", {"context_window": 2000, "max_output_tokens": 200})
    assert r.status == 200, r
    ctx = setup.api.get(f"/api/chats/{chat}/context").body
    assert ctx["messages_omitted"] > 0 and ctx["trimmed_by"] == "window" and ctx["level"] == "over", ctx
    assert ctx["used_tokens"] <= ctx["input_budget"]
