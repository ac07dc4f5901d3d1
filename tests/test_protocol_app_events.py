"""App-wide chat events (`/ws/_app`) against the real server process and the fake provider.

Every wait is on a frame: AppSocket returns once `ready` arrived (the server
has subscribed it), a turn is held in the fake provider's `hang` step until
the test releases it, and closing a chat socket returns only after the
server hung up on it (after it stopped watching the chat).
"""
from __future__ import annotations

from tests.fakeprovider import script as S
from tests.numi_client import AppSocket
from tests.test_api_security import WS_HEADERS, bearer, raw


def chat_frames(app: AppSocket, chat_id: str) -> list[tuple]:
    """(type, running, unread) of every frame about `chat_id` received so far."""
    out = []
    for e in app.events:
        if e["type"] == "chat_changed" and e["chat"]["id"] == chat_id:
            out.append(("chat_changed", e["chat"]["running"], e["chat"]["unread"]))
        elif e["type"] == "chat_removed" and e["chat_id"] == chat_id:
            out.append(("chat_removed",))
    return out


def test_ready_comes_first_ping_is_answered_and_bad_frames_keep_the_socket(server):
    app = AppSocket(server)
    assert app.events == [{"type": "ready"}]
    app.send(type="ping")
    assert app.recv() == {"type": "pong"}
    for frame in ("not json", "[1]", '{"type": "send", "content": "x"}', "{}"):
        app.ws.send(frame)
        error = app.recv()
        assert (error["type"], error["code"]) == ("error", "bad_request") and error["message"].endswith(".")
    app.send(type="ping")
    assert app.recv() == {"type": "pong"}


def test_a_turn_in_an_unwatched_chat_shows_running_then_unread_until_opened(setup):
    chat = setup.chat(title="Elsewhere")
    app = AppSocket(setup.server)
    setup.fake.enqueue([S.text("Hello "), S.hang(), S.text("world")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hi")
    sock.until("content")  # the reply is being written, held in the fake's hang
    started = app.chat(chat, running=True)
    assert (started["unread"], started["title"]) == (False, "Elsewhere")
    sock.close()  # nobody watches the chat now
    setup.fake.release()
    ended = app.chat(chat, running=False)
    assert ended["unread"] is True
    assert chat_frames(app, chat) == [("chat_changed", True, False), ("chat_changed", False, True)]
    listed = setup.api.get("/api/chats").body["items"][0]
    assert listed == ended  # the frame is the list's row, as the list now shows it
    assert setup.messages(chat)[-1]["content"] == "Hello world"
    # Opening the chat marks it read, and the app socket hears of it.
    opened = setup.socket(chat)
    assert app.chat(chat, unread=False)["running"] is False
    assert setup.api.get(f"/api/chats/{chat}").body["unread"] is False
    opened.close()


def test_a_turn_in_a_watched_chat_does_not_become_unread(setup):
    chat = setup.chat(title="Open here")
    app = AppSocket(setup.server)
    setup.fake.enqueue([S.text("ok")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hi")
    sock.until("turn_end")
    app.chat(chat, running=False)
    assert chat_frames(app, chat) == [("chat_changed", True, False), ("chat_changed", False, False)]


def test_a_chat_waiting_for_an_approval_says_so_until_answered(setup):
    chat = setup.chat(title="Asks")
    app = AppSocket(setup.server)
    setup.fake.enqueue([S.tool_call(0, "c1", "guarded", '{"text": "x"}')], [S.text("done")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    ask = sock.until("approval_required")
    assert app.chat(chat, running=True, awaiting_approval=True)["unread"] is False
    # The list and the chat itself say the same to a window that opens now.
    assert setup.api.get(f"/api/chats/{chat}").body["awaiting_approval"] is True
    assert setup.api.get("/api/chats").body["items"][0]["awaiting_approval"] is True
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
    assert app.chat(chat, running=True, awaiting_approval=False)
    sock.until("turn_end")
    assert app.chat(chat, running=False)["awaiting_approval"] is False
    assert setup.api.get(f"/api/chats/{chat}").body["awaiting_approval"] is False


def test_titles_renames_and_pins_are_pushed(setup):
    chat = setup.chat()  # untitled: the first answer asks the model for a title
    app = AppSocket(setup.server)
    setup.fake.enqueue([S.text("An answer")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hi")
    title = sock.until("title_update")["title"]
    assert app.chat(chat, title=title)["title"] == "Hello from the fake provider"
    assert setup.api.patch(f"/api/chats/{chat}", {"title": "Mine"}).status == 200
    renamed = app.chat(chat, title="Mine")
    assert setup.api.patch(f"/api/chats/{chat}", {"pinned": True}).status == 200
    pinned = app.chat(chat, pinned=True)
    assert pinned["updated_at"] == renamed["updated_at"]  # pinning is not activity: the order stays


def test_create_delete_restore_and_purge_reach_every_window(setup):
    first, second = AppSocket(setup.server), AppSocket(setup.server)
    chat = setup.chat(title="Doomed")
    for app in (first, second):
        assert app.chat(chat)["title"] == "Doomed"
    assert setup.api.delete(f"/api/chats/{chat}").status == 204
    for app in (first, second):
        assert app.until("chat_removed") == {"type": "chat_removed", "chat_id": chat}
    assert setup.api.post(f"/api/chats/{chat}/restore").status == 200
    assert first.chat(chat)["title"] == "Doomed"
    assert setup.api.delete(f"/api/chats/{chat}?purge=1").status == 204
    assert first.until("chat_removed")["chat_id"] == chat


def test_deleting_a_running_chat_is_never_followed_by_its_return(setup):
    chat = setup.chat(title="Busy")
    app = AppSocket(setup.server)
    setup.fake.enqueue([S.text("partial "), S.hang()])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="hi")
    sock.until("content")
    app.chat(chat, running=True)
    assert setup.api.delete(f"/api/chats/{chat}").status == 204  # stops the turn
    # Three frames in all: the start, the delete's removal (queued before the 204) and the
    # turn's end. The end is read before or after the delete commits, and says so.
    while len(chat_frames(app, chat)) < 3:
        app.recv()
    assert chat_frames(app, chat) in ([("chat_changed", True, False), ("chat_changed", False, False),
                                       ("chat_removed",)],
                                      [("chat_changed", True, False), ("chat_removed",), ("chat_removed",)])
    setup.fake.release()


def test_the_app_socket_is_guarded_like_every_websocket(server):
    good_origin = f"http://127.0.0.1:{server.port}"
    assert raw(server, "GET", "/ws/_app", WS_HEADERS)[0] == 401
    assert raw(server, "GET", "/ws/_app", {"Authorization": "Bearer wrong", **WS_HEADERS})[0] == 401
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{server.port}.evil.example"):
        status, _, data = raw(server, "GET", "/ws/_app", {**bearer(server), **WS_HEADERS, "Origin": origin})
        assert status == 403 and b"forbidden_origin" in data
    assert raw(server, "GET", "/ws/_app", {**bearer(server), **WS_HEADERS}, host="evil.example")[0] == 403
    assert raw(server, "GET", "/ws/_app", {**bearer(server), **WS_HEADERS, "Origin": good_origin})[0] == 101
    cookie = {"Cookie": server.session_cookie(), **WS_HEADERS, "Origin": good_origin}
    assert raw(server, "GET", "/ws/_app", cookie)[0] == 101


def test_an_open_app_socket_does_not_hold_up_shutdown(server):
    app = AppSocket(server)
    assert server.terminate() < 10
    app.close()
