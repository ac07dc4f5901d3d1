"""One internal message model and one stream-event model for every wire API.

Adapters translate these to and from their provider's wire format; the agent
loop, the store and the UI protocol only ever see these types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text exactly as the model produced it


@dataclass(frozen=True)
class Image:
    """An image in a user message, as bytes the model can see."""
    mime: str  # image/png, image/jpeg, image/gif, image/webp
    data: str  # base64


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant" | "tool"
    content: str = ""
    reasoning: str = ""
    # Provider-specific structured reasoning (signatures, encrypted items) that
    # some APIs need replayed verbatim; opaque to everything but its adapter.
    reasoning_details: tuple[dict, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    is_error: bool = False  # a tool result that reports a failure
    model_id: str | None = None  # which catalog model wrote it (assistant only)
    images: tuple[Image, ...] = ()  # user messages only


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict  # JSON Schema of the arguments object


@dataclass(frozen=True)
class ProviderConfig:
    id: str
    name: str  # as the person configured it; named in error messages
    kind: str  # "openai" | "anthropic" | "openai_compatible"
    base_url: str | None
    api_key: str | None
    timeout: float = 60.0  # seconds without a byte before a read gives up


@dataclass(frozen=True)
class ModelRequest:
    provider: ProviderConfig
    wire_api: str  # "chat_completions" | "responses" | "anthropic_messages"
    model: str  # the upstream model name
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    # temperature, top_p, max_tokens, reasoning_effort; absent = provider default
    params: dict[str, Any] = field(default_factory=dict)
    # The catalog model asking. Signed reasoning is replayed only to the model
    # that wrote it (Message.model_id == model_id); any other model gets none.
    model_id: str | None = None
    max_output_tokens: int | None = None  # the model's own cap, when the catalog knows it


# --- stream events an adapter yields, in the order the provider sent them ---

@dataclass(frozen=True)
class TextDelta:
    text: str
    type: str = "text"


@dataclass(frozen=True)
class ReasoningDelta:
    text: str
    type: str = "reasoning"


@dataclass(frozen=True)
class ToolCallStart:
    """A tool call began; its arguments follow as ToolCallDelta with the same index."""
    index: int
    id: str
    name: str
    type: str = "tool_call_start"


@dataclass(frozen=True)
class ToolCallDelta:
    index: int
    arguments: str
    type: str = "tool_call_delta"


@dataclass(frozen=True)
class ReasoningDetail:
    """A structured reasoning item to store and replay (e.g. a signed thinking block)."""
    detail: dict
    type: str = "reasoning_detail"


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False
    type: str = "usage"


@dataclass(frozen=True)
class StepEnd:
    finish_reason: str | None  # "stop" | "tool_calls" | "length" | None
    type: str = "step_end"


StreamEvent = Union[TextDelta, ReasoningDelta, ToolCallStart, ToolCallDelta,
                    ReasoningDetail, Usage, StepEnd]
