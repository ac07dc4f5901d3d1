"""Research (docs/PROTOCOL.md "Research"): a message sent with `research: true` is answered by
planned searches, the best pages read, and one cited report.

Plugged into the engine's points: it runs such a turn itself (`runs_turn`: its gathering,
then the engine's reply without tools for the report) and publishes `research_progress`,
whose newest fields a snapshot carries. Its settings section is `research`'s limits (section.py).
"""
from __future__ import annotations

from backend.features.research.gather import BOUNDS, DEFAULTS, SETTING, Research, requested, settings
from backend.features.research.section import SECTION
from backend.features.web import fetch_setting
from backend.turns import approvals
from backend.turns.events import Event
from backend.turns.features import Feature, TurnRun

__all__ = ["BOUNDS", "DEFAULTS", "FEATURE", "SETTING", "Research", "requested", "settings"]


def _run(turn: TurnRun):
    """A research turn gathers first; its report is one step without tools."""
    if turn.continuing or not requested(turn.user_message_id):
        return None
    job = Research(turn.publish, turn.cancel, turn.services.keys, turn.sources,
                   policy=lambda tool: approvals.set_policy_of(turn.chat_id, tool),
                   approve=turn.approve, allowed=fetch_setting.allowed(turn.chat_id),
                   stream_fn=turn.services.open_stream)
    return job.run(turn.request, turn.answer)


FEATURE = Feature(
    name="research",
    runs_turn=_run,
    settings=(SECTION,),
    # A research turn's phase and counts; `notice` says which limit was reached.
    events=(Event("research_progress", {"phase": str, "searches": int, "found": int, "read": int},
                  {"query": str, "url": str, "title": str, "notice": str}, turn_id=str,
                  values={"phase": ("planning", "searching", "reading", "writing")}),),
)
