"""Flow control for one WebSocket: bounded queues from the network to the handler and back.

A socket has three stages, each on its own thread: simple-websocket's thread
reads the network into its input list, the reader thread handles those frames
and queues answers, and the writer sends them. Every stage waits for the next
one instead of buffering without end or dropping what it holds, so a client that
sends faster than Numi answers is read more slowly (TCP pushes back on it) and
every frame is still answered, in order. A client that stops reading is dropped
by the writer's send timeout, never by a full queue.
"""
from __future__ import annotations

import selectors
import threading
from collections import deque
from typing import Callable

# Frames simple-websocket may hold that the reader has not taken yet; past this the
# network is not read. A frame is at most 1 MiB, so this also bounds the memory a
# flooding client can make one socket hold.
INBOX_FRAMES = 16
# Answers (pong, errors for frames) waiting for the writer; past this the reader waits.
ANSWERS_CAPACITY = 256
# simple-websocket wakes a blocked receive() before it marks the connection
# closed when it refuses a too-big frame, so a receive without a timeout can
# sleep through that close; the reader looks again this often, and so does
# every stage here that waits for another.
CLOSED_CHECK_S = 1.0


def socket_selector() -> type[selectors.BaseSelector]:
    """The selector simple-websocket waits on for pings: one that holds no file descriptor.

    Its default (epoll, kqueue) costs a descriptor per socket; poll() costs none
    and, unlike select(), takes descriptors above 1024. Windows has only select.
    """
    return getattr(selectors, "PollSelector", selectors.SelectSelector)


class Answers:
    """Answers to one socket's frames, waiting for its writer; `put` waits while the queue is full."""

    def __init__(self, wake: Callable[[], None], capacity: int = ANSWERS_CAPACITY):
        self._wake = wake  # tells the writer there is something to send
        self._capacity = capacity
        self._cond = threading.Condition()
        self._items: deque[dict] = deque()
        self.closed = False

    def put(self, answer: dict) -> bool:
        """Queue `answer` once there is room; False when the socket closed meanwhile."""
        with self._cond:
            while len(self._items) >= self._capacity and not self.closed:
                self._cond.wait(CLOSED_CHECK_S)
            if self.closed:
                return False
            self._items.append(answer)
        self._wake()
        return True

    def take(self) -> list[dict]:
        """Everything queued, oldest first (the writer's side); makes room for the reader."""
        with self._cond:
            items = list(self._items)
            self._items.clear()
            self._cond.notify_all()
        return items

    def __len__(self) -> int:
        return len(self._items)

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()


class Inbox:
    """The client's frames, read from the network only while few wait to be handled.

    Installs itself between simple-websocket and the TCP socket: its thread's
    reads wait while INBOX_FRAMES frames are queued, and sends from it and from
    the writer are serialised (simple-websocket's own send takes no lock).
    """

    def __init__(self, ws, limit: int = INBOX_FRAMES):
        self._ws = ws
        self._limit = limit
        self._room = threading.Condition()
        self.paused = threading.Event()  # set while the network is not read (the client is ahead)
        self.closed = False
        ws.sock = _GatedSocket(ws.sock, self)

    def receive(self, timeout: float) -> str | bytes | None:
        """The next frame (None after `timeout`), as simple-websocket's receive."""
        frame = self._ws.receive(timeout=timeout)
        if frame is not None:
            with self._room:
                self._room.notify_all()
        return frame

    def wait_for_room(self) -> None:
        """Called by simple-websocket's thread before each read of the network."""
        if self._has_room():
            return
        self.paused.set()
        with self._room:
            while not self._has_room() and not self.closed and self._ws.connected:
                self._room.wait(CLOSED_CHECK_S)
        self.paused.clear()
        # The client's pong may sit in the data not read while this waited: a pause of
        # ours is not silence of the client's, so it must not fail the next ping check.
        self._ws.pong_received = True

    def _has_room(self) -> bool:
        return len(self._ws.input_buffer) < self._limit

    def close(self) -> None:
        with self._room:
            self.closed = True
            self._room.notify_all()


class _GatedSocket:
    """The TCP socket as simple-websocket sees it: gated reads, serialised sends."""

    def __init__(self, raw, inbox: Inbox):
        self._raw = raw
        self._inbox = inbox
        self._send_lock = threading.Lock()

    def recv(self, size: int) -> bytes:
        self._inbox.wait_for_room()
        return self._raw.recv(size)

    def send(self, data) -> int:
        with self._send_lock:
            self._raw.sendall(data)
        return len(data)

    def __getattr__(self, name):
        return getattr(self._raw, name)
