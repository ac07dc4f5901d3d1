"""`ask_user`'s arguments and a person's answers held to their limits (backend/features/questions/items.py):
each refusal is a sentence naming what to change; the protocol tests run the same through a turn."""
from __future__ import annotations

import json

import pytest

from backend.core.cancel import CancelToken
from backend.core.tools import execute
from backend.core.types import ToolCall
from backend.features.questions import ask_user_tool
from backend.features.questions import items as qi


def item(**fields) -> dict:
    return {"key": "k", "prompt": "Which?", "kind": "choice", "options": [{"value": "a", "label": "A"}], **fields}


@pytest.mark.parametrize("args, says", [
    ({}, "needs \"items\": a list of 1 to 10"),
    ({"items": []}, "a list of 1 to 10"),
    ({"items": [item(key=f"k{i}") for i in range(11)]}, "a list of 1 to 10"),
    ({"items": ["Which?"]}, "Item 1 of ask_user must be an object"),
    ({"items": [item(key="")]}, "\"key\" must be a non-empty string"),
    ({"items": [item(key="k" * 65)]}, "\"key\" is longer than 64 characters"),
    ({"items": [item(prompt=" ")]}, "\"prompt\" must be a non-empty string"),
    ({"items": [item(prompt="?" * 1001)]}, "\"prompt\" is longer than 1,000 characters"),
    ({"items": [item(kind="radio")]}, "\"kind\" must be one of choice, multi, text"),
    ({"items": [item(allow_other="yes")]}, "\"allow_other\" must be true or false"),
    ({"items": [item(options=[])]}, "give \"options\", a list of 1 to 20"),
    ({"items": [item(options=[{"value": str(i)} for i in range(21)])]}, "a list of 1 to 20"),
    ({"items": [item(options=["a"])]}, "option 1 must be an object"),
    ({"items": [item(options=[{"value": "a"}, {"value": "a"}])]}, "two options have the value 'a'"),
    ({"items": [item(options=[{"value": "a", "label": "L" * 201}])]}, "option 1's \"label\" is longer than 200"),
    ({"items": [item(kind="text")]}, "is a text question: leave \"options\" out"),
    ({"items": [item(), item(prompt="Again?")]}, "Item 2 of ask_user repeats the key 'k'"),
])
def test_arguments_that_are_no_question_are_refused_with_a_sentence(args, says):
    with pytest.raises(ValueError) as refused:
        qi.parse_items(args)
    assert says in str(refused.value)


def test_items_come_out_whole_and_well_formed():
    items = qi.parse_items({"items": [item(options=[{"value": "a"}], prompt=" Which \ud800one? "),
                                      {"key": "t", "prompt": "Say", "kind": "text", "allow_other": True}]})
    assert items == [{"key": "k", "prompt": "Which \ufffdone?", "kind": "choice",
                      "options": [{"value": "a", "label": "a"}], "allow_other": False},
                     {"key": "t", "prompt": "Say", "kind": "text", "options": [], "allow_other": False}]


def test_an_unbound_call_and_bad_json_are_error_results_not_crashes():
    tool = ask_user_tool()
    assert tool.read_only and not tool.needs_approval and not tool.concurrent
    outcome = execute(tool, ToolCall("c1", "ask_user", json.dumps({"items": [item()]})), CancelToken())
    assert not outcome.ok and "inside a chat's turn" in outcome.result.content
    outcome = execute(tool, ToolCall("c2", "ask_user", "{not json"), CancelToken())
    assert not outcome.ok and "not valid JSON" in outcome.result.content


ITEMS = qi.parse_items({"items": [
    item(key="db", prompt="Which database?", allow_other=True, options=[{"value": "pg", "label": "PostgreSQL"}]),
    item(key="x", prompt="Which extras?", kind="multi", options=[{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]),
    {"key": "t", "prompt": "Anything else?", "kind": "text"},
]})


@pytest.mark.parametrize("answers, says", [
    ({"db": "pg", "x": []}, "Answer \u201cAnything else?\u201d too"),
    ({"db": "pg", "x": [], "t": "", "y": "?"}, "no item \u201cy\u201d"),
    ({"db": "", "x": [], "t": ""}, "Pick an option of \u201cWhich database?\u201d, or write your own answer"),
    ({"db": ["pg"], "x": [], "t": ""}, "must be one text"),
    ({"db": "pg", "x": "a", "t": ""}, "must be a list of texts"),
    ({"db": "pg", "x": ["c"], "t": ""}, "Pick only from the options of \u201cWhich extras?\u201d"),
    ({"db": "pg", "x": [], "t": "w" * 10_001}, "longer than 10,000 characters"),
])
def test_answers_that_do_not_fit_say_which_question(answers, says):
    with pytest.raises(qi.BadAnswer) as refused:
        qi.check_answers(ITEMS, answers)
    assert says in str(refused.value)


def test_a_choice_without_other_takes_only_its_options():
    only = qi.parse_items({"items": [item()]})
    with pytest.raises(qi.BadAnswer, match="Pick one of the options of \u201cWhich\\?\u201d"):
        qi.check_answers(only, {"k": "b"})


def test_the_result_marks_the_persons_own_words():
    answers = qi.check_answers(ITEMS, {"db": " MySQL ", "x": ["b", "", "a", "b"], "t": "no"})
    assert answers == {"db": "MySQL", "x": ["b", "a"], "t": "no"}
    other = qi.parse_items({"items": [item(kind="multi", allow_other=True)]})
    assert json.loads(qi.answered(ITEMS, answers))["answers"][0]["in_their_own_words"] is True
    assert json.loads(qi.answered(other, qi.check_answers(other, {"k": ["a", "mine"]}))) == {
        "status": "answered",
        "answers": [{"key": "k", "question": "Which?", "answer": ["a", "mine"], "in_their_own_words": ["mine"]}]}
