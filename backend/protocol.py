"""Client frames of the WebSocket protocol (CONTRACT §4), parsed and checked."""
from __future__ import annotations

import json

from backend import json_input

MAX_CONTENT_CHARS = 200_000
MAX_ATTACHMENTS = 20
MIN_COMPARE, MAX_COMPARE = 2, 4  # CONTRACT §10: models one compare asks


class BadFrame(Exception):
    """A frame the server cannot act on; the message tells the client why."""


# type -> {field: (python type(s), required)}
_SCHEMA: dict[str, dict[str, tuple]] = {
    "send": {"request_id": (str, True), "content": (str, True), "attachments": (list, False),
             "mode": (str, False), "research": (bool, False), "compare": (list, False), "image": (bool, False)},
    "stop": {"clear_queue": (bool, False)},
    "resume": {"after_event_id": (int, True), "epoch": (str, False)},
    "edit": {"message_id": (int, True), "content": (str, True), "request_id": (str, False)},
    "regenerate": {"message_id": (int, True), "model_id": (str, False), "request_id": (str, False)},
    "continue": {},
    "approve": {"approval_id": (str, True), "decision": (str, True), "reason": (str, False),
                "arguments": ((dict, str), False)},
    "queue_discard": {"message_id": (int, True)},
    "answer": {"question_id": (str, True), "answers": (dict, False), "dismissed": (bool, False)},
    "execute_plan": {"plan_id": (str, True), "request_id": (str, False)},  # CONTRACT §7
    "ping": {},
}
DECISIONS = ("allow", "allow_always", "deny")


def parse(text) -> dict:
    """The frame as a dict with checked fields, or BadFrame."""
    if not isinstance(text, str):
        raise BadFrame("Frames must be text holding one JSON object.")
    frame = _strict_json(text, "The frame")
    if not isinstance(frame, dict):
        raise BadFrame("The frame must be a JSON object.")
    kind = frame.get("type")
    if not isinstance(kind, str) or kind not in _SCHEMA:
        known = ", ".join(_SCHEMA)
        shown = repr(kind) if len(repr(kind)) <= 60 else repr(kind)[:59] + "…"
        raise BadFrame(f"Unknown frame type {shown}; expected one of: {known}." if kind is not None
                       else "The frame has no \"type\".")
    for name, (types, required) in _SCHEMA[kind].items():
        if name not in frame or frame[name] is None:
            if required:
                raise BadFrame(f"A {kind} frame needs a \"{name}\" field.")
            continue
        value = frame[name]
        # bool is an int in Python; ids and counters must be real integers.
        if not isinstance(value, types) or (types is int and isinstance(value, bool)):
            raise BadFrame(f"\"{name}\" of a {kind} frame has the wrong type ({type(value).__name__}).")
    _check_values(kind, frame)
    return frame


def _check_values(kind: str, frame: dict) -> None:
    if frame.get("request_id") is not None and not 1 <= len(frame["request_id"]) <= 64:
        raise BadFrame("\"request_id\" must be 1 to 64 characters.")
    if kind == "send":
        attachments = frame.get("attachments") or []
        if len(attachments) > MAX_ATTACHMENTS or not all(isinstance(a, str) for a in attachments):
            raise BadFrame(f"\"attachments\" must be a list of at most {MAX_ATTACHMENTS} file ids.")
        if not frame["content"].strip() and not attachments:
            raise BadFrame("The message is empty; write something or attach a file.")
        if frame.get("mode") not in (None, "queue", "steer"):  # null is no value, as for every field
            raise BadFrame("\"mode\" must be \"queue\" or \"steer\".")
        _check_send_kind(frame)
    if kind in ("send", "edit") and len(frame["content"]) > MAX_CONTENT_CHARS:
        raise BadFrame(f"The message is longer than {MAX_CONTENT_CHARS:,} characters; attach it as a file instead.")
    if kind == "edit" and not frame["content"].strip():
        raise BadFrame("The edited message is empty.")
    if kind == "resume" and frame["after_event_id"] < 0:
        raise BadFrame("\"after_event_id\" must be 0 or more.")
    if kind == "approve" and frame["decision"] not in DECISIONS:
        raise BadFrame("\"decision\" must be allow, allow_always or deny.")
    if kind == "approve" and frame.get("arguments") is not None:
        frame["arguments"] = _edited_arguments(frame["arguments"])
    if kind == "answer":
        _check_answer(frame)


def _check_send_kind(frame: dict) -> None:
    """A send is one kind of turn at most: a compare (CONTRACT §10), an image (§13) or research;
    a compare names 2–4 distinct model ids (whether they exist is the registry's to check)."""
    kinds = [k for k in ("compare", "image", "research") if frame.get(k) not in (None, False)]
    if len(kinds) > 1:
        raise BadFrame(f"A message is sent as one kind of turn; it cannot be both {kinds[0]} and {kinds[1]}.")
    if frame.get("mode") == "steer" and kinds:
        raise BadFrame(f"A {kinds[0]} request starts its own turn and cannot steer a running reply; "
                       f"send it without \"mode\": \"steer\" to queue it.")
    if frame.get("image") is True and not frame["content"].strip():
        raise BadFrame("An image is drawn from the message's words; describe the picture you want.")
    models = frame.get("compare")
    if models is None:
        return
    if not all(isinstance(m, str) and 0 < len(m) <= 200 for m in models):
        raise BadFrame("\"compare\" must be a list of model ids (texts).")
    if not MIN_COMPARE <= len(models) <= MAX_COMPARE:
        raise BadFrame(f"A compare asks {MIN_COMPARE} to {MAX_COMPARE} models at once; "
                       f"this one names {len(models)}.")
    if len(set(models)) != len(models):
        raise BadFrame("A compare names each model once; pick different models for its columns.")


def _check_answer(frame: dict) -> None:
    """An `answer` carries answers (each a text or a list of texts) or `dismissed: true`, not both."""
    dismissed, answers = frame.get("dismissed") is True, frame.get("answers")
    if dismissed == (answers is not None):
        raise BadFrame("An answer frame carries either \"answers\" ({key: text or [texts]}) "
                       "or \"dismissed\": true.")
    for key, value in (answers or {}).items():
        if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise BadFrame(f"The answer to {key[:64]!r} must be a text or a list of texts.")


def _edited_arguments(value) -> str:
    """Edited tool arguments as the JSON text the tool will get; they must be an object."""
    if isinstance(value, str):
        value = _strict_json(value, "The edited arguments", are="are")
    if not isinstance(value, dict):
        raise BadFrame("The edited arguments must be a JSON object.")
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > MAX_CONTENT_CHARS:
        raise BadFrame(f"The edited arguments are longer than {MAX_CONTENT_CHARS:,} characters.")
    return text


def _strict_json(text: str, what: str, are: str = "is"):
    """`text` read as JSON that can be used as it is (backend.json_input), or BadFrame naming the problem."""
    try:
        return json_input.loads(text)
    except json_input.JsonInputError as exc:
        if exc.kind == "syntax":
            raise BadFrame(f"{what} {are} not valid JSON.") from None
        if exc.kind == "depth":
            raise BadFrame(f"{what} {are} nested deeper than {json_input.MAX_DEPTH} levels "
                           f"of arrays and objects.") from None
        where, why = next(iter(exc.problems.items()))
        place = f"\"{where}\" in {what.lower()} is" if where else f"{what} {are}"
        raise BadFrame(f"{place} refused. {why}") from None
