"""The JSON script format the fake provider plays, and builders for it.

A script answers one request. It is plain JSON so a test can hand it to an
in-process FakeProvider or POST it to a fake running in another process:

    {"steps": [step, ...], "path": "/v1/chat/completions", "stream": null}

or just the list of steps (path defaults to /v1/chat/completions). "stream"
true/false forces an SSE or a single JSON answer whatever the request asked
(false = a server that ignores stream=True); null follows the request.
"model" (a text) makes the script answer only a request for that model: requests
made at the same time for different models (a compare) each get their own.
"quirks" (an object) is handed to the wire that plays the script: how a
known server departs from the reference API (see the wire's module). Each
step is an object with a "type"; see STEP_TYPES and the builders below.
"""
from __future__ import annotations

import json
from typing import Any

CHAT_PATH = "/v1/chat/completions"
RESPONSES_PATH = "/v1/responses"
MESSAGES_PATH = "/v1/messages"  # Anthropic
MODEL_CALL_PATHS = (CHAT_PATH, RESPONSES_PATH, MESSAGES_PATH)
MODELS_PATH = "/v1/models"

# type -> fields (besides "type"); documentation and a guard against typos.
STEP_TYPES: dict[str, tuple[str, ...]] = {
    "text": ("text",),                          # delta.content
    "reasoning": ("text", "field"),             # field: reasoning_content | reasoning
    "tool_call": ("index", "id", "name", "arguments"),  # first chunk of a call
    "tool_args": ("index", "arguments"),        # a piece of a call's arguments
    "finish": ("reason",),                      # finish_reason chunk
    "usage": ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens"),
    "error": ("status", "body", "retry_after", "headers"),
    "garbage": ("data",),                       # a `data:` line that is not JSON
    "raw": ("data",),                           # bytes exactly as given (utf-8)
    "html": ("status", "body"),                 # a text/html answer instead of SSE
    "cut": ("graceful",),                       # end the stream without [DONE]
    "delay": ("seconds",),                      # pause before each following delta
    "hang": (),                                 # block until release() or close()
    "blast": ("count", "template"),             # N content deltas written in bulk
    # Wire-specific steps; a wire without the concept skips them.
    "signature": ("signature",),                # Anthropic: signature of the open thinking block
    "redacted": ("data",),                      # Anthropic: a redacted_thinking block
    "encrypted": ("data",),                     # Responses: encrypted_content of the reasoning item
    # The whole answer made from the request by the obeying model (obey.py); the only step.
    "obey": (),
}

# Steps after which nothing more is sent, so no automatic finish/[DONE].
TERMINAL = {"error", "html", "cut"}


def normalize(script: Any) -> dict:
    """Turn a list-of-steps or {"steps": ...} into {"steps", "path"}; validate."""
    if isinstance(script, list):
        script = {"steps": script}
    if not isinstance(script, dict) or not isinstance(script.get("steps"), list):
        raise ValueError(f"a script is a list of steps or {{'steps': [...]}}, got {script!r}")
    if script.get("model") is not None and not isinstance(script["model"], str):
        raise ValueError(f"a script's model is a text, got {script['model']!r}")
    if not isinstance(script.get("quirks", {}), dict):
        raise ValueError(f"a script's quirks are an object, got {script['quirks']!r}")
    for step in script["steps"]:
        kind = step.get("type") if isinstance(step, dict) else None
        if kind not in STEP_TYPES:
            raise ValueError(f"unknown step {step!r}; known types: {sorted(STEP_TYPES)}")
        unknown = set(step) - {"type", *STEP_TYPES[kind]}
        if unknown:
            raise ValueError(f"step {step!r} has unknown fields {sorted(unknown)}")
    # No path: the script answers the next model call, whatever its wire API.
    return {"steps": list(script["steps"]), "path": script.get("path"),
            "stream": script.get("stream"), "quirks": dict(script.get("quirks") or {}),
            "model": script.get("model")}


def with_auto_finish(steps: list[dict]) -> list[dict]:
    """Add a finish_reason where a well-behaved server would, unless the
    script already has one or ends abnormally (so tests stay short)."""
    if any(s["type"] == "finish" for s in steps) or any(s["type"] in TERMINAL for s in steps):
        return steps
    reason = "tool_calls" if any(s["type"] == "tool_call" for s in steps) else "stop"
    # The finish chunk comes before the usage chunk on the real API.
    at = next((i for i, s in enumerate(steps) if s["type"] == "usage"), len(steps))
    return steps[:at] + [finish(reason)] + steps[at:]


# --- builders: each returns the JSON step -------------------------------------

def text(t: str) -> dict:
    return {"type": "text", "text": t}


def reasoning(t: str, field: str = "reasoning_content") -> dict:
    return {"type": "reasoning", "text": t, "field": field}


def tool_call(index: int, id: str, name: str, arguments: str = "") -> dict:
    return {"type": "tool_call", "index": index, "id": id, "name": name, "arguments": arguments}


def tool_args(index: int, arguments: str) -> dict:
    return {"type": "tool_args", "index": index, "arguments": arguments}


def finish(reason: str | None = "stop") -> dict:
    return {"type": "finish", "reason": reason}


def usage(prompt_tokens: int, completion_tokens: int, reasoning_tokens: int = 0,
          cached_tokens: int = 0) -> dict:
    return {"type": "usage", "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "reasoning_tokens": reasoning_tokens, "cached_tokens": cached_tokens}


def error(status: int, body: Any = None, retry_after: str | float | None = None,
          headers: dict | None = None) -> dict:
    step: dict = {"type": "error", "status": status}
    if body is not None:
        step["body"] = body
    if retry_after is not None:
        step["retry_after"] = str(retry_after)
    if headers:
        step["headers"] = headers
    return step


def garbage(data: str = "this is not json") -> dict:
    return {"type": "garbage", "data": data}


def raw(data: str) -> dict:
    return {"type": "raw", "data": data}


def html(body: str = "<html><body><h1>Welcome to nginx!</h1></body></html>", status: int = 200) -> dict:
    return {"type": "html", "status": status, "body": body}


def cut(graceful: bool = False) -> dict:
    return {"type": "cut", "graceful": graceful}


def delay(seconds: float) -> dict:
    return {"type": "delay", "seconds": seconds}


def hang() -> dict:
    return {"type": "hang"}


def signature(sig: str) -> dict:
    return {"type": "signature", "signature": sig}


def redacted(data: str) -> dict:
    return {"type": "redacted", "data": data}


def encrypted(data: str) -> dict:
    return {"type": "encrypted", "data": data}


def blast(count: int, template: str = "{i} ") -> dict:
    return {"type": "blast", "count": count, "template": template}


def obey() -> list[dict]:
    """A script answered by the worst-case obeying model (obey.py) from the request it gets."""
    return [{"type": "obey"}]


def obeys(script: dict) -> bool:
    return any(step["type"] == "obey" for step in script["steps"])


def reply(t: str = "Hello from the fake provider.", prompt_tokens: int = 5,
          completion_tokens: int | None = None) -> list[dict]:
    """A complete ordinary answer: text, finish, usage."""
    return [text(t), finish("stop"),
            usage(prompt_tokens, completion_tokens if completion_tokens is not None else max(1, len(t) // 4))]


# --- wire encoding ------------------------------------------------------------

def default_error_body(status: int) -> dict:
    messages = {400: "Bad request.", 401: "Incorrect API key provided.", 403: "Forbidden.",
                404: "The model does not exist.", 429: "Rate limit reached.",
                500: "The server had an error while processing your request."}
    kinds = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
             429: "rate_limit_error"}
    return {"error": {"message": messages.get(status, f"Error {status}."),
                      "type": kinds.get(status, "server_error"), "code": None, "param": None}}


class ChunkEncoder:
    """Builds `data: {chat.completion.chunk}\\n\\n` events for one response."""

    def __init__(self, completion_id: str, model: str, created: int):
        # Everything around the delta is constant, so it is rendered once; the
        # blast benchmark writes 20 000 of these.
        head = json.dumps({"id": completion_id, "object": "chat.completion.chunk",
                           "created": created, "model": model})[:-1]
        self._prefix = (head + ', "choices": [{"index": 0, "delta": ').encode()
        self._head = head

    def delta(self, delta: dict, finish_reason: str | None = None) -> bytes:
        return b"".join((b"data: ", self._prefix, json.dumps(delta).encode(),
                         b', "finish_reason": ', json.dumps(finish_reason).encode(), b"}]}\n\n"))

    def content(self, text: str) -> bytes:
        return b"".join((b"data: ", self._prefix, b'{"content": ', json.dumps(text).encode(),
                         b'}, "finish_reason": null}]}\n\n'))

    def usage(self, step: dict) -> bytes:
        prompt, completion = step.get("prompt_tokens", 0), step.get("completion_tokens", 0)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion,
                 "prompt_tokens_details": {"cached_tokens": step.get("cached_tokens", 0)},
                 "completion_tokens_details": {"reasoning_tokens": step.get("reasoning_tokens", 0)}}
        return ("data: " + self._head + ', "choices": [], "usage": ' + json.dumps(usage) + "}\n\n").encode()


def step_delta(step: dict) -> dict:
    """The `delta` object a content-like step puts on the wire."""
    kind = step["type"]
    if kind == "text":
        return {"content": step["text"]}
    if kind == "reasoning":
        return {step.get("field") or "reasoning_content": step["text"]}
    if kind == "tool_call":
        return {"tool_calls": [{"index": step.get("index", 0), "id": step["id"], "type": "function",
                                "function": {"name": step["name"],
                                             "arguments": step.get("arguments", "")}}]}
    if kind == "tool_args":
        return {"tool_calls": [{"index": step.get("index", 0),
                                "function": {"arguments": step["arguments"]}}]}
    raise ValueError(kind)
