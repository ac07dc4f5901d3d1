"""A chat's "Summarize now" and its turn's own summary (CONTRACT §6) are one command of their chat, over the
real server: a message sent during a manual summary waits behind it and its turn finds the branch
summarized already, and a manual summary asked while a turn summarizes is refused, so no branch is
ever summarized twice."""
from __future__ import annotations

from tests.fakeprovider import script as S
from tests.test_protocol_compact_serial import Compacting
from tests.test_protocol_context import long_text, summary_request, three_long_turns


def summaries_since(setup, start: int) -> list[dict]:
    return [r.body for r in setup.fake.requests[start:] if summary_request(r.body)]


def test_a_send_during_a_manual_summary_waits_and_its_turn_does_not_summarize_again(setup):
    # Without the manual summary, this question's turn passes the threshold and summarizes
    # first (test_protocol_context: a turn past the threshold compacts first).
    chat, sock = three_long_turns(setup)
    start = len(setup.fake.requests)
    setup.fake.enqueue([S.hang(), S.text("SUMMARY-MANUAL")])
    manual = Compacting(setup.api, chat)
    setup.fake.wait_hanging()
    setup.fake.enqueue([S.text("answer 3")])
    sock.send(type="send", request_id="r3", content=long_text("question 3", 750))
    accepted = sock.until("accepted", request_id="r3")
    assert accepted["queued"] is True
    setup.fake.release()
    done = manual.result()
    assert done.status == 200 and done.body["summary"] == "SUMMARY-MANUAL", done
    begun = sock.until("turn_start")
    assert begun["user_message_id"] == accepted["message_id"]
    end = sock.until("turn_end", turn_id=begun["turn_id"], timeout=30)
    assert end["status"] == "completed", sock.of("error")
    # One summary in all: the turn started on the manual one and had room enough without another.
    assert not [e for e in sock.of("compacted") if e["turn_id"] == begun["turn_id"]]
    assert len(summaries_since(setup, start)) == 1
    turn_body = setup.fake.requests[-1].body
    assert not summary_request(turn_body) and "SUMMARY-MANUAL" in turn_body["messages"][0]["content"]
    context = setup.api.get(f"/api/chats/{chat}/context").body
    assert context["compaction"]["boundary_message_id"] == done.body["boundary_message_id"]
    assert context["compaction"]["summary"] == "SUMMARY-MANUAL"


def test_summarize_now_while_a_turn_summarizes_is_refused_and_the_branch_is_summarized_once(setup):
    chat, sock = three_long_turns(setup)
    start = len(setup.fake.requests)
    setup.fake.enqueue([S.hang(), S.text("SUMMARY-AUTO")], [S.text("answer 3")])
    sock.send(type="send", request_id="r3", content=long_text("question 3", 750))
    begun = sock.until("turn_start")
    setup.fake.wait_hanging()  # the turn's own summary is being written
    refused = setup.api.post(f"/api/chats/{chat}/compact")
    assert refused.status == 409 and refused.body["error"]["code"] == "busy", refused
    assert "reply" in refused.body["error"]["message"]
    setup.fake.release()
    end = sock.until("turn_end", turn_id=begun["turn_id"], timeout=30)
    assert end["status"] == "completed", sock.of("error")
    compacted = [e for e in sock.of("compacted") if e["turn_id"] == begun["turn_id"]]
    assert len(compacted) == 1 and len(summaries_since(setup, start)) == 1
    context = setup.api.get(f"/api/chats/{chat}/context").body
    assert context["compaction"]["boundary_message_id"] == compacted[0]["boundary_message_id"]
    assert context["compaction"]["summary"] == "SUMMARY-AUTO"
