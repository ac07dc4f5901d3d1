"""A chat of hundreds of short turns, made in one import from a real one-turn chat's export."""
from __future__ import annotations

import copy

from tests.chat_samples import export_json
from tests.fakeprovider import script as S


def long_chat(setup, turns: int, title: str = "Long chat") -> str:
    """A chat of `turns` short question/answer turns on the setup's model; its id."""
    seed = setup.chat(title=title)
    setup.fake.enqueue([S.text("answer 0")])
    sock = setup.socket(seed)
    try:
        sock.send(type="send", request_id="seed", content="question 0")
        assert sock.until("turn_end", timeout=30)["status"] == "completed"
    finally:
        sock.close()
    doc = export_json(setup.api, seed)
    [chat] = doc["chats"]
    user, reply = (next(m for m in chat["messages"] if m["role"] == role) for role in ("user", "assistant"))
    messages, parent = [], None
    for i in range(turns):
        for template, text in ((user, f"question {i}"), (reply, f"answer {i}")):
            m = copy.deepcopy(template)
            m.update(id=len(messages) + 1, parent_id=parent, content=text)
            messages.append(m)
            parent = m["id"]
    chat.update(messages=messages, active_leaf_id=parent)
    r = setup.api.post("/api/import", doc)
    assert r.status == 201, r
    [chat_id] = r.body["chat_ids"]
    assert setup.api.patch(f"/api/chats/{chat_id}", {"model_id": setup.model["id"]}).status == 200
    setup.api.request("DELETE", f"/api/chats/{seed}?purge=1")
    return chat_id
