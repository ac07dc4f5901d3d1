"""The turn registry: every chat's running turn, its queue and its event hub.

Turns run on worker threads owned by the process; sockets only subscribe to a
chat's hub. One worker per busy chat runs its turn, then the queued messages
in order, then exits. Commands come from any socket and answer at once; the
slow work happens on the worker. "Summarize now" is a command of its chat too:
it runs on the request that asked for it, messages sent meanwhile queue behind
it, and Stop or quitting cancels it. What a command does (start, queue, refuse)
is decided by queue_rules.py; this module holds the lock, runs the threads,
saves through backend/store/history.py and publishes.
"""
from __future__ import annotations

import logging
import threading

from backend.core import agent
from backend.core.cancel import CancelToken
from backend.core.status import COMPLETE, COMPLETED, CUT_SHORT, QUEUED, STREAMING, TurnOutcome
from backend.store import chats, drafts, history
from backend.store.compactions import Checkpoint
from backend.store.db import db
from backend.store.serialize import file_to_dict, files_by_id, message_attachments, message_preview
from backend.turns import features, next_request, vision_check
from backend.turns.compare import CompareTurn, compared_models
from backend.turns.hub import ChatHub
from backend.turns.queue_rules import ChatQueue, Queue, Refuse, Start
from backend.turns.runner import Turn
from backend.turns.services import TurnServices
from backend.turns.title import maybe_title

log = logging.getLogger(__name__)
FLUSH_INTERVAL = 0.5  # partial text reaches the disk at least this often (the contract: once a second)
PREVIEW_CHARS = 120
TRIM_EVERY = 60  # flush ticks (30 s) between sweeps that drop expired turns' event logs


class CommandError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def _refuse(decision) -> None:
    """Raise a rule's refusal as the command's error; any other decision passes."""
    if isinstance(decision, Refuse):
        raise CommandError(decision.code, decision.message)


class _Summary:
    """A running "Summarize now": how to cancel it, and when it has ended."""

    def __init__(self):
        self.cancel = CancelToken()
        self.done = threading.Event()


class _ChatState:
    def __init__(self, hub: ChatHub):
        self.hub = hub
        self.turn: Turn | CompareTurn | None = None
        self.thread: threading.Thread | None = None
        self.rules = ChatQueue()  # running or not, and the queue: changed under the registry's lock
        self.summary: _Summary | None = None  # the running "Summarize now", while one runs


class TurnRegistry:
    """`services` are the runtime's (it builds them, and closes the tool pool and tool sets)."""

    def __init__(self, config, services: TurnServices):
        self.config = config
        self.services = services
        self._chat_changed = services.chat_changed  # the chat list's row changed (running, unread …)
        self._lock = threading.RLock()
        self._chats: dict[str, _ChatState] = {}
        self._closing = False
        self._stopped = threading.Event()
        self._flusher = threading.Thread(target=self._flush_forever, name="flusher", daemon=True)

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        with db.connection_context():
            # Rows left mid-write by a process that died: what was saved is kept, marked as cut off.
            n = history.recover_after_crash()
        if n:
            log.info("marked %d messages from the last run as interrupted", n)
        self._flusher.start()

    def shutdown(self, timeout: float) -> None:
        """Refuse new turns, stop running ones like Stop does, wait for them to save."""
        with self._lock:
            self._closing = True
            states = list(self._chats.values())
        threads, summaries = [], []
        for state in states:
            if state.turn is not None:
                state.turn.cancel.cancel("shutdown")
            if state.thread is not None:
                threads.append(state.thread)
            if state.summary is not None:
                state.summary.cancel.cancel("shutdown")
                summaries.append(state.summary.done)
        deadline = threading.Event()
        timer = threading.Timer(timeout, deadline.set)
        timer.start()
        for thread in threads:
            while thread.is_alive() and not deadline.is_set():
                thread.join(0.1)
        for done in summaries:
            while not done.wait(0.1) and not deadline.is_set():
                pass
        timer.cancel()
        self._stopped.set()
        if self._flusher.is_alive():
            self._flusher.join(1.0)

    def _flush_forever(self) -> None:
        ticks = 0
        with db.connection_context():
            while not self._stopped.wait(FLUSH_INTERVAL):
                with self._lock:
                    partials = [p for s in self._chats.values() if s.turn for p in s.turn.partials]
                    idle_hubs = [s.hub for s in self._chats.values() if s.turn is None]
                for partial in partials:
                    try:
                        partial.flush()
                    except Exception:
                        log.exception("could not save partial text")
                ticks += 1
                if ticks % TRIM_EVERY == 0:
                    for hub in idle_hubs:
                        hub.trim()

    # --- lookups --------------------------------------------------------------------

    def _state(self, chat_id: str) -> _ChatState:
        with self._lock:
            state = self._chats.get(chat_id)
            if state is None:
                state = self._chats[chat_id] = _ChatState(ChatHub(chat_id, self.config.epoch))
            return state

    def hub(self, chat_id: str) -> ChatHub:
        return self._state(chat_id).hub

    def running_chat_ids(self) -> set[str]:
        with self._lock:
            return {cid for cid, s in self._chats.items() if s.turn is not None}

    def is_running(self, chat_id: str) -> bool:
        """Lock-free on purpose: app_events calls it while this registry's lock may be held elsewhere."""
        state = self._chats.get(chat_id)
        return state is not None and state.turn is not None

    def pending_approvals(self, chat_id: str) -> list[dict]:
        """The chat's unanswered approval requests ({"approval_id", "name"}); lock-free like is_running."""
        state = self._chats.get(chat_id)
        turn = state.turn if state is not None else None
        return turn.approvals.pending() if turn is not None else []

    def is_awaiting(self, chat_id: str) -> bool:
        return bool(self.pending_approvals(chat_id))

    def pending_questions(self, chat_id: str) -> list[dict]:
        """The chat's unanswered questions (as `question` events' fields); lock-free like is_running."""
        state = self._chats.get(chat_id)
        turn = state.turn if state is not None else None
        if turn is None:
            return []
        return [w for part in turn.parts.values() for w in part.waiting()]

    def is_asking(self, chat_id: str) -> bool:
        return bool(self.pending_questions(chat_id))

    def open_chat(self, chat_id: str) -> bool:
        """A window opens the chat: False when there is no such chat; it is read now."""
        chat = chats.live(chat_id)
        if chat is None:
            return False
        if chat.unread and chats.mark_read(chat_id):
            self._chat_changed(chat_id)
        return True

    def queue_items(self, chat_id: str) -> list[dict]:
        state = self._state(chat_id)
        with self._lock:
            items = state.rules.items()
        rows = history.by_ids([i for i, _ in items])
        return [{"message_id": i, "preview": message_preview(rows[i], PREVIEW_CHARS), "steer": steer} for i, steer in items if i in rows]

    # --- commands ---------------------------------------------------------------------

    def send(self, chat_id: str, request_id: str, content: str, attachments: list[str],
             steer: bool = False, research: bool = False, compare: list[str] | None = None,
             image: bool = False) -> dict:
        """A user message (CONTRACT §4 `send`); `compare`: the models that each answer it (§10);
        `image`: its words are drawn (§13). The frame's checks (protocol.py) come first."""
        state = self._state(chat_id)
        with self._lock:
            existing = history.by_request(chat_id, request_id)
            if existing is not None:
                return {"request_id": request_id, "message_id": existing.id,
                        "queued": existing.status == QUEUED, "attachments": message_attachments(existing),
                        "duplicate": True}
            decision = state.rules.send(self._closing, steer)
            _refuse(decision)
            unknown = [m for m in compare or () if chats.model(m) is None]
            if unknown:
                raise CommandError("bad_request", f"There is no model {unknown[0]!r} to compare; pick the "
                                                  f"compare's models from the model picker.")
            rows = files_by_id(attachments)
            missing = [f for f in attachments if f not in rows]
            if missing:
                raise CommandError("not_found", f"No attached file with id {missing[0]!r}. Attach it again.")
            # No model anywhere can see an attached image: refused before the message is saved,
            # so the draft stays and nothing fails later (the composer says the same).
            if blocked := vision_check.refusal([rows[f] for f in attachments]):
                raise CommandError("vision_unsupported", blocked)
            # Shown with the message by every window, as GET …/messages lists it.
            files = [file_to_dict(rows[f]) for f in attachments]
            queued = not isinstance(decision, Start)
            # A research request says so on its message: its turn starts when the queue reaches it.
            # So does a compare (its models) and an image request.
            parts = {**({"attachments": attachments} if attachments else {}), **({"research": True} if research else {}),
                     **({"compare": list(compare)} if compare else {}), **({"image": True} if image else {})}
            fields = dict(role="user", content=content, request_id=request_id, content_parts=parts or None)
            with db.atomic():
                row = history.enqueue(chat_id, **fields) if queued else history.append_to_branch(chat_id, **fields)
                chats.touch(chat_id)
                drafts.drop(chat_id)  # the draft was sent (docs/PROTOCOL.md, "Drafts")
            steer = isinstance(decision, Queue) and decision.steer  # Queue: the one decision not Start here
            # Queued behind a summary there is no turn yet.
            turn_id = state.turn.id if queued and state.turn is not None else None
            state.hub.publish("accepted", turn_id, request_id=request_id,
                              message_id=row.id, queued=queued, attachments=files, steer=steer)
            if queued:
                state.rules.enqueue(row.id, steer)
                self._publish_queue(chat_id)
                self._chat_changed(chat_id)  # new activity moves it up the list
            else:
                self._start(state, chat_id, row.id)
            return {"request_id": request_id, "message_id": row.id, "queued": queued, "attachments": files,
                    "duplicate": False}

    def stop(self, chat_id: str, clear_queue: bool = False) -> bool:
        """Stop the chat's turn, or the summary being written; False when neither runs."""
        state = self._state(chat_id)
        with self._lock:
            dropped = state.rules.clear() if clear_queue else []
            if dropped:
                history.discard_queued(dropped)
                self._publish_queue(chat_id)
            turn, summary = state.turn, state.summary
        if summary is not None:
            summary.cancel.cancel("stopped")
        if turn is None:
            return summary is not None
        turn.cancel.cancel()
        return True

    def stop_chat(self, chat_id: str, wait: float = 0.0) -> bool:
        """Stop the chat's turn or summary and drop its queue; True once neither runs (waiting up to `wait` s)."""
        self.stop(chat_id, clear_queue=True)
        state = self._state(chat_id)
        thread, summary = state.thread, state.summary
        if summary is not None and wait > 0:
            summary.done.wait(wait)
        if thread is not None and wait > 0:
            thread.join(wait)
        return state.turn is None and state.summary is None

    def is_summarizing(self, chat_id: str) -> bool:
        """Whether a "Summarize now" runs in the chat; lock-free like is_running."""
        state = self._chats.get(chat_id)
        return state is not None and state.summary is not None

    def compact(self, chat_id: str) -> Checkpoint:
        """The chat's "Summarize now": all but the newest turn summarized and saved, on the asking
        request's thread, as the chat's one command. Refused (CommandError) while a turn or
        another summary runs there or Numi quits; messages sent meanwhile queue, and the first
        of them starts its turn when it ends. Other chats' summaries run beside it. The summary
        is the compaction feature's (`commands["compact"]`); one that cannot be made raises as
        next_request.prepare and that command do."""
        state = self._state(chat_id)
        try:
            summarize = features.command("compact")
        except LookupError:
            raise CommandError("bad_request", "Summaries are turned off in this build of Numi.") from None
        with self._lock:
            _refuse(state.rules.summarize(self._closing))
            state.rules.start_summary()
            summary = state.summary = _Summary()
        try:
            chat = chats.get(chat_id)
            assert chat is not None  # the command is for a chat that exists (api/context.py checks)
            model, toolset, plan = next_request.prepare(self.services, chat)
            return summarize(chat, model, toolset, plan, self.services, summary.cancel)
        finally:
            try:
                with self._lock:
                    state.summary = None
                    following = state.rules.summary_ended(self._closing)
                    if isinstance(following, Start):
                        # As after a turn: the queued message joins the branch as its turn starts.
                        assert following.message_id is not None  # the queue's oldest message
                        attached = history.attach(chat_id, following.message_id)
                        self._start(state, chat_id, attached.id if attached else None)
                        self._publish_queue(chat_id)
            finally:
                summary.done.set()

    def edit(self, chat_id: str, message_id: int, content: str, request_id: str | None = None) -> None:
        """A new version of a user message, a sibling of it, answered by a new turn (CONTRACT §5)."""
        state = self._state(chat_id)
        with self._lock:
            self._check_idle(state)
            if request_id and history.by_request(chat_id, request_id) is not None:
                return  # the same edit again: that version exists already
            row = self._message(chat_id, message_id)
            if row.role != "user":
                raise CommandError("bad_request", "Only your own messages can be edited.")
            new = history.append(chat_id, row.parent_id, role="user", content=content,
                                 content_parts=row.content_parts, request_id=request_id)
            self._branched(state, new)
            self._start(state, chat_id, new.id)

    def regenerate(self, chat_id: str, message_id: int, model_id: str | None = None,
                   request_id: str | None = None) -> None:
        """A new version of a reply: a sibling of its turn's first reply, by the chat's model or by
        `model_id` for this reply only."""
        state = self._state(chat_id)
        with self._lock:
            self._check_idle(state)
            if request_id and history.by_request(chat_id, request_id) is not None:
                return
            row = self._message(chat_id, message_id)
            if model_id and chats.model(model_id) is None:
                raise CommandError("not_found", f"There is no model {model_id!r}; pick one of the models in Settings.")
            if row.role != "assistant":
                raise CommandError("bad_request", "Only a reply can be regenerated; pick an assistant message.")
            user = history.turn_user_message(row)
            if user is None:
                raise CommandError("bad_request", "This reply has no message before it to answer again.")
            # The reply's row exists from now on, so a repeated request_id finds this version.
            reply = history.append(chat_id, user.id, role="assistant", status=STREAMING,
                                   model_id=model_id, request_id=request_id)
            self._branched(state, reply)
            self._start(state, chat_id, user.id, model_id=model_id, reply_id=reply.id)

    def continue_(self, chat_id: str) -> None:
        """Carry on where the active branch stopped: a cut-off reply, or a message left unanswered."""
        state = self._state(chat_id)
        with self._lock:
            self._check_idle(state)
            leaf = history.active_leaf(chat_id)
            last = history.by_ids([leaf]).get(leaf) if leaf is not None else None
            if last is None:
                raise CommandError("bad_request", "There is nothing to continue in this chat yet.")
            cut = last.status in CUT_SHORT
            if last.role == "assistant" and cut and (last.content or last.reasoning_content) and not last.tool_calls:
                self._start(state, chat_id, None, continue_message_id=last.id)
            elif last.role == "user":
                history.save(last.id, status=COMPLETE)
                self._start(state, chat_id, last.id)
            elif last.role == "tool" or cut or (last.error or {}).get("code") == "limit":
                self._start(state, chat_id, None)  # a new step from the history as it stands
            else:
                raise CommandError("bad_request", "The last reply is complete; there is nothing to continue.")

    def switch(self, chat_id: str, message_id: int) -> int:
        """Make the branch through the message active (POST …/active); the new leaf's id."""
        state = self._state(chat_id)
        with self._lock:
            self._check_idle(state)
            try:
                leaf = history.switch(chat_id, message_id)
            except history.NotInChat:
                raise CommandError("not_found", f"No message {message_id} in this chat. "
                                                f"It may have been deleted.") from None
            state.hub.publish("active_changed", None, leaf_id=leaf)
        return leaf

    def approve(self, chat_id: str, approval_id: str, decision: str, reason: str = "",
                arguments: str | None = None) -> None:
        turn = self._state(chat_id).turn
        edited = None if decision == "deny" else arguments
        if turn is None or not turn.approvals.answer(approval_id, agent.Decision(decision, reason, edited)):
            raise CommandError("not_found", "That approval is no longer waiting (it was answered, "
                                            "or its turn ended).")

    def answer(self, chat_id: str, question_id: str, answers: dict | None, dismissed: bool) -> None:
        """Answer or dismiss a question of the running turn (CONTRACT §7 `answer`; backend/features/questions/)."""
        gone = CommandError("not_pending", "That question is no longer waiting for an answer (it was "
                                           "answered or dismissed, or its reply ended).")
        self.turn_command(chat_id, "answer", gone, question_id=question_id, answers=answers, dismissed=dismissed)

    def resend_questions(self, chat_id: str) -> None:
        """Publish the chat's waiting questions again, as new events (a window resumed)."""
        turn = self._state(chat_id).turn
        if turn is not None:
            for part in turn.parts.values():
                part.resend()

    def execute_plan(self, chat_id: str, plan_id: str, request_id: str | None = None) -> None:
        """Carry out a plan (CONTRACT §7; backend/features/plans/): a turn runs from a user message
        saying to go ahead, which `accepted` announces."""
        self.feature_turn(chat_id, "execute_plan", request_id, plan_id=plan_id)

    def turn_command(self, chat_id: str, name: str, gone: CommandError, **args) -> None:
        """A command for the running turn that a feature's share of it carries out (a question's
        answer); `gone` when no running turn takes it."""
        turn = self._state(chat_id).turn
        parts = [p for p in turn.parts.values() if name in p.commands] if turn is not None else []
        if not parts:
            raise gone
        refused = None
        for part in parts:  # a compare's columns each have one: the one it is for takes it
            try:
                part.command(name, **args)
                return
            except features.Refused as exc:
                refused = exc
        assert refused is not None
        raise CommandError(refused.code, refused.message) from None

    def feature_turn(self, chat_id: str, name: str, request_id: str | None = None, **args) -> None:
        """A feature's command that adds a user message and starts its turn (a plan's execution).

        The feature's `commands[name](chat_id, request_id, check_idle, **args)` checks what it
        needs (calling `check_idle()` where the chat must be free), saves the message and returns
        it with the fields it adds to `accepted`; it raises features.Refused when it cannot."""
        state = self._state(chat_id)
        with self._lock:
            if request_id and history.by_request(chat_id, request_id) is not None:
                return  # the same press again: it is being carried out already
            try:
                row, extra = features.command(name)(chat_id, request_id, lambda: self._check_idle(state), **args)
            except features.Refused as exc:
                raise CommandError(exc.code, exc.message) from None
            state.hub.publish("accepted", None, request_id=row.request_id, message_id=row.id, queued=False,
                              attachments=[], **extra)
            self._start(state, chat_id, row.id)  # tells the chat list: running

    def queue_discard(self, chat_id: str, message_id: int) -> None:
        state = self._state(chat_id)
        with self._lock:
            _refuse(state.rules.discard(message_id))
            history.discard_queued([message_id])
            self._publish_queue(chat_id)

    # --- internals --------------------------------------------------------------------

    def _check_idle(self, state: _ChatState) -> None:
        _refuse(state.rules.check_idle(self._closing))

    def _message(self, chat_id: str, message_id: int) -> history.Row:
        try:
            row = history.message(chat_id, message_id)
        except history.NotInChat:
            row = None
        if row is None or row.status == QUEUED:
            raise CommandError("not_found", f"No message {message_id} in this chat. It may have been deleted.")
        return row

    def _branched(self, state: _ChatState, row: history.Row) -> None:
        """Tell every window a new version now heads the active branch (it replaces its sibling there).

        `model_id`: the model a "regenerate with" named, so a window names it on the reply
        while it streams (null: the chat's model)."""
        state.hub.publish("branched", None, message_id=row.id, parent_id=row.parent_id, role=row.role,
                          content=row.content, attachments=message_attachments(row),
                          versions=history.versions([row])[row.id], model_id=row.model_id)

    def _steering_of(self, chat_id: str):
        """What a turn of the chat calls at each step for the steering messages sent meanwhile."""
        return lambda: self.take_steering(chat_id)

    def take_steering(self, chat_id: str) -> list[int]:
        """The steering messages waiting for the running turn, off the queue (oldest first)."""
        state = self._state(chat_id)
        with self._lock:
            taken = state.rules.take_steering()
        if taken:
            self._publish_queue(chat_id)
        return taken

    def _publish_queue(self, chat_id: str) -> None:
        self._state(chat_id).hub.publish("queue", None, items=self.queue_items(chat_id))

    def _start(self, state: _ChatState, chat_id: str, user_message_id: int | None,
               continue_message_id: int | None = None, model_id: str | None = None,
               reply_id: int | None = None) -> None:
        state.rules.start()
        state.turn = self._new_turn(state, chat_id, user_message_id, continue_message_id, model_id, reply_id)
        state.thread = threading.Thread(target=self._work, args=(state, chat_id), name=f"turn-{chat_id}",
                                        daemon=True)
        state.thread.start()
        self._chat_changed(chat_id)  # running

    def _new_turn(self, state: _ChatState, chat_id: str, user_message_id: int | None,
                  continue_message_id: int | None = None, model_id: str | None = None,
                  reply_id: int | None = None) -> Turn | CompareTurn:
        """The turn answering the message: a compare's when it was sent with one (CONTRACT §10) and
        this is no new version of one of its replies (a regenerate, a continue)."""
        one_reply = continue_message_id is not None or model_id is not None or reply_id is not None
        models = [] if one_reply else compared_models(user_message_id)
        if models:
            assert user_message_id is not None
            return CompareTurn(self.services, state.hub, chat_id, user_message_id, models)
        return Turn(self.services, state.hub, chat_id, user_message_id, self._steering_of(chat_id),
                    continue_message_id, model_id=model_id, reply_id=reply_id)

    def _work(self, state: _ChatState, chat_id: str) -> None:
        with db.connection_context():
            while True:
                turn = state.turn
                assert turn is not None  # set before this thread starts, and for each turn it runs next
                status = turn.run()
                self._after_turn(chat_id, turn, status)
                with self._lock:
                    following = state.rules.turn_ended(self._closing)
                    if not isinstance(following, Start):
                        state.turn = state.thread = None
                        turn.publish("turn_end", status=status)
                        self._chat_changed(chat_id)  # not running; maybe unread
                        return
                    # A queued message keeps the id `accepted` gave it (CONTRACT: turn_start's
                    # user_message_id is that id) and joins the branch as its turn starts.
                    assert following.message_id is not None  # the queue's oldest message
                    attached = history.attach(chat_id, following.message_id)
                    state.turn = self._new_turn(state, chat_id, attached.id if attached else None)
                    turn.publish("turn_end", status=status)
                    self._publish_queue(chat_id)
                    self._chat_changed(chat_id)  # still running, newer activity

    def _after_turn(self, chat_id: str, turn: Turn | CompareTurn, status: TurnOutcome) -> None:
        if turn.hub.subscriber_count == 0:
            chats.mark_unread(chat_id)
        if status == COMPLETED and turn.final_message_id is not None and not self._closing:
            threading.Thread(target=maybe_title, args=(self.services, turn.hub, chat_id, turn.model_id),
                             name="title", daemon=True).start()
