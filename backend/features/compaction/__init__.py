"""Compaction (CONTRACT §6): older messages summarized, automatically or by "Summarize now".

Plugged into the engine's points: before a turn's first request it makes room
(`before_request`: a summary when the request passes the threshold, `compacted`), and
it carries out the registry's "Summarize now" (`commands["compact"]`: the engine keeps
the command's lock and queue). Its settings section is `compaction` (section.py); the
meter reads its threshold through backend/api/context.py.
"""
from __future__ import annotations

from backend.features.compaction.section import SECTION
from backend.features.compaction.summary import (
    DEFAULTS,
    SETTING,
    CompactionFailed,
    NothingToCompact,
    SummaryStopped,
    SummaryTimedOut,
    boundary_of,
    compact,
    make_room,
    needed,
    settings,
)
from backend.turns.events import Event
from backend.turns.features import BeforeRequest, Feature

__all__ = ["DEFAULTS", "FEATURE", "SETTING", "CompactionFailed", "NothingToCompact", "SummaryStopped",
           "SummaryTimedOut", "boundary_of", "compact", "needed", "settings"]


def _make_room(turn: BeforeRequest):
    return make_room(turn.chat, turn.model, turn.services.keys, tools=turn.tools.specs(),
                     files=turn.services.files, plan=turn.plan, continuing=turn.continuing,
                     cancel=turn.cancel, publish=turn.publish, stream_fn=turn.services.open_stream,
                     notices=turn.notices)


def _summarize_now(chat, model, toolset, plan, services, cancel):
    """The chat's "Summarize now": the checkpoint saved (raises as `compact` does)."""
    checkpoint, _ = compact(chat, model, services.keys, tools=toolset.specs(), files=services.files, plan=plan,
                            manual=True, cancel=cancel, stream_fn=services.open_stream)
    return checkpoint


FEATURE = Feature(
    name="compaction",
    before_request=_make_room,
    commands={"compact": _summarize_now},
    settings=(SECTION,),
    # CONTRACT §6 (context): a turn summarized older messages before its first request.
    events=(Event("compacted", {"boundary_message_id": int, "tokens_before": int, "tokens_after": int},
                  turn_id=str),),
)
