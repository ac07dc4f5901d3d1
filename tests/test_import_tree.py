"""Export and import keep the whole tree (CONTRACT §5): every version, which branch is active,
and importing the same file again adds only what is new — over the real server."""
from __future__ import annotations

import copy

from tests.chat_samples import comparable, export_json
from tests.fakeprovider import script as S
from tests.test_api_chats import add_message
from tests.test_api_import import chatgpt_conversation
from tests.test_protocol_versions import turn


def shape(api, chat_id: str) -> tuple[list[tuple], int | None]:
    """The chat's tree with ids replaced by their place: (role, text, parent's place) per
    message, oldest first, and the active leaf's place."""
    body = api.get(f"/api/chats/{chat_id}/tree").body
    place = {item["id"]: n for n, item in enumerate(body["items"])}
    return ([(i["role"], i["preview"], place.get(i["parent_id"])) for i in body["items"]],
            place.get(body["active_leaf_id"]))


def links(api, chat_id: str) -> set[tuple]:
    """(role, text, parent's text) of every message."""
    items = api.get(f"/api/chats/{chat_id}/tree").body["items"]
    text = {i["id"]: i["preview"] for i in items}
    return {(i["role"], i["preview"], text.get(i["parent_id"])) for i in items}


def branch(api, chat_id: str) -> list[str]:
    return [m["content"] for m in api.get(f"/api/chats/{chat_id}/messages?limit=200").body["items"]]


def by_text(api, chat_id: str) -> dict[str, int]:
    return {i["preview"]: i["id"] for i in api.get(f"/api/chats/{chat_id}/tree").body["items"]}


def imported(api, doc, created: int = 1, already: int = 0, updated: list | None = None) -> list[str]:
    r = api.post("/api/import", doc)
    assert r.status == 201, r
    assert (len(r.body["chat_ids"]), r.body["already"], r.body["updated"]) == (created, already, updated or []), r
    return r.body["chat_ids"]


def branched_chat(setup) -> tuple[str, object]:
    """q1 → a1; q1 edited: q1 better → a2; a2 regenerated: a2 again. Then the person goes
    back to a2, so the active branch is not the newest one."""
    chat = setup.chat(title="Branches")
    setup.fake.enqueue([S.text("a1")], [S.text("a2")], [S.text("a2 again")])
    sock = setup.socket(chat)
    turn(sock, request_id="r1", content="q1")
    q1 = setup.messages(chat)[0]["id"]
    turn(sock, "edit", message_id=q1, content="q1 better", request_id="e1")
    a2 = setup.messages(chat)[1]["id"]
    turn(sock, "regenerate", message_id=a2, request_id="g1")
    assert setup.api.post(f"/api/chats/{chat}/active", {"message_id": a2}).status == 200
    return chat, sock


def test_a_branched_chat_round_trips_with_every_version_and_its_active_branch(setup):
    api = setup.api
    chat, _sock = branched_chat(setup)
    doc = export_json(api, chat)
    [c] = doc["chats"]
    ids = by_text(api, chat)
    assert [(m["id"], m["parent_id"]) for m in c["messages"]] == [
        (ids["q1"], None), (ids["a1"], ids["q1"]), (ids["q1 better"], None), (ids["a2"], ids["q1 better"]),
        (ids["a2 again"], ids["q1 better"])]
    assert c["active_leaf_id"] == ids["a2"]
    # Markdown is the active branch alone, and says that more is in the JSON.
    md = api.get(f"/api/chats/{chat}/export?format=md").body.decode()
    assert "q1 better" in md and "\na2\n" in md and "a1" not in md and "a2 again" not in md
    assert "3 messages of other versions are in the JSON export" in md

    [copy_id] = imported(api, doc)
    assert shape(api, copy_id) == shape(api, chat)
    assert branch(api, copy_id) == ["q1 better", "a2"]
    items = api.get(f"/api/chats/{copy_id}/messages").body["items"]
    assert [m["versions"]["index"] for m in items] == [2, 1] and items[1]["versions"]["count"] == 2
    assert comparable(export_json(api, copy_id)) == comparable(doc)
    # Switching works in the copy: each version leads to the leaf under it.
    copied = by_text(api, copy_id)
    r = api.post(f"/api/chats/{copy_id}/active", {"message_id": copied["q1"]})
    assert [m["content"] for m in r.body["items"]] == ["q1", "a1"]
    r = api.post(f"/api/chats/{copy_id}/active", {"message_id": copied["q1 better"]})
    assert [m["content"] for m in r.body["items"]] == ["q1 better", "a2"]
    r = api.post(f"/api/chats/{copy_id}/active", {"message_id": copied["a2 again"]})
    assert [m["content"] for m in r.body["items"]] == ["q1 better", "a2 again"]

    # The same file again: nothing new, nothing touched (not even the branch chosen since).
    before = api.get("/api/chats").body["items"]
    imported(api, doc, created=0, already=1)
    assert api.get("/api/chats").body["items"] == before
    assert branch(api, copy_id) == ["q1 better", "a2 again"]


def test_importing_again_adds_what_the_chat_gained_where_it_belongs(setup):
    api = setup.api
    chat, sock = branched_chat(setup)
    [copy_id] = imported(api, export_json(api, chat))
    setup.fake.enqueue([S.text("a3")], [S.text("local a")], [S.text("a4")])
    turn(sock, request_id="r2", content="q2")  # under a2, the active branch
    imported(api, export_json(api, chat), created=0, already=1, updated=[copy_id])
    assert shape(api, copy_id) == shape(api, chat)
    # The copy's branch ended where the file's active branch went on: it follows it.
    assert branch(api, copy_id) == ["q1 better", "a2", "q2", "a3"]

    # The person goes back to the first version in the copy and carries on there.
    assert api.post(f"/api/chats/{copy_id}/active", {"message_id": by_text(api, copy_id)["q1"]}).status == 200
    local = setup.socket(copy_id)
    turn(local, request_id="l1", content="local q")
    local.close()
    turn(sock, request_id="r3", content="q3")  # the source carries on too
    imported(api, export_json(api, chat), created=0, already=1, updated=[copy_id])
    # What was added sits under its parent; what the person did is untouched, their branch kept.
    assert branch(api, copy_id) == ["q1", "a1", "local q", "local a"]
    mine = links(api, copy_id)
    assert mine - links(api, chat) == {("user", "local q", "a1"), ("assistant", "local a", "local q")}
    assert links(api, chat) < mine
    r = api.post(f"/api/chats/{copy_id}/active", {"message_id": by_text(api, copy_id)["q3"]})
    assert [m["content"] for m in r.body["items"]] == ["q1 better", "a2", "q2", "a3", "q3", "a4"]


def test_an_export_of_the_first_format_imports_as_one_branch(server, api):
    msgs = [{"role": role, "content": text, "created_at": f"2026-01-01T00:00:0{n}Z"}
            for n, (role, text) in enumerate([("user", "old q"), ("assistant", "old a"),
                                              ("user", "old q2"), ("assistant", "old a2")])]
    doc = {"format": "numi-export", "version": 1, "chats": [
        {"id": "c_old", "title": "Old", "created_at": "2026-01-01T00:00:00Z", "messages": msgs}]}
    [chat] = imported(api, doc)
    assert shape(api, chat) == ([("user", "old q", None), ("assistant", "old a", 0), ("user", "old q2", 1),
                                 ("assistant", "old a2", 2)], 3)
    assert [m["versions"]["count"] for m in api.get(f"/api/chats/{chat}/messages").body["items"]] == [1] * 4
    imported(api, doc, created=0, already=1)
    doc["chats"][0]["messages"].append({"role": "user", "content": "old q3", "created_at": "2026-01-01T00:00:09Z"})
    imported(api, doc, created=0, already=1, updated=[chat])
    assert branch(api, chat) == ["old q", "old a", "old q2", "old a2", "old q3"]


def chatgpt_branches() -> dict:
    """The test conversation with an id, and its edited question's answer regenerated."""
    conv = chatgpt_conversation()
    conv["conversation_id"] = "conv-branches"
    mapping = conv["mapping"]
    mapping["u1b"]["children"].append("a2b")
    mapping["a2b"] = {"id": "a2b", "parent": "u1b", "children": [], "message": {
        "id": "a2b", "author": {"role": "assistant"}, "create_time": 1700000025,
        "content": {"content_type": "text", "parts": ["Regenerated answer"]}, "metadata": {}, "recipient": "all"}}
    return conv


def _node(conv, node_id, parent, role, text):
    conv["mapping"][parent]["children"].append(node_id)
    conv["mapping"][node_id] = {"id": node_id, "parent": parent, "children": [], "message": {
        "id": node_id, "author": {"role": role}, "create_time": 1700000100,
        "content": {"content_type": "text", "parts": [text]}, "metadata": {}, "recipient": "all"}}


def test_a_chatgpt_conversation_keeps_every_branch_and_imports_once(server, api):
    conv = chatgpt_branches()
    [chat] = imported(api, [conv])
    # Hidden, tool and thoughts nodes are left out; what hung from them hangs from the
    # nearest message kept above. The two first questions are versions of each other.
    assert shape(api, chat) == ([("user", "First try", None), ("assistant", "Old answer", 0),
                                 ("user", "Edited question", None), ("assistant", "The answer", 2),
                                 ("user", "Thanks", 3), ("assistant", "Regenerated answer", 2)], 4)
    items = api.get(f"/api/chats/{chat}/messages").body["items"]
    assert [m["content"] for m in items] == ["Edited question", "The answer", "Thanks"]
    assert [(m["versions"]["index"], m["versions"]["count"]) for m in items] == [(2, 2), (1, 2), (1, 1)]
    assert items[1]["reasoning"] == "Thinking hard."
    ids = by_text(api, chat)
    r = api.post(f"/api/chats/{chat}/active", {"message_id": ids["Regenerated answer"]})
    assert [m["content"] for m in r.body["items"]] == ["Edited question", "Regenerated answer"]
    # Search finds every branch and tells which one is shown.
    hits = {i["snippet"]: i["active"] for i in api.get("/api/search?q=answer").body["items"]}
    assert hits == {"Old answer": False, "The answer": False, "Regenerated answer": True}

    imported(api, [conv], created=0, already=1)
    # ChatGPT's next export: the conversation went on, and the first question got a new answer.
    later = copy.deepcopy(conv)
    _node(later, "a4", "u3", "assistant", "You are welcome")
    _node(later, "a1b", "u1", "assistant", "Another old answer")
    later["current_node"] = "a4"
    imported(api, [later, chatgpt_branches() | {"conversation_id": "conv-other"}], already=1, updated=[chat])
    tree = shape(api, chat)[0]
    assert tree[6:] == [("assistant", "Another old answer", 0), ("assistant", "You are welcome", 4)]
    # The person had moved to the regenerated answer: their branch stays where they put it,
    # and a version keeps leading where it led.
    assert branch(api, chat) == ["Edited question", "Regenerated answer"]
    r = api.post(f"/api/chats/{chat}/active", {"message_id": ids["First try"]})
    assert [m["content"] for m in r.body["items"]] == ["First try", "Old answer"]
    r = api.post(f"/api/chats/{chat}/active", {"message_id": ids["Thanks"]})
    assert [m["content"] for m in r.body["items"]] == ["Edited question", "The answer", "Thanks", "You are welcome"]


def test_a_queued_message_is_exported_after_the_active_branch(server, api):
    chat = api.post("/api/chats", {"title": "Queue"}).body["id"]
    question = add_message(server, chat, "user", "q")
    answer = add_message(server, chat, "assistant", "a")
    waiting = add_message(server, chat, "user", "still waiting", status="queued")
    [c] = export_json(api, chat)["chats"]
    assert [(m["id"], m["parent_id"]) for m in c["messages"]] == [(question, None), (answer, question),
                                                                  (waiting, answer)]
    assert c["active_leaf_id"] == waiting
    # Imported, it is where a restart would put it: sent, unanswered (Continue answers it).
    [copy_id] = imported(api, export_json(api, chat))
    items = api.get(f"/api/chats/{copy_id}/messages").body["items"]
    assert [(m["content"], m["status"]) for m in items] == [("q", "complete"), ("a", "complete"),
                                                            ("still waiting", "interrupted")]
