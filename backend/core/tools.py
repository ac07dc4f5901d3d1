"""The tool registry: what a model may call, and how each call is run.

A tool declares whether it may run beside others (`concurrent`), whether a
person must approve each call (`needs_approval`) and whether it changes
anything (`read_only`: a chat in plan mode is offered only read-only tools;
unknown = it changes things). A tool may show what a call would change before it
runs (`preview`: a unified diff, or a sentence saying why there is none), and a
running call may report how it is going through the context it is given
(`report_progress`). Failures are results: a tool
that raises, or a name nobody registered, becomes an error result the model
reads, never a crashed turn.
"""
from __future__ import annotations

import json
import posixpath
import time
from dataclasses import dataclass
from typing import Any, Callable

from backend.core.text import well_formed, well_formed_value
from backend.core.types import Message, ToolCall, ToolSpec

MAX_RESULT_CHARS = 100_000  # a tool's output beyond this is cut, with a note to the model


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    run: Callable[[dict, Any], str]  # (arguments, cancel token) -> output text
    concurrent: bool = False
    needs_approval: bool = False
    read_only: bool = False  # changes nothing outside the conversation (CONTRACT §7, plan mode)
    preview: Callable[[dict], str | None] | None = None  # (arguments) -> what the call would change
    # What makes two calls the same for the loop guard (backend/core/agent.py): arguments that
    # name a path ("a.txt", "./a.txt" and "a.txt/" are one file), and text whose surrounding
    # whitespace changes nothing (a command line).
    path_arguments: tuple[str, ...] = ()
    trimmed_arguments: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.spec.name

    def comparable(self, args: dict) -> dict:
        """`args` as the loop guard compares them: declared paths in one spelling, declared text trimmed."""
        out = dict(args)
        for name in self.path_arguments:
            if isinstance(out.get(name), str):
                out[name] = one_spelling(out[name])
        for name in self.trimmed_arguments:
            if isinstance(out.get(name), str):
                out[name] = out[name].strip()
        return out


def one_spelling(path: str) -> str:
    """A POSIX path written one way: `./a//b/` and `a/b` are both `a/b`; "" is "."."""
    path = posixpath.normpath(path)  # "" -> ".", drops "./", "//" and a trailing "/"
    # normpath keeps exactly two leading slashes (POSIX leaves their meaning open); one is meant.
    return "/" + path.lstrip("/") if path.startswith("//") else path


class ToolRegistry:
    def __init__(self, tools: list[Tool] | None = None, withheld: dict[str, str] | None = None,
                 withheld_prefixes: dict[str, str] | None = None):
        self._tools: dict[str, Tool] = {}
        # Tools the chat has but does not offer now (its mode), by name: why, for the model.
        self._withheld: dict[str, str] = dict(withheld or {})
        # Whole groups it cannot offer now, by name prefix (an MCP server waiting for a sign-in,
        # whose tools could not even be listed): why.
        self._withheld_prefixes: dict[str, str] = dict(withheld_prefixes or {})
        for tool in tools or []:
            self.add(tool)

    def withheld(self, name: str) -> str | None:
        """Why the chat does not offer a tool it has (its mode, a server's sign-in), or None."""
        if name in self._tools:
            return None
        if name in self._withheld:
            return self._withheld[name]
        return next((why for prefix, why in self._withheld_prefixes.items() if name.startswith(prefix)), None)

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def all(self) -> list[Tool]:
        return list(self._tools.values())

    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(t.spec for t in self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


@dataclass(frozen=True)
class ToolOutcome:
    result: Message  # role "tool", linked by tool_call_id
    ok: bool
    duration_ms: int


def error_result(call: ToolCall, text: str, started: float | None = None) -> ToolOutcome:
    took = 0 if started is None else int((time.monotonic() - started) * 1000)
    return ToolOutcome(Message(role="tool", content=well_formed(text), tool_call_id=call.id, is_error=True),
                       False, took)


def parse_arguments(call: ToolCall) -> dict:
    """The call's arguments as an object; raises ValueError with a message for the model."""
    if not call.arguments.strip():
        return {}
    try:
        args = json.loads(call.arguments)
    except json.JSONDecodeError as exc:
        raise ValueError(f"The arguments of {call.name} are not valid JSON ({exc.msg}). Send a JSON object.")
    if not isinstance(args, dict):
        raise ValueError(f"The arguments of {call.name} must be a JSON object.")
    return args


class CallContext:
    """What a running call gets as its cancel token: the turn's token, and where its progress goes."""

    def __init__(self, cancel, progress: Callable[..., None]):
        self._cancel = cancel
        self.progress = progress  # (output=, progress=, total=, message=) -> None

    def __getattr__(self, name):  # is_set, wait, on_cancel, reason: the turn's token answers
        return getattr(self._cancel, name)


def search_arguments(args: dict, tool: str, key: str, what: str, max_chars: int, default_limit: int,
                     max_limit: int) -> tuple[str, int]:
    """A search tool's query (`args[key]`, stripped) and `limit`; ValueError with a sentence the model
    can act on (`what` says what the query is: "the words to search for")."""
    query, limit = args.get(key), args.get("limit", default_limit)
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f'{tool} needs "{key}": {what}.')
    if len(query.strip()) > max_chars:
        raise ValueError(f"The query is {len(query.strip())} characters long; search with at most {max_chars}.")
    if limit is None:
        limit = default_limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        raise ValueError(f'"limit" must be a whole number from 1 to {max_limit} (it was {json.dumps(limit)}).')
    return query.strip(), limit


def report_progress(cancel, **fields) -> None:
    """Tell whoever runs the call how it is going: `output` (new text), or MCP's
    `progress`, `total` and `message`. Nothing happens when nobody listens."""
    progress = getattr(cancel, "progress", None)
    if progress is not None:
        # A command's output or an MCP server's message goes out as an event as it is.
        progress(**well_formed_value(fields))


def execute(tool: Tool | None, call: ToolCall, cancel, progress: Callable[..., None] | None = None) -> ToolOutcome:
    """Run one call to completion and describe the result for the model; `progress`
    receives what the call reports while it runs."""
    started = time.monotonic()
    if tool is None:
        return error_result(call, f"There is no tool named {call.name!r} in this chat. "
                                  f"Use only the tools you were given.", started)
    try:
        args = parse_arguments(call)
        output = tool.run(args, cancel if progress is None else CallContext(cancel, progress))
    except ValueError as exc:
        return error_result(call, str(exc), started)
    except Exception as exc:  # a tool's failure is information for the model, not a crash
        return error_result(call, f"{call.name} failed: {type(exc).__name__}: {exc}", started)
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[output cut at {MAX_RESULT_CHARS} characters]"
    took = int((time.monotonic() - started) * 1000)
    # A tool's text (a plugin's, an MCP server's) may hold half a surrogate pair; the
    # result is saved, sent to every socket and to the model, so it is made well-formed here.
    return ToolOutcome(Message(role="tool", content=well_formed(text), tool_call_id=call.id), True, took)
