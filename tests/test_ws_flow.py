"""A socket's flow control (backend/ws_flow.py) on a real simple-websocket server over loopback.

The client side speaks WebSocket through wsproto on a plain TCP socket, so a test
decides exactly which bytes arrive in which order (a pong behind a flood).
"""
from __future__ import annotations

import re
import socket
import threading
import time

import simple_websocket
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Ping, Request, TextMessage

from backend.ws_flow import INBOX_FRAMES, Answers, Inbox, socket_selector

PING_S = 0.3


class _DaemonThread(threading.Thread):
    """simple-websocket's thread, made a daemon: a test that fails with it stuck must not hang the run."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, daemon=True, **kwargs)


class Peer:
    """A WebSocket client on a raw socket, and the simple-websocket server it talks to."""

    def __init__(self, ping_interval: float | None = PING_S):
        listener = socket.create_server(("127.0.0.1", 0))
        self.sock = socket.create_connection(listener.getsockname())
        self.server_sock, _ = listener.accept()
        listener.close()
        self.conn = WSConnection(ConnectionType.CLIENT)
        request = self.conn.send(Request(host="127.0.0.1", target="/"))
        key = re.search(rb"sec-websocket-key: (\S+)", request, re.I).group(1).decode()
        # simple-websocket reads the upgrade request from the WSGI environ, as werkzeug hands it over.
        environ = {"werkzeug.socket": self.server_sock, "HTTP_HOST": "127.0.0.1", "HTTP_UPGRADE": "websocket",
                   "HTTP_CONNECTION": "Upgrade", "HTTP_SEC_WEBSOCKET_KEY": key,
                   "HTTP_SEC_WEBSOCKET_VERSION": "13"}
        self.server = simple_websocket.Server(environ, ping_interval=ping_interval,
                                              selector_class=socket_selector(), thread_class=_DaemonThread)
        self.inbox = Inbox(self.server)
        self.next_event(AcceptConnection)

    def next_event(self, kind):
        self.sock.settimeout(5)
        while True:
            for event in self.conn.events():
                if isinstance(event, kind):
                    return event
            self.conn.receive_data(self.sock.recv(65536))

    def send(self, *events) -> None:
        self.sock.sendall(b"".join(self.conn.send(e) for e in events))

    def close(self) -> None:
        try:
            self.server.close()
        except simple_websocket.ConnectionClosed:
            pass
        self.sock.close()


def test_a_flood_is_read_only_as_fast_as_it_is_handled():
    peer = Peer(ping_interval=None)
    try:
        texts = [f"{n:04d}" + "x" * 1000 for n in range(200)]
        peer.send(*(TextMessage(t) for t in texts))
        assert peer.inbox.paused.wait(5)  # the network is no longer read: the rest stays in TCP
        # At most one read of the network (4 KiB: four of these frames) past the limit.
        assert INBOX_FRAMES <= len(peer.server.input_buffer) <= INBOX_FRAMES + 4
        assert [peer.inbox.receive(timeout=5) for _ in texts] == texts
        assert peer.server.connected
    finally:
        peer.close()


def test_a_pause_longer_than_the_ping_interval_does_not_fail_the_ping_check():
    peer = Peer()
    try:
        ping = peer.next_event(Ping)
        # The pong is sent behind a flood, so the server reaches it only after reading the flood.
        texts = [f"{n:04d}" + "x" * 1000 for n in range(100)]
        peer.send(*(TextMessage(t) for t in texts), ping.response())
        assert peer.inbox.paused.wait(5)
        time.sleep(3 * PING_S)  # the handler is slow: two ping checks fall within the pause
        assert [peer.inbox.receive(timeout=5) for _ in texts] == texts
        assert peer.server.connected
    finally:
        peer.close()


def test_a_read_paused_on_a_socket_that_closes_ends():
    peer = Peer(ping_interval=None)
    try:
        peer.send(*(TextMessage("y" * 1000) for _ in range(100)))
        assert peer.inbox.paused.wait(5)
        # What the chat socket does when its writer gives up on a client (ws.py: serve, _hang_up).
        peer.inbox.close()
        peer.server_sock.shutdown(socket.SHUT_RDWR)
        peer.server.thread.join(5)
        assert not peer.server.thread.is_alive()
    finally:
        peer.close()


def test_answers_wait_for_room_and_keep_their_order():
    woken = threading.Event()
    answers = Answers(woken.set, capacity=2)
    sent = [{"n": n} for n in range(50)]
    producer = threading.Thread(target=lambda: [answers.put(a) for a in sent])
    producer.start()
    taken, batches = [], []
    while len(taken) < len(sent):
        assert woken.wait(5)
        woken.clear()
        batch = answers.take()
        batches.append(len(batch))
        taken += batch
    producer.join(5)
    assert taken == sent
    assert max(batches) <= 2


def test_a_put_waiting_for_room_gives_up_when_the_socket_closes():
    answers = Answers(lambda: None, capacity=1)
    assert answers.put({"n": 1})
    result = []
    putter = threading.Thread(target=lambda: result.append(answers.put({"n": 2})))
    putter.start()
    answers.close()
    putter.join(5)
    assert result == [False]
    assert answers.take() == [{"n": 1}]
