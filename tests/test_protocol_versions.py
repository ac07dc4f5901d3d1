"""Versions and branches (CONTRACT §5) over the real server and WebSocket."""
from __future__ import annotations

from tests.fakeprovider import script as S


def texts(items):
    return [(m["role"], m["content"]) for m in items]


def turn(sock, frame_type="send", **frame):
    """Send a frame that starts a turn; the turn's start and end events."""
    sock.send(type=frame_type, **frame)
    start = sock.until("turn_start")
    end = sock.until("turn_end", turn_id=start["turn_id"])
    return start, end


def two_versions(setup):
    """A chat where the first question was edited: q1 → a1, then q1' → a2 (active)."""
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("a1")], [S.text("a2")])
    sock = setup.socket(chat)
    turn(sock, request_id="r1", content="q1")
    first = setup.messages(chat)
    turn(sock, "edit", message_id=first[0]["id"], content="q1 better", request_id="e1")
    return chat, sock, first


def test_edit_makes_a_sibling_and_keeps_the_old_version(setup):
    chat, sock, first = two_versions(setup)
    branched = sock.of("branched")[-1]
    assert branched["role"] == "user" and branched["content"] == "q1 better" and branched["parent_id"] is None
    items = setup.messages(chat)
    assert texts(items) == [("user", "q1 better"), ("assistant", "a2")]
    old_user, new_user = first[0], items[0]
    assert new_user["versions"] == {"index": 2, "count": 2, "ids": [old_user["id"], new_user["id"]]}
    assert items[1]["versions"]["count"] == 1 and items[1]["parent_id"] == new_user["id"]
    # The model was sent the active branch only.
    assert [m["content"] for m in setup.fake.requests[-1].body["messages"]] == ["q1 better"]
    # Nothing was deleted: the tree holds both versions and their replies.
    tree = setup.api.get(f"/api/chats/{chat}/tree").body
    assert sorted(i["preview"] for i in tree["items"]) == ["a1", "a2", "q1", "q1 better"]
    assert tree["active_leaf_id"] == items[1]["id"]
    assert {i["id"]: i["parent_id"] for i in tree["items"]}[first[1]["id"]] == old_user["id"]


def test_regenerate_makes_a_sibling_reply_and_the_same_request_id_makes_no_second(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("one")], [S.text("two")])
    sock = setup.socket(chat)
    turn(sock, request_id="r1", content="q")
    reply = setup.messages(chat)[1]
    start, end = turn(sock, "regenerate", message_id=reply["id"], request_id="g1")
    assert end["status"] == "completed"
    branched = sock.of("branched")[-1]
    assert branched["role"] == "assistant" and branched["parent_id"] == reply["parent_id"]
    items = setup.messages(chat)
    assert texts(items) == [("user", "q"), ("assistant", "two")]
    assert items[1]["id"] == branched["message_id"]
    assert items[1]["versions"] == {"index": 2, "count": 2, "ids": [reply["id"], items[1]["id"]]}
    # The same request again: nothing new, no turn.
    sock.send(type="regenerate", message_id=reply["id"], request_id="g1")
    sock.send(type="ping")
    sock.until("pong")
    assert len(sock.of("turn_start")) == 2
    assert setup.messages(chat)[1]["versions"]["count"] == 2


def test_switch_while_running_is_busy_and_an_unknown_message_is_not_found(setup):
    chat, sock, first = two_versions(setup)
    other = setup.chat(title="other")
    setup.fake.enqueue([S.hang()])
    sock.send(type="send", request_id="r2", content="go")
    setup.fake.wait_hanging()
    r = setup.api.post(f"/api/chats/{chat}/active", {"message_id": first[0]["id"]})
    assert r.status == 409 and r.body["error"]["code"] == "busy"
    sock.send(type="regenerate", message_id=first[1]["id"])
    assert sock.until("error")["code"] == "busy"
    sock.send(type="stop")
    sock.until("turn_end")
    assert setup.api.post(f"/api/chats/{other}/active", {"message_id": first[0]["id"]}).status == 404
    assert setup.api.post(f"/api/chats/{chat}/active", {"message_id": 10 ** 12}).status == 404
    assert setup.api.post(f"/api/chats/{chat}/active", {"message_id": "1"}).status == 422
    assert texts(setup.messages(chat))[:2] == [("user", "q1 better"), ("assistant", "a2")]


def test_through_reads_another_branch_without_switching(setup):
    chat, sock, first = two_versions(setup)
    r = setup.api.get(f"/api/chats/{chat}/messages?through={first[0]['id']}")
    assert texts(r.body["items"]) == [("user", "q1"), ("assistant", "a1")]
    assert texts(setup.messages(chat)) == [("user", "q1 better"), ("assistant", "a2")]


def test_paging_follows_the_branch(setup):
    chat, sock, first = two_versions(setup)
    setup.fake.enqueue(*[[S.text(f"a{i}")] for i in range(3, 6)])
    for i in range(3, 6):
        turn(sock, request_id=f"r{i}", content=f"q{i}")
    whole = setup.messages(chat)
    assert len(whole) == 8
    page = setup.api.get(f"/api/chats/{chat}/messages?limit=3").body
    assert [m["id"] for m in page["items"]] == [m["id"] for m in whole[-3:]] and page["has_more"]
    older = setup.api.get(f"/api/chats/{chat}/messages?limit=10&before={page['items'][0]['id']}").body
    assert [m["id"] for m in older["items"]] == [m["id"] for m in whole[:-3]] and not older["has_more"]


def test_usage_counts_every_version(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("one"), S.usage(10, 2)], [S.text("two"), S.usage(10, 3)])
    sock = setup.socket(chat)
    turn(sock, request_id="r1", content="q")
    reply = setup.messages(chat)[1]
    turn(sock, "regenerate", message_id=reply["id"])
    usage = setup.api.get(f"/api/chats/{chat}/usage").body
    assert usage["replies"] == 2 and usage["output_tokens"] == 5


def test_bad_branch_requests_get_clear_errors_and_change_nothing(setup):
    chat, sock, first = two_versions(setup)
    before = setup.messages(chat)
    for value in ("abc", "-1", "1.5"):
        r = setup.api.get(f"/api/chats/{chat}/messages?through={value}")
        assert r.status == 422 and "through" in r.body["error"]["fields"], (value, r)
    r = setup.api.get(f"/api/chats/{chat}/messages?through=999999")
    assert r.status == 404 and r.body["error"]["code"] == "not_found"
    for body in ({}, {"message_id": first[0]["id"], "limit": 0}, {"message_id": first[0]["id"], "other": 1}):
        assert setup.api.post(f"/api/chats/{chat}/active", body).status == 422, body
    for frame in ({"type": "edit", "message_id": first[0]["id"], "content": "x", "request_id": ""},
                  {"type": "regenerate", "message_id": first[1]["id"], "request_id": "r" * 65},
                  {"type": "regenerate", "message_id": first[1]["id"], "request_id": 7}):
        sock.send(**frame)
        assert sock.until("error")["code"] == "bad_request", frame
        sock.events.clear()
    sock.send(type="regenerate", message_id=first[0]["id"])  # a user message is no reply
    assert sock.until("error")["code"] == "bad_request"
    assert setup.messages(chat) == before
