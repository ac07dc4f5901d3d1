"""What the shell needs to know about turns, read from the backend in this process.

Subscribes to backend/app_events.py (the same publisher `/ws/_app` uses), so the
registry needs no hook: a chat's `running` going true → false is a finished
turn. Approvals are not chat-level state, so while a chat runs this also follows
that chat's event hub for `approval_required` (polled: see _follow). Callbacks run on this module's
threads, never on a turn's.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

log = logging.getLogger(__name__)


class TurnWatcher:
    def __init__(self, registry, on_count: Callable[[int], None],
                 on_finished: Callable[[dict], None], on_approval: Callable[[dict, dict], None]):
        self.registry = registry
        self.on_count, self.on_finished, self.on_approval = on_count, on_finished, on_approval
        self._running: dict[str, dict] = {}  # chat id -> last chat dict seen running
        self._followed: dict[str, threading.Event] = {}
        self._sub = None
        self._thread = threading.Thread(target=self._run, name="desktop-turns", daemon=True)

    def start(self) -> None:
        self._sub = self.registry.app_events.subscribe()
        self._thread.start()

    def running_count(self) -> int:
        return len(self.registry.running_chat_ids())

    def stop(self) -> None:
        if self._sub is not None:
            self.registry.app_events.unsubscribe(self._sub)
        for stop in list(self._followed.values()):
            stop.set()

    def _run(self) -> None:
        while True:
            frames = self._sub.take()
            if not frames:
                return  # closed: the app is shutting down
            for frame in frames:
                try:
                    self._apply(frame)
                except Exception:
                    log.exception("desktop: could not handle %s", frame.get("type"))

    def _apply(self, frame: dict) -> None:
        if frame.get("type") != "chat_changed":
            return
        chat = frame["chat"]
        cid = chat["id"]
        was = cid in self._running
        if chat.get("running"):
            self._running[cid] = chat
            if not was:
                self._follow(cid, chat)
                self.on_count(self.running_count())
        elif was:
            del self._running[cid]
            stop = self._followed.pop(cid, None)
            if stop is not None:
                stop.set()
            self.on_count(self.running_count())
            self.on_finished(chat)

    def _follow(self, chat_id: str, chat: dict) -> None:
        """Watch the chat's hub for approval requests while its turn runs."""
        stop = threading.Event()
        self._followed[chat_id] = stop
        from backend.turns.hub import Subscription

        hub = self.registry.hub(chat_id)
        # A cursor over the hub's log, deliberately not registered with the hub: a
        # registered subscriber counts as a window showing the chat, which would
        # stop the chat being marked unread. So this polls, twice a second.
        turn = hub.turn
        start = turn.first_event_id - 1 if turn is not None and turn.ended_at is None else hub.last_event_id
        sub = Subscription(hub, start)

        def run():
            seen: set[str] = set()
            try:
                while not stop.is_set():
                    for event in sub.pull():
                        if event.get("type") == "approval_required" and event["approval_id"] not in seen:
                            seen.add(event["approval_id"])
                            self.on_approval(self._running.get(chat_id, chat), event)
                    stop.wait(0.5)
            except Exception:
                log.exception("desktop: following chat %s failed", chat_id)

        threading.Thread(target=run, name=f"desktop-follow-{chat_id[:8]}", daemon=True).start()
