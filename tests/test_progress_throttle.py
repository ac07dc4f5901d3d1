"""A call's progress events stay INTERVAL apart even when a timer runs late (a loaded machine).

The clock and the timers are the test's: a timer fires when the test says, as a late one would."""
from __future__ import annotations

from backend.turns import progress
from backend.turns.progress import INTERVAL, CallProgress


class Timers:
    """threading.Timer as the test drives it: started timers wait until fired by hand."""

    def __init__(self):
        self.made: list = []
        timers = self

        class Timer:
            def __init__(self, wait, fn):
                self.wait, self.fn, self.cancelled, self.daemon = wait, fn, False, False
                timers.made.append(self)

            def start(self):
                pass

            def cancel(self):
                self.cancelled = True

            def fire(self):
                if not self.cancelled:
                    self.fn()

        self.Timer = Timer


def driven(monkeypatch) -> tuple[Timers, list[float], list[int], CallProgress]:
    """A call on the test's clock and timers: what it sent (each event's elapsed_ms)."""
    timers = Timers()
    monkeypatch.setattr(progress.threading, "Timer", timers.Timer)
    now = [0.0]
    sent: list[int] = []
    call = CallProgress("c1", "tool", lambda _type, **f: sent.append(f["elapsed_ms"]), clock=lambda: now[0])
    return timers, now, sent, call


def test_a_late_timer_never_sends_within_the_interval_of_a_send(monkeypatch):
    timers, now, sent, call = driven(monkeypatch)

    now[0] = 0.10
    call.report(output="a")  # within the first INTERVAL: a timer waits
    [late] = timers.made
    now[0] = 0.30
    call.report(output="b")  # the interval is over and the timer has not run: sent at once
    assert sent == [300] and late.cancelled
    now[0] = 0.35
    call.report(output="c")  # a new wait for what came after
    waiting = timers.made[-1]
    assert waiting is not late and abs(waiting.wait - (0.30 + INTERVAL - 0.35)) < 1e-9
    late.fire()  # the old timer runs anyway: it was cancelled, so nothing goes out
    now[0] = 0.40
    call._flush()  # and a flush before the interval is over waits again instead of sending
    assert sent == [300]
    now[0] = 0.56
    waiting.fire()
    assert sent == [300, 560]
    call.close()


def test_a_call_that_ends_within_its_first_interval_sends_nothing(monkeypatch):
    timers, now, sent, call = driven(monkeypatch)
    now[0] = 0.05
    call.report(output="quick\n")
    now[0] = 0.20
    call.close()  # its tool_end goes out; the waiting timer must not publish after it
    now[0] = 0.30
    for timer in timers.made:
        timer.fire()
    assert sent == [] and all(t.cancelled for t in timers.made)
