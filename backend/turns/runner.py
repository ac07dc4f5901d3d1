"""One turn: the agent loop wrapped in persistence and publishing.

The loop reports what happens; this module commits it at the contract's save
boundaries (the assistant message before its tools run, tool results in call
order, partial text at least once a second through the registry's flusher)
and publishes each event to the chat's hub. A call whose tool can preview its
change (a file write's diff) shows it on its approval card, its `tool_end` and
its saved result; a running call's progress goes out as `tool_progress`. What the
turn's tools brought in (search results, fetched pages) are its sources: numbered,
announced as `sources`, and saved on its final reply.
"""
from __future__ import annotations

import logging
import secrets
from dataclasses import replace
from typing import Callable

from backend.core import agent
from backend.core import tools as toolbox
from backend.core.cancel import CancelToken
from backend.core.status import (
    CANCELLED,
    COMPLETE,
    COMPLETED,
    ERROR,
    FAILED,
    INTERRUPTED,
    STREAMING,
    MessageStatus,
    TurnOutcome,
)
from backend.core.tools import ToolRegistry
from backend.store import chats, history
from backend.store.db import db
from backend.turns import (
    approvals,
    features,
    metrics,
    next_request,
)
from backend.turns.approval_waits import Approvals
from backend.turns.columns import SOLO, Column
from backend.turns.context import TurnSetupError, fallback_routes, history_rows, with_attachments
from backend.turns.hub import ChatHub
from backend.turns.outbound import TurnReads, branch_reads
from backend.turns.progress import Progress
from backend.turns.saved_sources import SavedSources
from backend.turns.services import TurnServices
from backend.turns.sources import TurnSources

log = logging.getLogger(__name__)
CRASHED = agent.Outcome(FAILED, "internal", "Something went wrong inside Numi while answering; "
                                              "the details are in the log. Try again.", True)


class Partial:
    """The streaming assistant row, flushed to the database by the registry's flusher with the
    turn's sources (`saved`) in the same commits. Its text is the hub's: the turn's view there
    receives every delta in the order it is published, so this keeps no copy of its own."""

    def __init__(self, row_id: int, saved: SavedSources, hub: ChatHub):
        self.row_id, self.saved, self.hub = row_id, saved, hub
        self._flushed = 0  # the count of deltas in the last flush (flusher thread only)

    def text(self) -> tuple[str, str]:
        found = self.hub.reply_text(self.row_id)
        return found[:2] if found is not None else ("", "")

    def flush(self) -> None:
        found = self.hub.reply_text(self.row_id, seen=self._flushed)
        if found is None:
            return  # nothing new since the last flush
        content, reasoning, self._flushed = found
        self.saved.flush_partial(self.row_id, content, reasoning)


class Turn:
    """One reply's turn (or a compare's column of one: compare.py). `partials` is what the
    registry's flusher saves; `take_steering()`: the chat's steering messages, taken off its queue (the registry's)."""

    def __init__(self, services: TurnServices, hub: ChatHub, chat_id: str, user_message_id: int | None,
                 take_steering: Callable[[], list[int]], continue_message_id: int | None = None,
                 model_id: str | None = None, reply_id: int | None = None, column: Column | None = None):
        self.services = services
        # A compare's reply (backend/turns/compare.py): the compare's turn id and Stop, its own model.
        self.column = column
        self._leaf = column.message_id if column is not None else None  # a column's newest row
        self.gate = column.gate if column is not None else SOLO
        self.take_steering = take_steering
        self.reply_id = reply_id  # regenerate: the new version's row, written by this turn's first step
        self.chat_id = chat_id
        self.hub = hub
        self.id = column.turn_id if column is not None else "t_" + secrets.token_hex(6)
        self.user_message_id = user_message_id
        self.continue_message_id = continue_message_id
        self.cancel = column.cancel if column is not None else CancelToken()
        self.tools = services.tools  # until the turn knows its chat's model and workspace
        self._awaiting_results: tuple[int, set[str]] | None = None  # assistant row, its calls without results
        self.partial: Partial | None = None
        self.model_id: str | None = None
        self.context_key: str | None = None  # what its requests carry besides messages (context.Plan.key)
        self.asked_model_id = model_id  # "regenerate with…": this turn only, the chat keeps its model
        self.usage = metrics.empty()  # the whole turn
        self.meter = metrics.StepMeter()
        self.final_message_id: int | None = None
        self.last_message_id: int | None = None
        self.approvals = Approvals(self.publish, lambda: services.chat_changed(chat_id))
        self.progress = Progress(self.publish)
        self.sources = TurnSources(self.publish)
        self.saved_sources = SavedSources(self.sources)
        self._diffs: dict[str, str] = {}  # call id -> what the running call changes, for its end and result
        # What private content the conversation has read: a call that sends text out then asks.
        self.reads = TurnReads(lambda: branch_reads(history.tool_rows(chat_id), self.tools.get))
        # Each feature's share of the turn (backend/turns/features.py), by feature name.
        self.parts = features.bind_turn(features.TurnHandle(
            chat_id, self.id, self.publish, self.cancel, lambda: services.chat_changed(chat_id),
            lambda: self.last_message_id, lambda: self.sources, services.feature_services.get, self.reads.note))

    @property
    def partials(self) -> list[Partial]:
        return [self.partial] if self.partial is not None else []

    def publish(self, type_: str, **fields) -> dict:
        if self.column is not None:
            fields = self.column.stamp(type_, fields, self.last_message_id)
        return self.hub.publish(type_, self.id, **fields)

    # --- the turn ---------------------------------------------------------------------

    def run(self) -> TurnOutcome:
        if self.column is None:  # a compare announces its columns' turn once (compare.py)
            self.publish("turn_start", user_message_id=self.user_message_id,
                         continue_message_id=self.continue_message_id)
        try:
            outcome = self._run_loop()
        except TurnSetupError as exc:
            outcome = agent.Outcome(FAILED, exc.code, exc.message)
        except Exception:
            log.exception("turn %s in chat %s crashed", self.id, self.chat_id)
            outcome = CRASHED
        try:
            self._finish(outcome)
        except Exception:
            # Whatever failed, the turn still ends (the registry publishes turn_end on return).
            log.exception("turn %s in chat %s could not finish cleanly", self.id, self.chat_id)
            if outcome.status == COMPLETED:
                outcome = CRASHED
                self.publish("error", code=outcome.error_code, message=outcome.error_message,
                             retryable=outcome.retryable)
        return outcome.status

    def _run_loop(self) -> agent.Outcome:
        with self.gate.preparing():
            prepared = self._prepare()
        if isinstance(prepared, agent.Outcome):
            return prepared
        model, request = prepared
        self.gate.wait(self.cancel)  # a compare's columns start streaming together
        if self.cancel.is_set():
            return agent.Outcome(CANCELLED, "cancelled", "Stopped before the model was asked.")
        if self.continue_message_id is not None:
            row = history.by_ids([self.continue_message_id])[self.continue_message_id]
            history.save(row.id, status=STREAMING, error=None)
            self._open_partial(row.id)
            # The saved text opens the turn's stream, so the deltas of this turn
            # add up to the whole message, as for any other turn (and the hub holds it all).
            if row.reasoning_content:
                self.publish("reasoning", delta=row.reasoning_content, message_id=row.id)
            if row.content:
                self.publish("content", delta=row.content, message_id=row.id)
        run = features.TurnRun(self.chat_id, self.user_message_id, self.continue_message_id is not None, request,
                               self.publish, self.cancel, self.services, self.sources, self._approve,
                               lambda req, cancel: self._loop(req, model, cancel, ToolRegistry()).run(),
                               self._open_reply, self._close_reply)
        for feature in features.registered():  # research runs its turns (backend/features/research/)
            if feature.runs_turn is not None and (outcome := feature.runs_turn(run)) is not None:
                return outcome
        return self._loop(request, model, self.cancel, self.tools).run()

    def _prepare(self):
        """The turn's model and its request, planned (features may summarize or add to it first);
        an Outcome instead when Stop came meanwhile."""
        chat = chats.get(self.chat_id)
        assert chat is not None  # a chat is purged only once its turn has stopped (stop_chat)
        continuing = self.continue_message_id is not None
        model, self.tools, plan = next_request.prepare(self.services, chat, self.asked_model_id, continuing)
        if self.continue_message_id is not None:
            # The reply's text already cites its sources: their numbers go on from there.
            saved = history.by_ids([self.continue_message_id])[self.continue_message_id].citation_sources
            self.sources = TurnSources(self.publish, saved)
            self.saved_sources = SavedSources(self.sources, self.continue_message_id)
        # After the sources are the turn's own: a part may add what the planned request carries (memory).
        for part in self.parts.values():
            part.bind_tools(self.tools)
        self.model_id = model.id
        notices: list[str] = []
        for feature in features.registered():  # compaction makes room (backend/features/compaction/)
            if feature.before_request is not None:
                plan = feature.before_request(features.BeforeRequest(
                    chat, model, plan, self.tools, self.services, continuing, self.cancel, self.publish,
                    notices)) or plan
        if plan.trimmed and not self.cancel.is_set():
            # Older messages are left out (only for the window, CONTRACT §6): the turn says so.
            extra = {"notice": " ".join(notices)} if notices else {}
            self.publish("context_trimmed", messages_omitted=plan.trimmed, tokens_before=plan.tokens_before,
                         tokens_after=plan.used, **extra)
        if self.cancel.is_set():
            return agent.Outcome(CANCELLED, "cancelled", "Stopped before the model was asked.")
        self.context_key = plan.key
        return model, plan.request

    def _loop(self, request, model, cancel, tools) -> agent.AgentLoop:
        return agent.AgentLoop(request, stream_fn=self.services.open_stream, emit=self._on_event,
                               approve=self._approve, cancel=cancel, tools=tools, limits=self.services.limits,
                               pool=self.services.tool_pool,
                               fallbacks=fallback_routes(model, request, self.services.keys),
                               steering=lambda: self._take_steering(model))

    def _take_steering(self, model) -> list:
        """Move each waiting steering message to here in the history (a new row after this
        step's tool results, so a reload shows it where the model read it) and hand it on."""
        out = []
        for queued_id in self.take_steering():
            moved = history.attach(self.chat_id, queued_id)
            if moved is None:
                continue  # discarded meanwhile
            self.publish("steered", message_id=moved.id, queued_id=queued_id, content=moved.content)
            self.publish("message_saved", message_id=moved.id, role="user")
            out.extend(with_attachments(history_rows(self.chat_id, leaf_id=moved.id, newest=1), model,
                                        self.services.files))
        return out

    def _finish(self, outcome: agent.Outcome) -> None:
        if outcome.error_code == "tools_unsupported":
            from backend.catalog.tools_refused import turn_tools_off
            assert outcome.error_message is not None  # an error code comes with its message
            message = turn_tools_off(self.services.catalog, self.model_id, outcome.error_message)
            if message:
                outcome = replace(outcome, error_message=message)
        if outcome.error_code:
            try:
                self._save_error(outcome)
            except Exception:
                log.exception("could not save how turn %s in chat %s ended", self.id, self.chat_id)
            self.publish("error", code=outcome.error_code, message=outcome.error_message,
                         retryable=outcome.retryable)
        self._keep_sources()
        if self.reply_id is not None:  # a regenerated version the turn ended before writing
            history.end_streaming(self.reply_id, status=CANCELLED if outcome.status == CANCELLED else ERROR)
        if self.usage["input_tokens"] or self.usage["output_tokens"]:
            self.publish("usage", **self.usage)
        if outcome.status == COMPLETED and self.final_message_id is not None:
            self.publish("done", message_id=self.final_message_id)
        with db.atomic():
            chats.touch(self.chat_id)
        # turn_end is the registry's to publish: only once the chat is free again,
        # so a client that acts on it (edit, regenerate) never hears "busy".

    def _open_reply(self) -> int:
        """A feature's own reply (TurnRun.open_reply): an empty streaming row, the turn's last message."""
        with db.atomic():
            row = self._insert_assistant(status=STREAMING)
        self.last_message_id = row.id
        return row.id

    def _close_reply(self, message_id: int, content: str) -> None:
        """That reply's text, saved complete as the turn's final reply (TurnRun.close_reply)."""
        self.saved_sources.save(message_id, dict(content=content, status=COMPLETE, model_id=self.model_id),
                                with_sources=True)
        self.final_message_id = message_id
        self.publish("message_saved", message_id=message_id, role="assistant")

    def _keep_sources(self) -> None:
        """A turn that ended before a final reply (stopped while a tool ran, a limit) keeps its
        sources on its last reply, so what its tools found is not lost."""
        if self.last_message_id is not None:
            self.saved_sources.keep_on(self.last_message_id)

    def _save_error(self, outcome: agent.Outcome) -> None:
        """The error on the turn's last message; a row the turn left `streaming` gets its end too.

        A row is still streaming here only when the loop never saved its final
        form (a failed commit, a crash): its text so far is kept, and its status
        says how the turn ended, so it is never left looking alive.
        """
        error = {"code": outcome.error_code, "message": outcome.error_message}
        awaiting = self._awaiting_results[0] if self._awaiting_results else None
        open_rows = {row_id for row_id in (self.last_message_id, awaiting) if row_id is not None}
        with db.atomic():
            if self.last_message_id is None and outcome.status == FAILED:
                self.last_message_id = self._insert_assistant(status=ERROR).id
            if self.last_message_id is not None:
                history.save(self.last_message_id, error=error)
            status: MessageStatus = CANCELLED if outcome.status == CANCELLED else ERROR
            for row_id in open_rows:
                fields: dict[str, str] = {"status": status}
                if self.partial is not None and self.partial.row_id == row_id:
                    fields["content"], fields["reasoning_content"] = self.partial.text()
                history.end_streaming(row_id, **fields)

    # --- loop events --------------------------------------------------------------------

    def _on_event(self, ev) -> None:
        if isinstance(ev, agent.Delta):
            self.meter.output()
            partial = self._ensure_partial()
            self.publish(ev.kind, delta=ev.text, message_id=partial.row_id)
        elif isinstance(ev, agent.StepStarted):
            self.meter = metrics.StepMeter()
            if ev.step > 1 or self.continue_message_id is None:
                self.partial = None
        elif isinstance(ev, agent.ToolPreparing):
            self.meter.output()
            partial = self._ensure_partial()
            self.publish("tool_preparing", call_id=ev.call_id, name=ev.name, message_id=partial.row_id)
        elif isinstance(ev, agent.ToolArguments):
            for part in self.parts.values():
                part.tool_arguments(ev.call_id, ev.name, ev.delta)
        elif isinstance(ev, agent.FellBack):
            self.model_id = ev.to_model_id
            self.publish("fallback", from_model_id=ev.from_model_id, to_model_id=ev.to_model_id, reason=ev.reason)
        elif isinstance(ev, agent.UsageReport):
            metrics.add(self.meter.usage, ev.usage)
        elif isinstance(ev, agent.AssistantDone):
            self._save_assistant(ev)
        elif isinstance(ev, agent.ToolStarted):
            for part in self.parts.values():
                part.tool_starting(ev.call)
            # Worked out again here, not taken from the approval: the file may have changed
            # while the card waited, and the person may have edited the arguments.
            diff = self._diff_of(ev.call)
            if diff:
                self._diffs[ev.call.id] = diff
            self.progress.start(ev.call.id, ev.call.name)
            self.publish("tool_start", call_id=ev.call.id, name=ev.call.name, arguments=ev.call.arguments,
                         message_id=self.last_message_id)
        elif isinstance(ev, agent.ToolProgress):
            self.progress.report(ev.call.id, ev.fields)
        elif isinstance(ev, agent.ToolFinished):
            self.progress.end(ev.call.id)
            if not ev.outcome.ok:
                self._diffs.pop(ev.call.id, None)  # it changed nothing
            diff = self._diffs.get(ev.call.id)
            self.publish("tool_end", call_id=ev.call.id, name=ev.call.name, ok=ev.outcome.ok,
                         output=ev.outcome.result.content, duration_ms=ev.outcome.duration_ms,
                         **({"diff": diff} if diff else {}))
        elif isinstance(ev, agent.ToolResult):
            result = ev.outcome.result
            # A question Numi's closing cut short leaves its turn interrupted (CONTRACT §7).
            call_id = ev.call.id  # its result's tool_call_id
            status = INTERRUPTED if self._cut_short(call_id) else COMPLETE
            diff = self._diffs.pop(call_id, None)
            with db.atomic():
                row = self._append(role="tool", content=result.content,
                                               tool_call_id=result.tool_call_id, tool_error=result.is_error,
                                               status=status, content_parts={"diff": diff} if diff else None)
                self._result_saved(call_id)
            self.reads.result(ev.call.name, result.is_error, self.tools.get(ev.call.name))
            self.publish("message_saved", message_id=row.id, role="tool")

    def _result_saved(self, call_id: str) -> None:
        """Inside the result's transaction: the last result completes its assistant message
        (or leaves it interrupted, when Numi's closing cut a question of it short)."""
        if self._awaiting_results is None:
            return
        row_id, waiting = self._awaiting_results
        waiting.discard(call_id)
        if not waiting:
            history.save(row_id, status=INTERRUPTED if self._cut_short() else COMPLETE)
            self._awaiting_results = None

    def _cut_short(self, call_id: str | None = None) -> bool:
        """Whether Numi's closing cut the call (None: any call of the turn) short, e.g. a question."""
        return any(p.cut_short(call_id) for p in self.parts.values())

    def _insert_assistant(self, status: MessageStatus) -> history.Row:
        if self.reply_id is not None:  # the version regenerate made for this reply
            row_id, self.reply_id = self.reply_id, None
            history.save(row_id, status=status, model_id=self.model_id)
            return history.by_ids([row_id])[row_id]
        return self._append(role="assistant", status=status, model_id=self.model_id)

    def _append(self, **fields) -> history.Row:
        """A new row of the turn: at the end of the active branch, or a compare's column's next row
        under its last one (beside the active branch, or extending it for the active column)."""
        if self.column is None:
            return history.append_to_branch(self.chat_id, **fields)
        assert self._leaf is not None  # a column starts at its reply row
        row = history.append_beside(self.chat_id, self._leaf, **fields)
        self._leaf = row.id
        return row

    def _ensure_partial(self) -> Partial:
        if self.partial is None:
            row = self._insert_assistant(status=STREAMING)
            return self._open_partial(row.id)
        return self.partial

    def _open_partial(self, row_id: int) -> Partial:
        self.partial = Partial(row_id, self.saved_sources, self.hub)
        self.last_message_id = row_id
        return self.partial

    def _save_assistant(self, ev: agent.AssistantDone) -> None:
        message = ev.message
        if self.partial is None and ev.status == CANCELLED:
            return  # stopped before the model said anything: nothing to keep
        partial = self._ensure_partial()
        content, reasoning = partial.text()
        usage = self._step_usage()
        calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
        status = ev.status
        if calls and status == COMPLETE:
            # Still "streaming" until its last tool result is committed: a process that dies
            # while a tool runs or an approval waits leaves it `interrupted`, with Continue.
            status = STREAMING
            self._awaiting_results = (partial.row_id, {c["id"] for c in calls})
        self.saved_sources.save(partial.row_id, dict(
            content=content, reasoning_content=reasoning, reasoning_details=list(message.reasoning_details) or None,
            tool_calls=calls or None, status=status, model_id=self.model_id, usage=usage), with_sources=ev.final)
        if ev.final and ev.status == COMPLETE:
            self.final_message_id = partial.row_id
        self.publish("message_saved", message_id=partial.row_id, role="assistant")

    def _step_usage(self) -> dict:
        """The step's tokens, speed and cost, counted into the turn's total once."""
        usage = self.meter.summary(*chats.prices(self.model_id))
        metrics.add(self.usage, usage)
        self.meter.usage = metrics.empty()  # a second save of this step adds nothing
        if self.context_key:
            usage["context_key"] = self.context_key
        return usage

    # --- approvals ----------------------------------------------------------------------

    def _approve(self, call) -> agent.Decision:
        tool = self.tools.get(call.name)
        # The mode as it is now: a switch while the turn runs applies to its next call.
        mode = chats.mode(self.chat_id)
        policy = approvals.policy_for(self.chat_id, call.name, bool(tool and tool.needs_approval), mode)
        if policy == "deny":
            return agent.Decision("deny", f"{call.name} is turned off for this chat in Settings → Approvals.")
        changed = approvals.unapproved_change(tool)
        # After a private read, text going out asks whatever the policy or standing rules say.
        outbound = self.reads.check(call, tool)
        # A feature may need the person's say whatever the policy (a fetch into their own network).
        asked = {}
        for part in self.parts.values():
            asked.update(part.asks(call) or {})
        if not (changed or outbound or asked) and (policy == "allow" or approvals.covered(self.chat_id, call)):
            return agent.Decision("allow")
        # can_always: whether "allow always" would leave a standing rule (a chained shell
        # command never does: the card then offers allow once only).
        extra = {"changed": True, "description": tool.spec.description} if changed and tool is not None else {}
        diff = self._diff_of(call)
        if diff:
            extra["diff"] = diff
        if outbound:
            extra["outbound"] = outbound  # no standing rule can cover it: can_always is false
        extra.update(asked)
        # No standing rule covers what a feature asks about either.
        can_always = not outbound and not asked and approvals.rule_for(call) is not None
        decision = self.approvals.wait(call, self.cancel, can_always=can_always, **extra)
        if decision is None:
            return agent.Decision("deny", "The turn was stopped before anyone answered.")
        if decision.kind != "deny":
            approvals.approved_as_is(tool)
            for part in self.parts.values():
                part.approved(call, decision.arguments, asked or None)
        if decision.kind == "allow_always" and not outbound and not asked:
            ran = call if decision.arguments is None else replace(call, arguments=decision.arguments)
            rule = approvals.rule_for(ran)
            if rule is not None:
                approvals.remember(self.chat_id, rule)
        return decision

    def _diff_of(self, call) -> str | None:
        """What the call would change, where its tool can say (a write's diff); else None."""
        tool = self.tools.get(call.name)
        if tool is None or tool.preview is None:
            return None
        try:
            return tool.preview(toolbox.parse_arguments(call))
        except (ValueError, OSError):
            return None  # the call itself will fail and say why
        except Exception:
            log.exception("could not preview %s", call.name)
            return None
