"""The words for a saved message's status and a turn's outcome (CONTRACT §3, §5), defined once."""
from __future__ import annotations

from typing import Final, Literal, get_args

# A saved message's status, as the store keeps it and the API lists it.
MessageStatus = Literal["complete", "streaming", "queued", "cancelled", "interrupted", "error"]
MESSAGE_STATUSES: Final[tuple[MessageStatus, ...]] = get_args(MessageStatus)

COMPLETE: Final = "complete"  # written to its end (every message a person sends is)
STREAMING: Final = "streaming"  # a running turn is writing it
QUEUED: Final = "queued"  # sent while a turn runs; it joins the branch when its own turn starts
CANCELLED: Final = "cancelled"  # stopped by the person; what came is kept
INTERRUPTED: Final = "interrupted"  # Numi ended while it was being written
ERROR: Final = "error"  # its turn failed

# A reply with one of these ended early: `continue` carries it on.
CUT_SHORT: Final[tuple[MessageStatus, ...]] = (INTERRUPTED, CANCELLED, ERROR)

# How a turn ended, as its turn_done event says.
TurnOutcome = Literal["completed", "cancelled", "failed", "limit"]
TURN_OUTCOMES: Final[tuple[TurnOutcome, ...]] = get_args(TurnOutcome)

COMPLETED: Final = "completed"
# CANCELLED, above, is a turn outcome too: the person stopped it.
FAILED: Final = "failed"
LIMIT: Final = "limit"  # it used up its steps, time or tool calls

