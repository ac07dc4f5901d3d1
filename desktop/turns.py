"""What the shell needs to know about turns, read from the backend in this process.

Subscribes to backend/app_events.py (the same publisher `/ws/_app` uses), so the
registry needs no hook: a chat's `running` going true → false is a finished
turn, and its `awaiting_approval` or `awaiting_answer` turning true is something to
ask the person (the registry says which tool asks, or what the model asks). Callbacks run on this module's thread,
never on a turn's.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

log = logging.getLogger(__name__)


class TurnWatcher:
    def __init__(self, registry, app_events, on_count: Callable[[int], None],
                 on_finished: Callable[[dict], None], on_approval: Callable[[dict, dict], None],
                 on_question: Callable[[dict, dict], None] = lambda chat, question: None):
        self.registry, self.app_events = registry, app_events
        self.on_count, self.on_finished, self.on_approval = on_count, on_finished, on_approval
        self.on_question = on_question
        self._running: dict[str, dict] = {}  # chat id -> last chat dict seen running
        self._asked: dict[str, set[str]] = {}  # chat id -> approval and question ids already notified
        self._sub = None
        self._thread = threading.Thread(target=self._run, name="desktop-turns", daemon=True)

    def start(self) -> None:
        self._sub = self.app_events.subscribe()
        self._thread.start()

    def running_count(self) -> int:
        return len(self.registry.running_chat_ids())

    def stop(self) -> None:
        if self._sub is not None:
            self.app_events.unsubscribe(self._sub)

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
                self.on_count(self.running_count())
            if chat.get("awaiting_approval") or chat.get("awaiting_answer"):
                self._ask(cid, chat)
        elif was:
            del self._running[cid]
            self._asked.pop(cid, None)
            self.on_count(self.running_count())
            self.on_finished(chat)

    def _ask(self, chat_id: str, chat: dict) -> None:
        """One notification per approval request or question, however many frames repeat it."""
        asked = self._asked.setdefault(chat_id, set())
        for pending in self.registry.pending_approvals(chat_id):
            if pending["approval_id"] not in asked:
                asked.add(pending["approval_id"])
                self.on_approval(chat, pending)
        for question in self.registry.pending_questions(chat_id):
            if question["question_id"] not in asked:
                asked.add(question["question_id"])
                self.on_question(chat, question)
