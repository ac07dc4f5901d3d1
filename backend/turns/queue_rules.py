"""The queue, steer and busy rules of one chat, as plain state: no threads, no database.

The registry asks these rules what a command does (start a turn, queue the
message, refuse it, or nothing), then does it: it holds the lock, saves rows
and publishes events; the rules only decide. A chat is idle, running one turn,
or writing one summary ("Summarize now"); while it is busy, new messages wait in
order (at most MAX_QUEUE), and those sent to steer a running turn are handed to
it at its next step. When the turn or the summary ends, the oldest waiting
message starts the next turn, a steering one whose turn ended before taking it
included. A summary starts only in an idle chat, so it never sees half a turn.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MAX_QUEUE = 10


@dataclass(frozen=True)
class Start:
    """Start a turn; `message_id` is the queued message it answers (None: the message being sent)."""
    message_id: int | None = None


@dataclass(frozen=True)
class Queue:
    """Save the message as queued; `steer`: hand it to the running turn at its next step."""
    steer: bool = False


@dataclass(frozen=True)
class Refuse:
    """Do nothing; answer with this error (CONTRACT §4 codes)."""
    code: str
    message: str


@dataclass(frozen=True)
class Idle:
    """The chat has nothing more to run."""


SHUTTING_DOWN = Refuse("shutting_down", "Numi is quitting; this message was not sent.")
BUSY = Refuse("busy", "A reply is still being written. Stop it first, or wait for it.")
SUMMARIZING = Refuse("busy", "A summary of this chat is being written. Stop it first, or wait for it.")
BUSY_REPLY = Refuse("busy", "A reply is being written in this chat. Summarize when it has finished.")
QUEUE_FULL = Refuse("queue_full", f"{MAX_QUEUE} messages are already waiting. "
                                  f"Wait for the reply, or discard a queued message.")
NOT_QUEUED = Refuse("not_found", "That message is not waiting in the queue any more.")


@dataclass
class ChatQueue:
    """One chat: whether a turn runs or a summary is written, and the messages waiting (oldest first)."""
    running: bool = False
    summarizing: bool = False
    waiting: list[tuple[int, bool]] = field(default_factory=list)  # (message id, sent to steer)

    # --- decisions (they change nothing) -----------------------------------------------

    def send(self, closing: bool, steer: bool = False) -> Start | Queue | Refuse:
        """What a new message does: start a turn, wait for the running one, or is refused."""
        if closing:
            return SHUTTING_DOWN
        if not self.running and not self.summarizing:
            return Start()  # steering an idle chat is an ordinary send
        if len(self.waiting) >= MAX_QUEUE:
            return QUEUE_FULL
        # A summary has no steps to steer: the message waits for it like any other.
        return Queue(steer=steer and self.running)

    def check_idle(self, closing: bool) -> Refuse | None:
        """Edit, regenerate, continue and switching branch need a chat with no turn and no summary running."""
        if closing:
            return SHUTTING_DOWN
        if self.running:
            return BUSY
        return SUMMARIZING if self.summarizing else None

    def summarize(self, closing: bool) -> Refuse | None:
        """Whether "Summarize now" may start: only in an idle chat, one summary at a time."""
        if closing:
            return SHUTTING_DOWN
        if self.running:
            return BUSY_REPLY
        return SUMMARIZING if self.summarizing else None

    def items(self) -> list[tuple[int, bool]]:
        """The queue as (message id, steer), in order."""
        return list(self.waiting)

    # --- changes ------------------------------------------------------------------------

    def start(self) -> None:
        """A turn was started for this chat (after Start, or an idle check that passed)."""
        self.running = True

    def start_summary(self) -> None:
        """A summary is being written (after `summarize` allowed it)."""
        if self.running or self.summarizing:
            raise ValueError("start_summary without a summarize decision")
        self.summarizing = True

    def summary_ended(self, closing: bool) -> Start | Idle:
        """The summary was written, failed or was stopped: the oldest waiting message starts its
        turn (the registry then calls `start`). While quitting nothing starts, as after a turn."""
        self.summarizing = False
        if closing or not self.waiting:
            return Idle()
        next_id, _steer = self.waiting.pop(0)
        return Start(next_id)

    def enqueue(self, message_id: int, steer: bool = False) -> None:
        """The message Queue decided on is saved; it waits behind the others."""
        if not (self.running or self.summarizing) or len(self.waiting) >= MAX_QUEUE:
            raise ValueError("enqueue without a Queue decision")
        self.waiting.append((message_id, steer))

    def discard(self, message_id: int) -> Refuse | None:
        """Take one message off the queue (queue_discard); Refuse when it is not waiting."""
        kept = [item for item in self.waiting if item[0] != message_id]
        if len(kept) == len(self.waiting):
            return NOT_QUEUED
        self.waiting = kept
        return None

    def clear(self) -> list[int]:
        """Empty the queue (Stop with clear_queue); the ids dropped, in order."""
        dropped, self.waiting = [i for i, _ in self.waiting], []
        return dropped

    def take_steering(self) -> list[int]:
        """The steering messages, off the queue for the running turn to read now (oldest first)."""
        taken = [i for i, steer in self.waiting if steer]
        self.waiting = [item for item in self.waiting if not item[1]]
        return taken

    def turn_ended(self, closing: bool) -> Start | Idle:
        """What runs next: the oldest waiting message (steering or not) starts its own turn.

        While quitting nothing starts: what waits stays saved as queued, and the next start
        puts it on the branch for Continue to answer.
        """
        if closing or not self.waiting:
            self.running = False
            return Idle()
        next_id, _steer = self.waiting.pop(0)  # a steering one whose turn ended first: no longer steering
        return Start(next_id)
