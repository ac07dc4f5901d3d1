"""What part of a chat's history goes to the model, within a token budget.

History is cut between turns only (a turn = a user message and the assistant
and tool messages after it), so a request never starts with an orphan tool
result, and an assistant's tool calls always arrive with their results.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from backend.core.tokens import message_tokens
from backend.core.types import Message


class HistoryTooLarge(Exception):
    code = "context_too_long"


@dataclass(frozen=True)
class Window:
    messages: tuple[Message, ...]
    omitted: int  # older messages left out

    def notice(self) -> str:
        """A line for the system prompt, so the model does not invent what it cannot see."""
        if not self.omitted:
            return ""
        return (f"Note: the {self.omitted} oldest messages of this conversation were left out to fit "
                f"the context window. Do not assume what they said; ask if it matters.")


def turns_of(messages: Sequence) -> list[list]:
    """Messages (or rows) grouped into turns: each user message with what follows it."""
    turns: list[list] = []
    for message in messages:
        if message.role == "user" or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return turns


def repair_tool_pairs(messages: list[Message]) -> list[Message]:
    """Give every tool call a result and drop results without a call.

    A turn stopped or killed between a tool call and its result leaves a call
    unanswered; every wire API rejects that, so the model is told it did not run.
    """
    out: list[Message] = []
    pending: dict[str, str] = {}
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id in pending:
                pending.pop(message.tool_call_id)
                out.append(message)
            continue
        out.extend(_missing_results(pending))
        pending = {c.id: c.name for c in message.tool_calls} if message.role == "assistant" else {}
        out.append(message)
    out.extend(_missing_results(pending))
    return out


def _missing_results(pending: dict[str, str]) -> list[Message]:
    return [Message(role="tool", tool_call_id=call_id, is_error=True,
                    content=f"{name} did not run to completion (the turn was stopped or interrupted).")
            for call_id, name in pending.items()]


def fit(messages: list[Message], max_tokens: int, max_messages: int | None = None,
        cost=message_tokens) -> Window:
    """The newest whole turns within the token budget (and `max_messages`, if given); the newest turn must fit alone."""
    messages = repair_tool_pairs([m for m in messages if m.role != "system"])
    max_messages = len(messages) if max_messages is None else max_messages
    turns = turns_of(messages)
    kept: list[list[Message]] = []
    count = tokens = 0
    for index, turn in enumerate(reversed(turns)):
        size = sum(cost(m) for m in turn)
        if index == 0 and (size > max_tokens or len(turn) > max_messages):
            raise HistoryTooLarge(
                f"This message and its reply are too long for the model's context window "
                f"(about {size:,} tokens; {max(max_tokens, 0):,} are left for them). "
                f"Shorten the message, pick a model with a larger window, or start a new chat.")
        if count + len(turn) > max_messages or tokens + size > max_tokens:
            break
        kept.append(turn)
        count += len(turn)
        tokens += size
    window = [m for turn in reversed(kept) for m in turn]
    # A request must begin with a user message; a history that opens with a
    # reply (its user message was deleted) gets that reply dropped.
    while window and window[0].role != "user":
        window.pop(0)
    return Window(tuple(window), len(messages) - len(window))

