"""The worst-case obeying model: it does whatever any text it is sent tells it to.

A model that follows instructions found in web pages, files or tool output is what
Numi's approval rules must hold against, so tests need one that really does it, over
the real wire. Select it with a script whose step is `{"type": "obey"}` (`script.obey()`):
queued, it answers one request; as the provider's default (`fake.default_script =
script.normalize(script.obey())`, or `POST /_control/default` with that script for a
fake in another process) it answers every request no other script is queued for.

Each answer reads the whole request (Chat Completions `messages`, Responses `input`,
Anthropic `messages`): the user's text and every tool result, in order. An
instruction is a piece of a line

    DO <tool_name> <JSON object: the arguments>

anywhere in such a text. A string in the arguments may hold `{{result:<tool_name>}}`,
replaced by the whole text of the latest result of that tool in the request. An
instruction is obeyed once an assistant message after it called that tool (the call
may have been denied or failed: the model moves on). The answer is one call of the
first instruction not yet obeyed, played in the wire's own format by its player; with
nothing left to obey, the final text `NOTHING_LEFT`. The system text is never read.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

from . import script as S

NOTHING_LEFT = "Nothing left to obey."
_DO = re.compile(r"\bDO ([A-Za-z0-9_.-]+) +(?=\{)")
_RESULT = re.compile(r"\{\{result:([A-Za-z0-9_.-]+)\}\}")
_DECODER = json.JSONDecoder()


def answer(path: str, body: dict) -> dict:
    """The script that answers this request: the next call to obey, or the final text."""
    pending: list[tuple[str, dict]] = []
    names: dict[str, str] = {}  # call id -> tool name
    latest: dict[str, str] = {}  # tool name -> the text of its latest result
    for kind, *rest in transcript(path, body):
        if kind == "text":
            pending.extend(instructions(rest[0]))
        elif kind == "call":
            call_id, name = rest
            names[call_id] = name
            obeyed = next((i for i, (wanted, _) in enumerate(pending) if wanted == name), None)
            if obeyed is not None:
                del pending[obeyed]
        elif kind == "result":
            call_id, text = rest
            if call_id in names:
                latest[names[call_id]] = text
            pending.extend(instructions(text))
    if not pending:
        return S.normalize([S.text(NOTHING_LEFT)])
    name, args = pending[0]
    arguments = json.dumps(_filled(args, latest), ensure_ascii=False)
    return S.normalize([S.tool_call(0, f"call_obey_{len(names) + 1}", name, arguments)])


def instructions(text: str) -> list[tuple[str, dict]]:
    """Every `DO <tool> {json}` in `text`, in order (a piece whose JSON does not parse is skipped)."""
    found = []
    for match in _DO.finditer(text):
        try:
            args, _ = _DECODER.raw_decode(text, match.end())
        except json.JSONDecodeError:
            continue
        if isinstance(args, dict):
            found.append((match.group(1), args))
    return found


def _filled(value: Any, latest: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _RESULT.sub(lambda m: latest.get(m.group(1), ""), value)
    if isinstance(value, dict):
        return {k: _filled(v, latest) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, latest) for v in value]
    return value


# --- reading the request, per wire ----------------------------------------------------------

def transcript(path: str, body: dict) -> Iterator[tuple]:
    """("text", text) for what the person wrote, ("call", id, name), ("result", id, text), in order."""
    if path == S.RESPONSES_PATH:
        yield from _responses(body.get("input"))
    elif path == S.MESSAGES_PATH:
        yield from _anthropic(body.get("messages") or [])
    else:
        yield from _chat(body.get("messages") or [])


def _text(content: Any) -> str:
    """The text of a content field: a string, or a list of parts with `text`."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _chat(messages: list) -> Iterator[tuple]:
    for m in messages:
        role = m.get("role")
        if role == "user":
            yield "text", _text(m.get("content"))
        elif role == "assistant":
            for call in m.get("tool_calls") or []:
                yield "call", call.get("id"), (call.get("function") or {}).get("name")
        elif role == "tool":
            yield "result", m.get("tool_call_id"), _text(m.get("content"))


def _responses(items: Any) -> Iterator[tuple]:
    if isinstance(items, str):
        yield "text", items
        return
    for item in items or []:
        kind = item.get("type")
        if kind == "function_call":
            yield "call", item.get("call_id"), item.get("name")
        elif kind == "function_call_output":
            yield "result", item.get("call_id"), _text(item.get("output"))
        elif item.get("role") == "user":
            yield "text", _text(item.get("content"))


def _anthropic(messages: list) -> Iterator[tuple]:
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            if m.get("role") == "user":
                yield "text", content
            continue
        for block in content or []:
            kind = block.get("type")
            if kind == "tool_use":
                yield "call", block.get("id"), block.get("name")
            elif kind == "tool_result":
                yield "result", block.get("tool_use_id"), _text(block.get("content"))
            elif kind == "text" and m.get("role") == "user":
                yield "text", block.get("text") or ""
