"""`regenerate` with `model_id`: that reply is answered by the named model, the chat keeps its own."""
from __future__ import annotations

from tests.fakeprovider import script as S


def test_regenerate_with_a_model_answers_by_it_and_keeps_the_chats_model(setup):
    other = setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": "fake-other",
                                           "label": "Other"}).body
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("one")], [S.text("two")], [S.text("three")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    reply_id = sock.until("done")["message_id"]
    sock.until("turn_end")
    sock.send(type="regenerate", message_id=reply_id, model_id=other["id"])
    sock.until("turn_end")
    answers = [r.body for r in setup.fake.requests if r.body and r.body["messages"][-1].get("content") == "q"]
    assert [b["model"] for b in answers] == ["fake-model", "fake-other"]
    msgs = setup.messages(chat)
    assert [(m["role"], m["content"], m.get("model_id")) for m in msgs] == [
        ("user", "q", None), ("assistant", "two", other["id"])]
    assert setup.api.get(f"/api/chats/{chat}").body["model_id"] == setup.model["id"]
    # The next message goes to the chat's model again.
    sock.send(type="send", request_id="r2", content="q2")
    sock.until("turn_end")
    assert [r.body for r in setup.fake.requests if r.body and r.body["messages"][-1].get("content") == "q2"][-1][
        "model"] == "fake-model"
