"""The `ask_user` tool and a turn's questions waiting for the person (CONTRACT §7).

A question waits inside its tool call, on the turn's thread, as an approval does: the
call's result is the answer, a dismissal, or why none came (Stop, Numi closing, or the
time limit the person set in Settings — there is none unless they set one). Sockets
answer it through the registry; a socket that resumes is sent the waiting questions
again, as new events.
"""
from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from backend.core.tools import Tool, ToolRegistry
from backend.core.types import ToolCall, ToolSpec
from backend.features.questions import items as qi
from backend.features.questions.items import NAME, BadAnswer
from backend.store import settings
from backend.turns.features import Refused, TurnPart

SETTING = "questions"
DEFAULTS = {"timeout_s": None}  # null: a question waits until answered, dismissed or stopped
MAX_TIMEOUT_S = 7 * 24 * 3600
SPEC = ToolSpec(name=NAME, description=qi.DESCRIPTION, parameters=qi.PARAMETERS)


def timeout_s() -> int | None:
    """The person's limit on waiting for an answer, in seconds; None when they set none."""
    value = settings.get_object(SETTING).get("timeout_s")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def ask_user_tool(ask: Callable[[dict, object], str] | None = None) -> Tool:
    """The tool as offered; a turn binds it to its own questions (`Questions.tool`)."""
    def unbound(args, cancel):
        raise ValueError(f"{NAME} can only be answered inside a chat's turn.")
    # Changes nothing and asks no approval: the question itself is the person's say.
    return Tool(SPEC, ask or unbound, concurrent=False, needs_approval=False, read_only=True)


class NotPending(LookupError):
    """No such question waits (unknown, answered already, or its turn ended)."""


@dataclass
class _Waiting:
    question_id: str
    call_id: str
    items: list[dict]
    deadline: float | None  # monotonic
    wake: threading.Event = field(default_factory=threading.Event)
    reply: tuple | None = None  # ("answered", answers) | ("dismissed", None)


class Questions(TurnPart):
    """One turn's questions. `publish(type, **fields)` is the turn's; `changed()` tells the
    chat list (and the tray) that the chat waits, or no longer does."""

    commands = frozenset({"answer"})

    def __init__(self, publish: Callable[..., dict], changed: Callable[[], None]):
        self.publish, self.changed = publish, changed
        self._lock = threading.Lock()
        self._waiting: dict[str, _Waiting] = {}
        self._call: ToolCall | None = None
        self._closed_calls: set[str] = set()  # calls whose question Numi's closing cut short

    def tool(self) -> Tool:
        return ask_user_tool(self._ask)

    def bind_tools(self, tools: ToolRegistry) -> None:
        if tools.get(NAME) is not None:
            tools.add(self.tool())  # the same spec, answered by this turn's questions

    def tool_starting(self, call: ToolCall) -> None:
        """The call about to run (calls of this tool run one at a time, each right after this)."""
        if call.name == NAME:
            self._call = call

    def cut_short(self, call_id: str | None = None) -> bool:
        """Whether the call's question (None: any of this turn's) ended because Numi was closing:
        its result, and the message that asked, are then `interrupted`."""
        return bool(self._closed_calls) if call_id is None else call_id in self._closed_calls

    # --- the turn's side --------------------------------------------------------------------

    def _ask(self, args: dict, cancel) -> str:
        items = qi.parse_items(args)  # a ValueError is the call's error result
        call, self._call = self._call, None
        limit = timeout_s()
        waiting = _Waiting("q_" + secrets.token_hex(6), call.id if call else "", items,
                           None if limit is None else time.monotonic() + limit)
        with self._lock:
            self._waiting[waiting.question_id] = waiting
        unregister = cancel.on_cancel(waiting.wake.set)
        try:
            self.publish("question", **self._event(waiting))
            self.changed()
            waiting.wake.wait(limit)
        finally:
            unregister()
            with self._lock:
                self._waiting.pop(waiting.question_id, None)
                reply = waiting.reply
            self.changed()
        if reply is not None and reply[0] == "answered":
            return qi.answered(items, reply[1])
        if reply is not None:
            return qi.not_answered("dismissed", "The person dismissed the question without answering. "
                                                "Go on without their answer; do not ask the same again.")
        if cancel.is_set() and cancel.reason == "shutdown":
            self._closed_calls.add(waiting.call_id)
            return qi.not_answered("interrupted", "Numi was closed before the person answered.")
        if cancel.is_set():
            return qi.not_answered("stopped", "The person stopped the reply before answering.")
        return qi.not_answered("no_answer", f"The person did not answer within the {limit:,} s they allow "
                                            f"for questions. Go on without their answer, and say what you assumed.")

    @staticmethod
    def _event(waiting: _Waiting) -> dict:
        fields: dict[str, object] = {"question_id": waiting.question_id, "call_id": waiting.call_id,
                                     "items": waiting.items}
        if waiting.deadline is not None:
            fields["timeout_s"] = max(0, round(waiting.deadline - time.monotonic()))
        return fields

    # --- the sockets' side --------------------------------------------------------------------

    def waiting(self) -> list[dict]:
        """The waiting questions as `question` events' fields (the time left where there is a limit)."""
        with self._lock:
            return [self._event(w) for w in self._waiting.values() if w.reply is None]

    def resend(self) -> None:
        """Publish each waiting question again, as a new event (a window resumed). Under the lock,
        so an answer cannot slip in between: a question re-sent is one still waiting, and its
        call's `tool_end` follows."""
        with self._lock:
            for waiting in self._waiting.values():
                if waiting.reply is None:
                    self.publish("question", **self._event(waiting))

    def command(self, name: str, **args) -> None:
        """`answer` (CONTRACT §7): the person answered or dismissed a question; Refused when it
        no longer waits, or the answers do not fit it."""
        try:
            self.answer(args["question_id"], args.get("answers"), bool(args.get("dismissed")))
        except NotPending:
            raise Refused("not_pending", "That question is no longer waiting for an answer (it was "
                                         "answered or dismissed, or its reply ended).") from None
        except BadAnswer as exc:
            raise Refused("bad_request", f"{exc} The question still waits for your answer.") from None

    def answer(self, question_id: str, answers: dict | None = None, dismissed: bool = False) -> None:
        """Answer or dismiss a waiting question; NotPending, or BadAnswer (it then still waits)."""
        with self._lock:
            waiting = self._waiting.get(question_id)
            if waiting is None or waiting.reply is not None:
                raise NotPending(question_id)
            waiting.reply = ("dismissed", None) if dismissed else ("answered", qi.check_answers(waiting.items, answers or {}))
        waiting.wake.set()
