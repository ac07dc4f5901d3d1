"""Questions (CONTRACT §7): the `ask_user` tool, whose call waits for the person's answer.

The tool goes to every model that calls tools; each turn binds it to its own questions
(`waiting.Questions`), which the registry's `answer` command and a resuming window reach
through the turn's share of this feature. Its settings section is `questions`
(section.py: how long a question waits).
"""
from __future__ import annotations

from backend.features.questions.items import NAME, BadAnswer, QuestionItem
from backend.features.questions.section import SECTION
from backend.features.questions.waiting import (
    DEFAULTS,
    MAX_TIMEOUT_S,
    SETTING,
    NotPending,
    Questions,
    ask_user_tool,
    timeout_s,
)
from backend.turns.events import Event
from backend.turns.features import Feature, Offer, TurnHandle

__all__ = ["DEFAULTS", "FEATURE", "MAX_TIMEOUT_S", "NAME", "SETTING", "BadAnswer", "NotPending", "Questions",
           "ask_user_tool", "timeout_s"]


def _tools(offer: Offer) -> list:
    # Offered to every model that calls tools: changes nothing and asks no approval.
    return [ask_user_tool()] if offer.model_calls_tools else []


def _bind(turn: TurnHandle) -> Questions:
    return Questions(turn.publish, turn.changed)


FEATURE = Feature(
    name="questions",
    tools=_tools,
    bind=_bind,
    # CONTRACT §7: the model asks the person (ask_user); `timeout_s`: the seconds left, when they set a limit.
    settings=(SECTION,),
    events=(Event("question", {"question_id": str, "call_id": str, "items": list[QuestionItem]},
                  {"timeout_s": int}, turn_id=str),),
)
