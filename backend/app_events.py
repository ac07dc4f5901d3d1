"""App-wide chat events: what the chat list needs to stay live (`/ws/_app`).

Whoever changes a chat (a turn starting or ending, a title, an API edit, a
socket marking it read) calls `chat_changed(chat_id)`; every subscriber is
then given the chat as `GET /api/chats` would list it, or `chat_removed` once
it is deleted. Frames describe state, not steps, so a client that applies the
newest one per chat is right whatever it missed in between.

Producers never wait on a socket: each subscriber has its own bounded queue,
and one that fills (its client stopped reading) is emptied and handed a single
`resync` frame, which tells the client to read the list again. Answers to the
client's own frames (pong) are queued apart and never dropped: the socket's
reader waits for room instead.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Callable

from backend.store.models import Chat
from backend.store.serialize import chat_to_dict
from backend.turns.events import APP_EVENTS, make
from backend.ws_flow import Answers

log = logging.getLogger(__name__)
QUEUE_CAPACITY = 256  # frames per subscriber; far more than a person's chats change between two reads
RESYNC = make("resync", APP_EVENTS)
FOLDERS_CHANGED = make("folders_changed", APP_EVENTS)


class Subscriber:
    """One socket's queue of frames, filled by producers and drained by that socket's writer."""

    def __init__(self, capacity: int | None = None):
        self._cond = threading.Condition()
        self._frames: deque[dict] = deque()
        self._capacity = capacity or QUEUE_CAPACITY
        self._replies = Answers(self._notify)
        self.closed = False

    def put(self, frame: dict) -> None:
        with self._cond:
            if self.closed:
                return
            if len(self._frames) >= self._capacity:
                # Fallen behind: what it missed is replaced by one instruction to
                # re-read the list (which covers this frame too).
                self._frames.clear()
                self._frames.append(RESYNC)
            else:
                self._frames.append(frame)
            self._cond.notify()

    def reply(self, frame: dict) -> None:
        """Queue an answer to the client's frame, waiting while the writer is behind (its reader only)."""
        self._replies.put(frame)

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify()

    def take(self) -> list[dict]:
        """Every frame queued so far, waiting for one; [] once closed."""
        with self._cond:
            while not self._frames and not len(self._replies) and not self.closed:
                self._cond.wait()
            if self.closed:
                return []
            frames = list(self._frames)
            self._frames.clear()
        return frames + self._replies.take()

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._frames.clear()
            self._cond.notify_all()
        self._replies.close()


class AppEvents:
    """The subscriber set and the one publish call the rest of the backend uses."""

    def __init__(self, is_running: Callable[[str], bool], is_awaiting: Callable[[str], bool] = lambda _: False,
                 is_asking: Callable[[str], bool] = lambda _: False):
        # Must not take the turn registry's lock: producers may hold it while publishing.
        self._is_running, self._is_awaiting, self._is_asking = is_running, is_awaiting, is_asking
        self._lock = threading.Lock()
        self._subs: set[Subscriber] = set()

    def subscribe(self, first: dict | None = None) -> Subscriber:
        """A new subscriber; `first` is queued before any change can be, so it always leaves first."""
        sub = Subscriber()
        if first is not None:
            sub.put(first)
        with self._lock:
            self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        with self._lock:
            self._subs.discard(sub)
        sub.close()

    def chat_changed(self, chat_id: str) -> None:
        """Tell every subscriber the chat's state as it is now (call after the change is committed).

        The chat is read and queued under one lock, so frames leave in the order
        their reads happened: the last frame for a chat is never older than an
        earlier one, even when a title and a turn's end race on two threads.
        Never raises: a chat list that misses a change must not fail a turn or
        an API call (the next change, or a reconnect, brings it up to date).
        """
        try:
            with self._lock:
                if not self._subs:
                    return  # no window is listening: not even the read
                chat = Chat.get_or_none(Chat.id == chat_id)
                if chat is None or chat.deleted_at is not None:
                    frame = make("chat_removed", APP_EVENTS, chat_id=chat_id)
                else:
                    frame = make("chat_changed", APP_EVENTS, chat=chat_to_dict(
                        chat, self._is_running(chat_id), awaiting=self._is_awaiting(chat_id),
                        asking=self._is_asking(chat_id)))
                for sub in self._subs:
                    sub.put(frame)
        except Exception:
            log.exception("could not publish the change of chat %s", chat_id)

    def folders_changed(self) -> None:
        """A folder was made, changed or deleted: clients read GET /api/folders again."""
        with self._lock:
            for sub in self._subs:
                sub.put(FOLDERS_CHANGED)

    def close(self) -> None:
        """At shutdown: every subscriber's writer wakes and ends its socket."""
        with self._lock:
            subs = list(self._subs)
            self._subs.clear()
        for sub in subs:
            sub.close()
