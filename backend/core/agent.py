"""The agent loop: model step → tool calls → results → next step, within limits.

It knows no Flask, database or socket. It takes the request to start from, the
tools, a stream function, an `emit` for what happens, an `approve` that blocks
for a person's decision and a cancel token; whoever calls it persists and
publishes. Once text has streamed in a step, a failure ends the turn with the
partial text kept; before that, retryable failures are retried. A model that asks
for the same call a third time in a turn is going round in circles: the turn ends
before that call runs (`loop_detected`).
"""
from __future__ import annotations

import json
import time
from collections import Counter
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Protocol

from backend.core import tools as toolbox
from backend.core.cancel import CancelToken
from backend.core.errors import ProviderError
from backend.core.status import CANCELLED, COMPLETE, COMPLETED, ERROR, FAILED, LIMIT, MessageStatus, TurnOutcome
from backend.core.types import (
    Message,
    ModelRequest,
    ReasoningDelta,
    ReasoningDetail,
    StepEnd,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)


@dataclass(frozen=True)
class Limits:
    max_steps: int = 20
    max_tool_calls: int = 50
    max_seconds: float = 600.0
    max_output_chars: int = 1_000_000
    max_retries: int = 2  # further attempts before the first token of a step
    max_retry_wait: float = 30.0
    max_repeats: int = 2  # the same call (name and arguments) runs at most this often in a turn


# --- what the loop reports, in order -------------------------------------------------

@dataclass(frozen=True)
class StepStarted:
    step: int


@dataclass(frozen=True)
class Delta:
    kind: str  # "content" | "reasoning"
    text: str


@dataclass(frozen=True)
class ToolPreparing:
    call_id: str
    name: str


@dataclass(frozen=True)
class ToolArguments:
    """A piece of a call's arguments as the model writes them (the call is not complete yet)."""
    call_id: str
    name: str
    delta: str


@dataclass(frozen=True)
class UsageReport:
    usage: Usage


@dataclass(frozen=True)
class AssistantDone:
    """A step's assistant message in its final form; commit it before anything runs."""
    message: Message
    status: MessageStatus  # COMPLETE, CANCELLED or ERROR
    final: bool  # no further step follows


@dataclass(frozen=True)
class ToolStarted:
    call: ToolCall


@dataclass(frozen=True)
class ToolFinished:
    call: ToolCall
    outcome: toolbox.ToolOutcome


@dataclass(frozen=True)
class ToolProgress:
    """A running call reported how it is going (from the thread that runs it)."""
    call: ToolCall
    fields: dict  # output (new text) | progress, total, message


@dataclass(frozen=True)
class ToolResult:
    """A result to commit; these come in call order."""
    call: ToolCall
    outcome: toolbox.ToolOutcome


@dataclass(frozen=True)
class FellBack:
    """The model failed before answering; the next model of its fallback list takes over."""
    from_model_id: str | None
    to_model_id: str
    reason: str


@dataclass(frozen=True)
class Route:
    """Another model to try: its request template (messages are the loop's own)."""
    model_id: str
    request: ModelRequest


@dataclass(frozen=True)
class Decision:
    kind: str  # "allow" | "allow_always" | "deny"
    reason: str = ""
    arguments: str | None = None  # the arguments as the person edited them: what runs


@dataclass(frozen=True)
class Outcome:
    status: TurnOutcome
    error_code: str | None = None
    error_message: str | None = None
    retryable: bool = False


class Stream(Protocol):
    """A model step's events (StreamEvent), which Stop closes."""

    def __iter__(self) -> Iterator[StreamEvent]: ...

    def close(self) -> None: ...


@dataclass
class _Step:
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    details: list[dict] = field(default_factory=list)
    calls: dict[int, list] = field(default_factory=dict)  # index -> [id, name, [argument pieces]]
    finish: str | None = None
    started_output: bool = False

    def message(self) -> Message:
        calls = tuple(ToolCall(id=c[0], name=c[1], arguments="".join(c[2]))
                      for _, c in sorted(self.calls.items()))
        return Message(role="assistant", content="".join(self.text), reasoning="".join(self.reasoning),
                       reasoning_details=tuple(self.details), tool_calls=calls)


class LimitReached(Exception):
    pass


class AgentLoop:
    def __init__(self, request: ModelRequest, *, stream_fn: Callable[[ModelRequest], Stream],
                 emit: Callable[[object], None], approve: Callable[[ToolCall], Decision],
                 cancel: CancelToken, tools: toolbox.ToolRegistry, limits: Limits = Limits(),
                 pool: Executor | None = None, clock: Callable[[], float] = time.monotonic,
                 fallbacks: tuple[Route, ...] = (), steering: Callable[[], list[Message]] = lambda: []):
        self.request = request
        self.stream_fn, self.emit, self.approve = stream_fn, emit, approve
        self.cancel, self.tools, self.limits, self.pool = cancel, tools, limits, pool
        self.history = list(request.messages)
        self.clock = clock
        self.fallbacks = list(fallbacks)
        self.steering = steering
        self.started = clock()
        self.tool_calls_made = 0
        self.output_chars = 0
        self.calls_seen: Counter = Counter()  # (name, arguments as parsed JSON) -> times asked this turn

    def run(self) -> Outcome:
        step = 0
        while True:
            step += 1
            if step > self.limits.max_steps:
                return self._limit(f"The reply used its {self.limits.max_steps} model steps. "
                                   f"Continue to let it go on.")
            if self.clock() - self.started > self.limits.max_seconds:
                return self._limit(f"The reply ran for its {int(self.limits.max_seconds)} s limit. "
                                   f"Continue to let it go on.")
            self.emit(StepStarted(step))
            outcome, message = self._step()
            if outcome is not None:
                return outcome
            if not message.tool_calls:
                return Outcome(COMPLETED)
            repeated = self._repeated(message.tool_calls)
            if repeated is not None:
                return self._stop_repeating(message, repeated)
            if self.tool_calls_made + len(message.tool_calls) > self.limits.max_tool_calls:
                return self._limit(f"The reply asked for more than {self.limits.max_tool_calls} tool calls.")
            self.tool_calls_made += len(message.tool_calls)
            results = self._run_tools(message.tool_calls)
            self.history.append(message)
            self.history.extend(results)
            if self.cancel.is_set():
                return Outcome(CANCELLED, "cancelled", "Stopped. The reply so far is kept.")
            # A person's steering lands here, between a step's tool results and the next
            # step, where a user message is valid in every wire API.
            self.history.extend(self.steering())

    def _limit(self, message: str) -> Outcome:
        return Outcome(LIMIT, "limit", message)

    # --- the loop guard ---------------------------------------------------------------

    def _repeated(self, calls: tuple[ToolCall, ...]) -> ToolCall | None:
        """Count the step's calls; the first one asked for more than max_repeats times this turn."""
        for call in calls:
            key = (call.name, _canonical(call.arguments, self.tools.get(call.name)))
            self.calls_seen[key] += 1
            if self.calls_seen[key] > self.limits.max_repeats:
                return call
        return None

    def _stop_repeating(self, message: Message, repeated: ToolCall) -> Outcome:
        """End the turn before any call of this step runs. Each call gets a result saying why,
        so the model reads it in the history when the person presses Continue."""
        times = self.limits.max_repeats + 1
        shown = _shorten(repeated.arguments.strip() or "{}", 200)
        results = []
        for call in message.tool_calls:
            if call is repeated:
                text = (f"Not run: this is the {_ordinal(times)} call of {call.name} with these same arguments "
                        f"in this reply, so Numi stopped the reply here. Do not call it again with the same "
                        f"arguments: use what the earlier calls returned, or try something different.")
            else:
                text = f"Not run: the reply was stopped because {repeated.name} was called {times} times " \
                       f"with the same arguments."
            outcome = toolbox.error_result(call, text)
            self.emit(ToolFinished(call, outcome))
            self.emit(ToolResult(call, outcome))
            results.append(outcome.result)
        self.history.append(message)
        self.history.extend(results)
        return Outcome(LIMIT, "loop_detected",
                       f"The model called {repeated.name} with the same arguments ({shown}) {times} times in "
                       f"this reply, so Numi stopped it before the {_ordinal(times)} call ran. Continue to let it "
                       f"go on; it is told not to repeat that call.")

    # --- one model step -------------------------------------------------------------

    def _step(self) -> tuple[Outcome | None, Message]:
        request = replace(self.request, messages=tuple(self.history))
        state = _Step()
        attempt = 0
        while True:
            try:
                self._stream_into(request, state)
                break
            except LimitReached as exc:
                self._finish(state, ERROR, final=True)
                return self._limit(str(exc)), state.message()
            except ProviderError as exc:
                if self.cancel.is_set():
                    break
                if state.started_output or not exc.retryable or attempt >= self.limits.max_retries:
                    if not state.started_output and self._fall_back(exc):
                        request = replace(self.request, messages=tuple(self.history))
                        attempt = 0
                        continue
                    self._finish(state, ERROR, final=True)
                    return Outcome(FAILED, exc.code, exc.message, exc.retryable), state.message()
                attempt += 1
                wait = exc.retry_after if exc.retry_after is not None else 0.5 * 2 ** (attempt - 1)
                if self.cancel.wait(min(wait, self.limits.max_retry_wait)):
                    break
        if self.cancel.is_set():
            self._finish(state, CANCELLED, final=True)
            return Outcome(CANCELLED, "cancelled", "Stopped. The reply so far is kept."), state.message()
        message = self._finish(state, COMPLETE, final=not state.calls)
        return None, message

    def _fall_back(self, exc: ProviderError) -> bool:
        """Switch to the next fallback model for the rest of the turn, if the failure allows."""
        # Only failures another model can help with: unreachable, overloaded,
        # rate-limited, timed out. A bad request would fail the same way anywhere.
        if not self.fallbacks or not (exc.retryable or (exc.status or 0) >= 500 or exc.status == 429):
            return False
        route = self.fallbacks.pop(0)
        self.emit(FellBack(self.request.model_id, route.model_id, exc.message))
        self.request = route.request
        return True

    def _finish(self, state: _Step, status: MessageStatus, final: bool) -> Message:
        # The writer is recorded: signed reasoning goes back only to the model that wrote it.
        message = replace(state.message(), model_id=self.request.model_id)
        if status != COMPLETE:
            # Half-assembled tool calls are dropped: running them was never agreed.
            message = replace(message, tool_calls=())
        self.emit(AssistantDone(message, status, final))
        return message

    def _stream_into(self, request: ModelRequest, state: _Step) -> None:
        stream = self.stream_fn(request)
        unregister = self.cancel.on_cancel(stream.close)
        try:
            for event in stream:
                if self.cancel.is_set():
                    return
                self._apply(event, state)
        except (ProviderError, LimitReached):
            raise
        except Exception as exc:
            if self.cancel.is_set():
                return  # the stream was closed under us by Stop
            raise ProviderError(f"{request.provider.name} sent a reply Numi could not read ({type(exc).__name__}).",
                                retryable=False) from exc
        finally:
            unregister()
            close = getattr(stream, "close", None)
            if close:
                close()

    def _apply(self, event, state: _Step) -> None:
        if isinstance(event, TextDelta):
            if event.text:
                state.started_output = True
                state.text.append(event.text)
                self._count_output(len(event.text))
                self.emit(Delta("content", event.text))
        elif isinstance(event, ReasoningDelta):
            if event.text:
                state.started_output = True
                state.reasoning.append(event.text)
                self._count_output(len(event.text))
                self.emit(Delta("reasoning", event.text))
        elif isinstance(event, ToolCallStart):
            state.started_output = True
            state.calls[event.index] = [event.id, event.name, []]
            self.emit(ToolPreparing(event.id, event.name))
        elif isinstance(event, ToolCallDelta):
            call = state.calls.get(event.index)
            if call is not None:
                call[2].append(event.arguments)
                self._count_output(len(event.arguments))
                if event.arguments:
                    self.emit(ToolArguments(call[0], call[1], event.arguments))
        elif isinstance(event, ReasoningDetail):
            state.details.append(event.detail)
        elif isinstance(event, Usage):
            self.emit(UsageReport(event))
        elif isinstance(event, StepEnd):
            state.finish = event.finish_reason

    def _count_output(self, n: int) -> None:
        self.output_chars += n
        if self.output_chars > self.limits.max_output_chars:
            raise LimitReached(f"The reply reached its output limit of {self.limits.max_output_chars:,} characters.")

    # --- tools ------------------------------------------------------------------------

    def _run_tools(self, asked: tuple[ToolCall, ...]) -> list[Message]:
        """Approve, run (concurrent ones in parallel first, the rest in order), commit in call order."""
        outcomes: list = [None] * len(asked)
        runnable: list[int] = []
        calls = list(asked)
        edited: set[int] = set()
        for i, call in enumerate(calls):
            # Every call of a known tool is decided (a policy may deny or allow it
            # without asking); an unknown one becomes an error result below.
            if self.tools.get(call.name) is not None:
                decision = self.approve(call)
                if decision.kind == "deny":
                    why = f" They said: {decision.reason}" if decision.reason else ""
                    outcomes[i] = toolbox.error_result(call, f"The person did not allow this call.{why}")
                    continue
                if decision.arguments is not None and decision.arguments != call.arguments:
                    calls[i] = replace(call, arguments=decision.arguments)
                    edited.add(i)
            elif (withheld := self.tools.withheld(call.name)) is not None:
                # A tool the chat's mode holds back: said as such, not as one that does not exist.
                outcomes[i] = toolbox.error_result(call, withheld)
                continue
            if self.cancel.is_set():
                outcomes[i] = toolbox.error_result(call, "Not run: the turn was stopped.")
                continue
            runnable.append(i)
        parallel = [i for i in runnable if (t := self.tools.get(calls[i].name)) and t.concurrent]
        futures = {}
        for i in parallel:
            self.emit(ToolStarted(calls[i]))
            futures[i] = self._submit(calls[i])
        for i in range(len(calls)):
            if i in futures:
                outcomes[i] = futures[i].result()
                self.emit(ToolFinished(calls[i], outcomes[i]))
        for i in runnable:
            if i in futures:
                continue
            if self.cancel.is_set():
                outcomes[i] = toolbox.error_result(calls[i], "Not run: the turn was stopped.")
                continue
            self.emit(ToolStarted(calls[i]))
            outcomes[i] = toolbox.execute(self.tools.get(calls[i].name), calls[i], self.cancel,
                                          self._progress_of(calls[i]))
            self.emit(ToolFinished(calls[i], outcomes[i]))
        for i in edited:
            # The model must know what ran was not what it asked for.
            result = outcomes[i].result
            note = f"[The person edited the arguments before allowing this call; it ran with: {calls[i].arguments}]\n"
            outcomes[i] = replace(outcomes[i], result=replace(result, content=note + result.content))
        for i, call in enumerate(calls):
            if i not in runnable:
                self.emit(ToolFinished(call, outcomes[i]))
            self.emit(ToolResult(call, outcomes[i]))
        return [o.result for o in outcomes]

    def _submit(self, call: ToolCall):
        tool = self.tools.get(call.name)
        if self.pool is None:
            from concurrent.futures import Future
            future: Future = Future()
            future.set_result(toolbox.execute(tool, call, self.cancel, self._progress_of(call)))
            return future
        return self.pool.submit(toolbox.execute, tool, call, self.cancel, self._progress_of(call))

    def _progress_of(self, call: ToolCall) -> Callable[..., None]:
        return lambda **fields: self.emit(ToolProgress(call, fields))


def _canonical(arguments: str, tool: toolbox.Tool | None = None):
    """Arguments as a comparable value: parsed JSON (key order and spacing do not matter;
    1 and 1.0 are one number, true is not 1) as the tool compares them (`Tool.comparable`:
    `./a.txt` is `a.txt`), or the text itself when it is not JSON."""
    if not arguments.strip():
        return ("json", _frozen({}))
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return ("text", arguments)
    if isinstance(value, dict) and tool is not None:
        value = tool.comparable(value)
    try:
        return ("json", _frozen(value))
    except RecursionError:
        return ("text", arguments)


def _frozen(value):
    if isinstance(value, dict):
        return ("object", tuple(sorted((k, _frozen(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("array", tuple(_frozen(v) for v in value))
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, (int, float)):
        return ("number", int(value) if isinstance(value, float) and value.is_integer() else value)
    return ("string", value)


def _shorten(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(n, f"{n}th")

