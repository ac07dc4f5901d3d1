"""A purged chat leaves no tool policy nor "allow always" rule behind, through the real server:
purged from the trash, or a temporary chat removed on exit. Its rules were once kept among
the app's settings, listed by GET /api/approvals for good and impossible to delete."""
from __future__ import annotations

from tests.fakeprovider import script as S
from tests.test_api_chats import sql


def always_allowed(setup, chat: str) -> None:
    """One turn whose `guarded` call the person allows always: the chat gets a standing rule."""
    setup.fake.enqueue([S.tool_call(0, "c1", "guarded", '{"text": "x"}')], [S.text("ok")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    ask = sock.until("approval_required")
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow_always")
    sock.until("turn_end")
    sock.close()
    r = setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "upper", "policy": "deny"})
    assert r.status == 200, r


def ruled(api) -> set[str]:
    """The chats GET /api/approvals lists standing rules for."""
    r = api.get("/api/approvals")
    assert r.status == 200, r
    return {rule["chat_id"] for rule in r.body["rules"]}


def state_rows(server, chat: str) -> int:
    return sql(server, "SELECT count(*) FROM chat_state WHERE chat_id = ?", (chat,))[0][0]


def test_a_chat_purged_from_the_trash_leaves_no_rule(setup):
    gone, kept = setup.chat(title="gone"), setup.chat(title="kept")
    for chat in (gone, kept):
        always_allowed(setup, chat)
    assert ruled(setup.api) == {gone, kept}
    # In the trash the chat can come back, and its rules with it.
    assert setup.api.delete(f"/api/chats/{gone}").status == 204
    assert ruled(setup.api) == {gone, kept}
    assert setup.api.delete("/api/trash").body == {"purged": 1}
    assert ruled(setup.api) == {kept}
    assert state_rows(setup.server, gone) == 0
    # The kept chat's rule is untouched, and still removable.
    listed = setup.api.get(f"/api/approvals?chat_id={kept}").body
    assert listed["chat"] == {"upper": "deny"}
    r = setup.api.request("DELETE", "/api/approvals/rules", {"chat_id": kept, "rule": listed["rules"][0]})
    assert r.status == 204 and ruled(setup.api) == set()


def test_a_chat_purged_at_once_leaves_no_rule(setup):
    chat = setup.chat(title="gone")
    always_allowed(setup, chat)
    assert setup.api.delete(f"/api/chats/{chat}?purge=1").status == 204
    assert ruled(setup.api) == set() and state_rows(setup.server, chat) == 0


def test_a_temporary_chat_removed_on_exit_leaves_no_rule(setup, start_server):
    temp, saved = setup.chat(title="scratch", temporary=True), setup.chat(title="saved")
    for chat in (temp, saved):
        always_allowed(setup, chat)
    assert ruled(setup.api) == {temp, saved}
    assert setup.server.terminate() < 10
    assert state_rows(setup.server, temp) == 0
    server = start_server(data_dir=setup.server.data_dir)
    assert ruled(server.api()) == {saved}
