"""The server's WebSocket events: one definition per type, its fields and their types.

Every event of `/ws/<chat_id>` (CONTRACT §4, §5 and docs/PROTOCOL.md) and of
`/ws/_app` is defined here once. `ChatHub.publish` refuses a type or field not
defined here, the events built for one socket go through `make`, the tests hold
the table to the contract's (tests/fixtures/contract-events.md), and the web
UI's tests read it as JSON (`python -m backend.features.event_types --json`, checked
in as tests/fixtures/event-types.json). A feature's events join the table when it
registers (`add`, from backend/turns/features.py).

A field's type is a Python type (`str`, `int`, `float`, `bool`, `list`, `dict`),
`None` for JSON null, a union such as `int | None`, `list[X]`, or a TypedDict
for an object of known keys. JSON draws no line between 1 and 1.0, so an int
passes as a float; a bool never passes as an int.
"""
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Mapping, NotRequired, TypedDict

from backend.core.status import TURN_OUTCOMES


class QueueItem(TypedDict):
    message_id: int
    preview: str
    steer: bool


class ToolCall(TypedDict):
    id: str
    name: str
    arguments: str


class SourceItem(TypedDict):
    n: int
    title: str
    snippet: str
    url: NotRequired[str]
    file_id: NotRequired[str]
    locator: NotRequired[dict]  # knowledge: {"page","page_index"} | {"heading"} | {"lines"} (CONTRACT §8)
    # A knowledge passage's base and document, where the viewer opens it, and its file's path.
    knowledge_id: NotRequired[str]
    document_id: NotRequired[int]
    path: NotRequired[str]
    memory_id: NotRequired[str]  # a memory the request carried (CONTRACT §8)


class TurnSource(SourceItem):
    kind: str  # web | knowledge | memory: a `sources` event's kind, on each item


class ResearchState(TypedDict):
    phase: str
    searches: int
    found: int
    read: int
    query: NotRequired[str]
    url: NotRequired[str]
    title: NotRequired[str]
    notice: NotRequired[str]


class OpenDocument(TypedDict):
    """A document text a call of the turn is writing (the documents feature's doc_open and doc_delta)."""
    doc_id: str
    title: str
    language: str
    call_id: str
    content: str  # what its doc_open and doc_delta events carried so far


class Outbound(TypedDict):
    sends: str  # what the call would send off this computer
    reason: str  # why it asks: what the conversation read, where the text goes


class LocalAddress(TypedDict):
    url: str  # the address on this computer or the person's network that the call would read
    reason: str  # why it asks


class Untrusted(TypedDict):
    read: list[str]  # where the text from outside that the conversation read came from
    reason: str  # why it asks whatever the rules say (a `remember`: memory poisoning)


class MemoryUpdate(TypedDict):
    memory_id: str  # the memory a `remember` would update instead of adding one
    text: str  # its text now


class Versions(TypedDict):
    index: int
    count: int
    ids: list[int]


@dataclass(frozen=True)
class Event:
    """One event type: the fields it always carries, those it may carry, and their types."""

    name: str
    required: Mapping[str, Any] = field(default_factory=dict)
    optional: Mapping[str, Any] = field(default_factory=dict)
    # What `turn_id` holds: `str` for events only a turn publishes, `None` for those none does.
    turn_id: Any = str | None
    values: Mapping[str, tuple] = field(default_factory=dict)  # the only values a field takes
    common: bool = True  # carries event_id, turn_id and epoch (every chat event but pong)
    required_keys: frozenset = field(init=False, repr=False)
    keys: frozenset = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "required_keys", frozenset(self.required))
        object.__setattr__(self, "keys", frozenset(self.required) | frozenset(self.optional))

    def all_required(self) -> dict:
        """Every field the event carries, the common ones included (not `type`)."""
        if not self.common:
            return dict(self.required)
        return {"event_id": int, "turn_id": self.turn_id, "epoch": str, **self.required}


def _table(*defs: Event) -> dict[str, Event]:
    return {d.name: d for d in defs}


# Events a turn publishes: turn_id names it.
TURN = str


class CompareReply(TypedDict):
    model_id: str
    message_id: int


# What the events of one reply of a compare add (CONTRACT §10): its model, and its message where
# the event does not name one already (docs/PROTOCOL.md "Compare").
MODEL = {"model_id": str}
REPLY = {"model_id": str, "message_id": int}

CHAT_EVENTS = _table(
    # CONTRACT §4, with the fields docs/PROTOCOL.md adds.
    Event("accepted", {"request_id": str, "message_id": int, "queued": bool, "attachments": list[dict]},
          {"steer": bool,  # a repeated request_id is answered without `steer`
           "executes_plan": dict}),  # an execute_plan's message: {"plan_id", "steps"} as executed
    # A compare's turn_start names its replies, in column order (CONTRACT §10, docs/PROTOCOL.md "Compare").
    Event("turn_start", {"user_message_id": int | None, "continue_message_id": int | None},
          {"compare": list[CompareReply]}, turn_id=TURN),
    Event("reasoning", {"delta": str, "message_id": int}, MODEL, turn_id=TURN),
    Event("content", {"delta": str, "message_id": int}, MODEL, turn_id=TURN),
    Event("tool_preparing", {"call_id": str, "name": str, "message_id": int}, MODEL, turn_id=TURN),
    Event("tool_start", {"call_id": str, "name": str, "arguments": str, "message_id": int | None}, MODEL,
          turn_id=TURN),
    Event("approval_required", {"approval_id": str, "call_id": str, "name": str, "arguments": str,
                                "can_always": bool},
          {"changed": bool, "description": str, "diff": str, "outbound": Outbound,
           "local": LocalAddress, "untrusted": Untrusted, "updates": MemoryUpdate, **REPLY}, turn_id=TURN),
    Event("tool_end", {"call_id": str, "name": str, "ok": bool, "output": str, "duration_ms": int},
          {"diff": str, **REPLY}, turn_id=TURN),
    Event("message_saved", {"message_id": int, "role": str}, MODEL, turn_id=TURN,
          values={"role": ("user", "assistant", "tool")}),
    Event("usage", {"input_tokens": int, "output_tokens": int, "estimated": bool, "reasoning_tokens": int,
                    "cached_tokens": int, "cost": float | None}, REPLY, turn_id=TURN),
    Event("done", {"message_id": int}, MODEL, turn_id=TURN),
    Event("error", {"code": str, "message": str, "retryable": bool}, REPLY),
    Event("turn_end", {"status": str}, turn_id=TURN,
          values={"status": TURN_OUTCOMES}),
    Event("title_update", {"title": str}, turn_id=None),
    Event("fallback", {"from_model_id": str | None, "to_model_id": str, "reason": str}, REPLY, turn_id=TURN),
    Event("queue", {"items": list[QueueItem]}, turn_id=None),
    Event("snapshot", {"message_id": int | None, "content": str, "reasoning": str, "tool_calls": list[ToolCall],
                       "status": str, "last_event_id": int},
          # `queue` when no turn is retained (turn_id null); `sources` (each with its `kind`), a
          # research turn's newest `research` progress and the `documents` its calls are still
          # writing when there are any (docs/PROTOCOL.md).
          {"queue": list[QueueItem], "sources": list[TurnSource], "research": ResearchState,
           "documents": list[OpenDocument], **MODEL}),
    Event("pong", common=False),
    # docs/PROTOCOL.md: a steering message joined the running turn.
    Event("steered", {"message_id": int, "queued_id": int, "content": str}, turn_id=TURN),
    # CONTRACT §5 (versions and branches), as docs/PROTOCOL.md details it.
    Event("branched", {"message_id": int, "parent_id": int | None, "role": str, "content": str,
                       "attachments": list[dict], "versions": Versions, "model_id": str | None},
          values={"role": ("user", "assistant")}),
    Event("active_changed", {"leaf_id": int}, turn_id=None),
    # CONTRACT §6 (context): a turn left older messages out; `notice` says why a summary could
    # not be made (docs/PROTOCOL.md). `compacted` is backend/features/compaction/'s.
    Event("context_trimmed", {"messages_omitted": int, "tokens_before": int, "tokens_after": int},
          {"notice": str, **REPLY}, turn_id=TURN),
    # docs/PROTOCOL.md "Live tool progress": a running call's time so far, last output, MCP progress.
    Event("tool_progress", {"call_id": str, "name": str, "elapsed_ms": int},
          {"output": str, "progress": float | None, "total": float | None, "message": str, **REPLY},
          turn_id=TURN),
    # CONTRACT §8: sources a tool of the turn brought in, numbered from 1 per turn (only the new ones).
    Event("sources", {"kind": str, "items": list[SourceItem]}, REPLY, turn_id=TURN,
          values={"kind": ("web", "knowledge", "memory")}),
)

# `/ws/_app` (docs/PROTOCOL.md "App-wide events"): state, not steps, so no event_id or epoch.
APP_EVENTS = _table(
    Event("ready", common=False),
    Event("chat_changed", {"chat": dict}, common=False),
    Event("chat_removed", {"chat_id": str}, common=False),
    Event("folders_changed", common=False),
    Event("resync", common=False),
    Event("pong", common=False),
    Event("error", {"code": str, "message": str, "retryable": bool}, common=False),
)


def add(*defs: Event) -> None:
    """Define a feature's chat events (backend/turns/features.py); a name defined already is refused."""
    taken = [d.name for d in defs if d.name in CHAT_EVENTS]
    if taken:
        raise ValueError(f"chat event {', '.join(taken)} is defined already")
    CHAT_EVENTS.update(_table(*defs))


def remove(*names: str) -> None:
    """Drop a feature's events (it is registered again)."""
    for name in names:
        CHAT_EVENTS.pop(name, None)


# --- checking ------------------------------------------------------------------------------

def refusal(type_: str, keys, table: Mapping[str, Event] = CHAT_EVENTS) -> str | None:
    """Why an event of this type with these fields (common ones excluded) is not one; None when it is."""
    spec = table.get(type_)
    if spec is None:
        return f"unknown event type {type_!r}"
    keys = set(keys)
    said = []
    if spec.required_keys - keys:
        said.append(f"{type_} lacks {', '.join(sorted(spec.required_keys - keys))}")
    if keys - spec.keys:
        said.append(f"{type_} has no field {', '.join(sorted(keys - spec.keys))}")
    return "; ".join(said) or None


def make(type_: str, table: Mapping[str, Event] = CHAT_EVENTS, **fields) -> dict:
    """An event for one socket (not through a hub), its fields checked against its definition."""
    spec = table.get(type_)
    common = ("event_id", "turn_id", "epoch") if spec is not None and spec.common else ()
    if any(k not in fields for k in common):
        raise ValueError(f"{type_} needs event_id, turn_id and epoch")
    problem = refusal(type_, [k for k in fields if k not in common], table)
    if problem:
        raise ValueError(problem)
    return {"type": type_, **fields}


def problems(event: dict, table: Mapping[str, Event] = CHAT_EVENTS) -> list[str]:
    """Everything about `event` (as sent, type included) that its definition does not allow."""
    kind = event.get("type")
    spec = table.get(kind) if kind is not None else None
    if spec is None:
        return [f"unknown event type {kind!r}"]
    where = f"{kind} {event['event_id']}" if "event_id" in event else str(kind)
    required = spec.all_required()
    allowed = {**required, **spec.optional}
    out = [f"{where} lacks {k}" for k in required if k not in event]
    out += [f"{where} has no field {k}" for k in event if k != "type" and k not in allowed]
    for key, value in event.items():
        if key in allowed and not conforms(value, allowed[key]):
            out.append(f"{where}: {key} = {value!r} is not {describe(allowed[key])}")
        elif key in spec.values and value not in spec.values[key]:
            out.append(f"{where}: {key} = {value!r} is not one of {', '.join(spec.values[key])}")
    return out


def conforms(value, spec) -> bool:
    """Whether a JSON value (as json.loads gives it) is of the field type `spec`."""
    if spec is None:
        return value is None
    if isinstance(spec, types.UnionType):
        return any(conforms(value, s) for s in typing.get_args(spec))
    if typing.is_typeddict(spec):
        return isinstance(value, dict) and _fits(value, spec)
    if typing.get_origin(spec) is list:
        (item,) = typing.get_args(spec)
        return isinstance(value, list) and all(conforms(v, item) for v in value)
    if isinstance(value, bool):
        return spec is bool
    if spec is float:
        return isinstance(value, (int, float))
    return isinstance(value, spec)


def _fits(value: dict, shape) -> bool:
    """Whether a dict has the keys of a TypedDict, and no other, each of its type."""
    hints = typing.get_type_hints(shape)
    return (shape.__required_keys__ <= value.keys() <= hints.keys()
            and all(conforms(v, hints[k]) for k, v in value.items()))


# --- export for the web UI's tests --------------------------------------------------------

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def describe(spec) -> Any:
    """A field type as JSON: a name, a list of alternatives, {"array": item} or {"object": fields}."""
    if spec is None or spec is type(None):
        return "null"
    if isinstance(spec, types.UnionType):
        return [describe(s) for s in typing.get_args(spec)]
    if typing.is_typeddict(spec):
        hints = typing.get_type_hints(spec)
        return {"object": {"required": {k: describe(hints[k]) for k in hints if k in spec.__required_keys__},
                           "optional": {k: describe(hints[k]) for k in hints if k in spec.__optional_keys__}}}
    if typing.get_origin(spec) is list:
        return {"array": describe(typing.get_args(spec)[0])}
    return _JSON_TYPES[spec]


def export() -> dict:
    def one(e: Event) -> dict:
        return {"required": {k: describe(t) for k, t in e.all_required().items()},
                "optional": {k: describe(t) for k, t in e.optional.items()},
                "values": {k: list(v) for k, v in e.values.items()}}

    return {"generated_by": "python -m backend.features.event_types --json (from backend/turns/events.py and the features)",
            "chat": {name: one(e) for name, e in CHAT_EVENTS.items()},
            "app": {name: one(e) for name, e in APP_EVENTS.items()}}


def export_json() -> str:
    """`export()` as text, one event a line (a change to a definition is a one-line diff)."""
    data = export()

    def table(name: str) -> str:
        rows = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in data[name].items())
        return f'  "{name}": {{\n{rows}\n  }}'

    return ('{\n  "generated_by": ' + json.dumps(data["generated_by"]) + ",\n"
            + ",\n".join(table(name) for name in ("chat", "app")) + "\n}\n")

