"""What an `ask_user` question holds (CONTRACT §7, §11): its arguments checked, a person's
answers checked against its items, and the call's result as the model reads it.

Argument problems are told to the model (it can ask again); answer problems to the person
(the question stays open). Every string that reaches an event is made well-formed here,
since a lone surrogate would fail the socket's UTF-8.
"""
from __future__ import annotations

import json
from typing import TypedDict

from backend.core.text import well_formed


class QuestionOption(TypedDict):
    value: str
    label: str


class QuestionItem(TypedDict):
    """One question of a `question` event."""
    key: str
    prompt: str
    kind: str  # choice | multi | text
    options: list[QuestionOption]
    allow_other: bool


NAME = "ask_user"
KINDS = ("choice", "multi", "text")
# Enough for a real decision, small enough to fit on one card.
MAX_ITEMS = 10
MAX_OPTIONS = 20
MAX_KEY = 64
MAX_PROMPT = 1000
MAX_OPTION = 200  # an option's value or label
MAX_ANSWER = 10_000  # characters of one written answer

DESCRIPTION = (
    "Ask the person one or more questions and wait for their answers. Use it when you need a decision "
    "or a fact only they have; do not ask what you can find out yourself. Each item is one question: "
    "kind \"choice\" (they pick one option), \"multi\" (they pick any number of options) or \"text\" "
    "(they write an answer). Set allow_other on a choice or multi item to let them answer in their own "
    "words as well. The result lists each question with its answer; the person may also dismiss the "
    "questions without answering.")

PARAMETERS = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array", "minItems": 1, "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "a short id of the question, unique in this call"},
                    "prompt": {"type": "string", "description": "the question as the person reads it"},
                    "kind": {"type": "string", "enum": list(KINDS)},
                    "options": {
                        "type": "array", "maxItems": MAX_OPTIONS,
                        "description": "for choice and multi: what the person picks from",
                        "items": {"type": "object",
                                  "properties": {"value": {"type": "string"}, "label": {"type": "string"}},
                                  "required": ["value", "label"]},
                    },
                    "allow_other": {"type": "boolean",
                                    "description": "choice and multi: they may answer in their own words"},
                },
                "required": ["key", "prompt", "kind"],
            },
        },
    },
    "required": ["items"],
}


class BadAnswer(ValueError):
    """An answer that does not fit its question; the message tells the person what to change."""


# --- the call's arguments -------------------------------------------------------------------

def parse_items(args: dict) -> list[dict]:
    """The call's items in the `question` event's shape; ValueError with a sentence for the model."""
    items = args.get("items")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
        raise ValueError(f"{NAME} needs \"items\": a list of 1 to {MAX_ITEMS} questions, "
                         f"each {{\"key\", \"prompt\", \"kind\"}}.")
    out, keys = [], set()
    for n, item in enumerate(items, 1):
        parsed = _item(item, n)
        if parsed["key"] in keys:
            raise ValueError(f"Item {n} of {NAME} repeats the key {parsed['key']!r}; give each question its own key.")
        keys.add(parsed["key"])
        out.append(parsed)
    return out


def _item(item, n: int) -> dict:
    where = f"Item {n} of {NAME}"
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object {{\"key\", \"prompt\", \"kind\"}}.")
    key = _text(item.get("key"), f"{where}: \"key\"", MAX_KEY)
    prompt = _text(item.get("prompt"), f"{where}: \"prompt\"", MAX_PROMPT)
    kind = item.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}: \"kind\" must be one of {', '.join(KINDS)}.")
    other = item.get("allow_other", False)
    if not isinstance(other, bool):
        raise ValueError(f"{where}: \"allow_other\" must be true or false.")
    options = item.get("options")
    if kind == "text":
        if options:
            raise ValueError(f"{where} is a text question: leave \"options\" out (use kind choice or multi to offer some).")
        return {"key": key, "prompt": prompt, "kind": kind, "options": [], "allow_other": False}
    if not isinstance(options, list) or not 1 <= len(options) <= MAX_OPTIONS:
        raise ValueError(f"{where} is a {kind} question: give \"options\", a list of 1 to {MAX_OPTIONS} "
                         f"{{\"value\", \"label\"}}.")
    parsed, values = [], set()
    for m, option in enumerate(options, 1):
        if not isinstance(option, dict):
            raise ValueError(f"{where}: option {m} must be an object {{\"value\", \"label\"}}.")
        value = _text(option.get("value"), f"{where}: option {m}'s \"value\"", MAX_OPTION)
        label = option.get("label")
        label = value if label is None else _text(label, f"{where}: option {m}'s \"label\"", MAX_OPTION)
        if value in values:
            raise ValueError(f"{where}: two options have the value {value!r}; give each its own.")
        values.add(value)
        parsed.append({"value": value, "label": label})
    return {"key": key, "prompt": prompt, "kind": kind, "options": parsed, "allow_other": other}


def _text(value, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string.")
    value = well_formed(value.strip())
    if len(value) > limit:
        raise ValueError(f"{what} is longer than {limit:,} characters; shorten it.")
    return value


# --- the person's answers -------------------------------------------------------------------

def check_answers(items: list[dict], answers: dict) -> dict:
    """The answers, each as its item wants it; BadAnswer naming the question it does not fit.

    Every question must be answered: a choice by one option (or, where allowed, the
    person's own words), a multi by a list (empty: none of them), a text by a text (empty:
    nothing to say). Blank entries count as not given, so ticking "something else" and
    writing nothing is the same as not ticking it.
    """
    known = {item["key"] for item in items}
    for key in answers:
        if key not in known:
            raise BadAnswer(f"This question has no item {_short(key)}; answer the items it shows.")
    out: dict[str, str | list[str]] = {}
    for item in items:
        key, about = item["key"], _short(item["prompt"])
        if key not in answers:
            raise BadAnswer(f"Answer {about} too (or dismiss the question).")
        given = answers[key]
        values = {o["value"] for o in item["options"]}
        if item["kind"] == "multi":
            if not isinstance(given, list) or not all(isinstance(v, str) for v in given):
                raise BadAnswer(f"The answer to {about} must be a list of texts (the options picked).")
            picked = list(dict.fromkeys(_answer(v, about) for v in given if v.strip()))
            if not item["allow_other"] and any(v not in values for v in picked):
                raise BadAnswer(f"Pick only from the options of {about}.")
            out[key] = picked
            continue
        if not isinstance(given, str):
            raise BadAnswer(f"The answer to {about} must be one text.")
        text = _answer(given, about)
        if item["kind"] == "choice" and text not in values:
            if not item["allow_other"]:
                raise BadAnswer(f"Pick one of the options of {about}.")
            if not text:
                raise BadAnswer(f"Pick an option of {about}, or write your own answer.")
        out[key] = text
    return out


def _answer(text: str, about: str) -> str:
    text = well_formed(text.strip())
    if len(text) > MAX_ANSWER:
        raise BadAnswer(f"The answer to {about} is longer than {MAX_ANSWER:,} characters; shorten it.")
    return text


def _short(text: str, limit: int = 80) -> str:
    return "\u201c" + (text if len(text) <= limit else text[:limit - 1] + "\u2026") + "\u201d"


# --- the result the model reads -------------------------------------------------------------

def answered(items: list[dict], answers: dict) -> str:
    """Each question with its answer; what the person wrote themselves is marked as theirs."""
    listed = []
    for item in items:
        values = {o["value"] for o in item["options"]}
        given = answers[item["key"]]
        entry = {"key": item["key"], "question": item["prompt"], "answer": given}
        if item["kind"] == "choice" and given not in values:
            entry["in_their_own_words"] = True
        elif item["kind"] == "multi" and any(v not in values for v in given):
            entry["in_their_own_words"] = [v for v in given if v not in values]
        listed.append(entry)
    return _result("answered", answers=listed)


def not_answered(status: str, message: str) -> str:
    """A question that ended without answers: dismissed, out of time, stopped, Numi closed."""
    return _result(status, message=message)


def _result(status: str, **fields) -> str:
    return json.dumps({"status": status, **fields}, ensure_ascii=False)
