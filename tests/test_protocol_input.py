"""Bad input on the socket gets a clear error and loses nothing."""
import json
import socket

import pytest
from websockets.exceptions import ConnectionClosed

from tests.fakeprovider import script as S
from tests.numi_client import Socket


@pytest.mark.parametrize("frame, needle", [
    ("not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"content": "x"}', "no \"type\""),
    ('{"type": "dance"}', "Unknown frame type"),
    ('{"type": "send", "content": "x"}', "request_id"),
    ('{"type": "send", "request_id": "", "content": "x"}', "1 to 64"),
    ('{"type": "send", "request_id": "' + "r" * 65 + '", "content": "x"}', "1 to 64"),
    ('{"type": "send", "request_id": "r", "content": 5}', "wrong type"),
    ('{"type": "send", "request_id": "r", "content": "   "}', "empty"),
    ('{"type": "resume", "after_event_id": "3"}', "wrong type"),
    ('{"type": "resume", "after_event_id": true}', "wrong type"),
    ('{"type": "resume", "after_event_id": -1}', "0 or more"),
    ('{"type": "approve", "approval_id": "a", "decision": "maybe"}', "allow, allow_always or deny"),
    ('{"type": "edit", "message_id": 1}', "content"),
])
def test_malformed_frames_get_bad_request_and_the_socket_stays_open(setup, frame, needle):
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    sock.ws.send(frame)
    error = sock.until("error")
    assert error["code"] == "bad_request" and needle in error["message"]
    assert isinstance(error["event_id"], int) and error["epoch"]
    sock.send(type="ping")
    sock.until("pong")
    assert setup.messages(chat) == []


# Nothing is coerced, and nothing that would fail later gets in (CONTRACT §4 Details).
UNKEEPABLE = [
    ('{"type": "stop", "clear_queue": 1}', "wrong type"),
    ('{"type": "resume", "after_event_id": 1.0}', "wrong type"),
    ('{"type": "edit", "message_id": "12", "content": "x"}', "wrong type"),
    ('{"type": "edit", "message_id": 9223372036854775808, "content": "x"}', "outside the numbers"),
    ('{"type": "queue_discard", "message_id": -9223372036854775809}', "outside the numbers"),
    ('{"type": "regenerate", "message_id": ' + "9" * 5000 + '}', "outside the numbers"),
    ('{"type": "resume", "after_event_id": 1e400}', "outside the numbers"),
    ('{"type": "resume", "after_event_id": NaN}', "not a number JSON allows"),
    ('{"type": "resume", "after_event_id": -Infinity}', "not a number JSON allows"),
    ('{"type": "send", "request_id": "r", "content": "x\\ud800"}', "unpaired surrogate"),
    ('{"type": "send", "request_id": "r\\udc00", "content": "x"}', "unpaired surrogate"),
    ('{"type": "ping", "\\ud83d": 1}', "unpaired surrogate"),
    ('[' * 5000 + ']' * 5000, "nested deeper than 100"),
    ('{"type": "ping", "extra": ' + '[' * 150 + ']' * 150 + '}', "nested deeper than 100"),
]


def test_values_that_cannot_be_kept_get_bad_request_on_one_open_socket(setup):
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    for frame, needle in UNKEEPABLE:
        sock.ws.send(frame)
        error = sock.until("error")
        assert error["code"] == "bad_request" and needle in error["message"], (frame[:80], error)
    sock.send(type="ping")
    sock.until("pong")
    assert setup.messages(chat) == []


def test_a_binary_frame_gets_bad_request(setup):
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    sock.ws.send(b'{"type": "ping"}')
    error = sock.until("error")
    assert error["code"] == "bad_request" and "text" in error["message"]
    sock.send(type="ping")
    sock.until("pong")


def test_approve_with_a_lone_surrogate_is_refused_and_the_approval_still_waits(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.tool_call(0, "c1", "guarded", '{"text": "x"}')], [S.text("ok")])
    sock, watcher = setup.socket(chat), setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    ask = sock.until("approval_required")
    for arguments in ({"text": "\ud800"}, '{"text": "\\ud800"}'):
        sock.send(type="approve", approval_id=ask["approval_id"], decision="allow", arguments=arguments)
        error = sock.until("error")
        assert error["code"] == "bad_request" and "unpaired surrogate" in error["message"], error
    sock.send(type="approve", approval_id=ask["approval_id"], decision="deny", reason="no \udfff")
    assert sock.until("error")["code"] == "bad_request"
    for s in (sock, watcher):
        s.send(type="ping")
        s.until("pong")
    sock.send(type="approve", approval_id=ask["approval_id"], decision="allow", arguments={"text": "fine \U0001F600"})
    assert sock.until("turn_end")["status"] == "completed"
    assert json.loads(sock.of("tool_end")[0]["output"].splitlines()[-1]) == {"echo": "fine \U0001F600"}
    assert watcher.until("turn_end")["status"] == "completed"


def test_unknown_ids_get_not_found_and_change_nothing(setup):
    chat = setup.chat(title="t")
    setup.fake.enqueue([S.text("answer")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="q")
    sock.until("turn_end")
    before = setup.messages(chat)
    for frame in ({"type": "edit", "message_id": 999999, "content": "x"},
                  {"type": "regenerate", "message_id": 999999},
                  {"type": "queue_discard", "message_id": 999999},
                  {"type": "approve", "approval_id": "nope", "decision": "allow"}):
        sock.send(**frame)
        assert sock.until("error")["code"] == "not_found"
    sock.send(type="regenerate", message_id=before[0]["id"])  # a user message is not a reply
    assert sock.until("error")["code"] == "bad_request"
    sock.send(type="send", request_id="r2", content="with file", attachments=["file_missing"])
    assert sock.until("error")["code"] == "not_found"
    assert setup.messages(chat) == before


def test_frame_over_one_mib_closes_with_1009(setup):
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    sock.send(type="send", request_id="big", content="x" * (1 << 20))
    with pytest.raises(ConnectionClosed) as info:
        sock.recv(timeout=10)
    assert info.value.rcvd.code == 1009
    assert setup.messages(chat) == []


def test_unknown_chat_closes_with_4404(setup):
    sock = Socket(setup.server, "c_doesnotexist")
    with pytest.raises(ConnectionClosed) as info:
        sock.recv(timeout=10)
    assert info.value.rcvd.code == 4404


def test_deleted_chat_closes_with_4404(setup):
    chat = setup.chat(title="t")
    assert setup.api.delete(f"/api/chats/{chat}").status == 204
    sock = setup.socket(chat)
    with pytest.raises(ConnectionClosed) as info:
        sock.recv(timeout=10)
    assert info.value.rcvd.code == 4404


def test_continue_with_nothing_to_continue_is_refused(setup):
    chat = setup.chat(title="t")
    sock = setup.socket(chat)
    sock.send(type="continue")
    assert sock.until("error")["code"] == "bad_request"


def _raw_upgrade(port, token, path):
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    raw.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                 f"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {token}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += raw.recv(4096)
    assert head.startswith(b"HTTP/1.1 101")
    return raw


def test_silent_client_is_closed_after_a_missed_ping(setup_with):
    s = setup_with({"NUMI_WS_PING_INTERVAL": "0.3"})
    chat = s.chat(title="t")
    raw = _raw_upgrade(s.server.port, s.server.token, f"/ws/{chat}")
    # Never answer: the server pings, gets no pong, closes. recv() then sees EOF.
    received = b""
    while True:
        chunk = raw.recv(4096)
        if not chunk:
            break
        received += chunk
    assert b"\x89" in received  # it did ping (opcode 0x9) before giving up
    raw.close()


def test_a_client_that_never_reads_does_not_slow_the_turn(setup_with):
    s = setup_with({"NUMI_WS_SEND_TIMEOUT": "1"})
    chat = s.chat(title="t")
    stalled = _raw_upgrade(s.server.port, s.server.token, f"/ws/{chat}")
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.fake.enqueue([S.blast(20000, "token {i} padding padding padding ")])
    reader = s.socket(chat)
    reader.send(type="send", request_id="r1", content="go")
    assert reader.until("turn_end", timeout=120)["status"] == "completed"
    assert s.messages(chat)[-1]["content"] == reader.text()
    stalled.close()


def test_locked_database_refuses_send_clearly_and_loses_nothing(setup_with):
    import sqlite3

    s = setup_with({"NUMI_DB_BUSY_TIMEOUT_MS": "200"})
    chat = s.chat(title="t")
    s.fake.enqueue([S.text("first answer")])
    sock = s.socket(chat)
    sock.send(type="send", request_id="r1", content="saved before the lock")
    sock.until("turn_end")
    before = s.messages(chat)
    holder = sqlite3.connect(s.server.data_dir / "numi.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        sock.send(type="send", request_id="r2", content="during the lock")
        error = sock.until("error")
        assert error["code"] == "db_busy" and "again" in error["message"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert s.messages(chat) == before
    sock.send(type="send", request_id="r2", content="during the lock")
    assert sock.until("accepted", request_id="r2")["queued"] is False
    assert sock.until("turn_end")["status"] == "completed"
    assert [m["content"] for m in s.messages(chat)][:2] == [m["content"] for m in before]


def test_a_bad_resume_point_in_the_url_is_refused_clearly(setup):
    chat = setup.chat(title="t")
    for value in ("-3", "%C2%B2", "%D9%A3", "1e3", "99999999999999999999"):  # "²" and "٣" are digits too
        sock = setup.socket(chat, query=f"after_event_id={value}")
        sock.send(type="ping")  # a first frame: the socket starts at once
        error = sock.until("error")
        assert error["code"] == "bad_request" and "after_event_id" in error["message"], value
        sock.until("pong")
