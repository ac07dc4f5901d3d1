"""The chat socket's text pacing (backend/ws.py TextPacer), in virtual time.

`writer` plays the socket writer's loop against delta arrival times: it wakes when a
delta is pending, holds as the pacer says, then sends everything that has arrived by
then as one frame. The end-to-end figures (100 deltas/s through the real server) are
the relay benchmark's (tests/bench/test_relay.py).
"""
from __future__ import annotations

from backend.ws import TextPacer


def writer(arrivals: list[float], pacer: TextPacer) -> tuple[list[float], int]:
    """Each delta's wait (send time − arrival) and the number of frames sent."""
    waits, frames, i, now = [], 0, 0, 0.0
    while i < len(arrivals):
        now = max(now, arrivals[i])  # asleep until a delta is published
        now += pacer.hold(now)
        batch = [a for a in arrivals[i:] if a <= now]
        waits += [now - a for a in batch]
        i += len(batch)
        frames += 1
        pacer.sent(len(batch), now)
    return waits, frames


def steady(rate: float, seconds: float, start: float = 0.0) -> list[float]:
    return [start + k / rate for k in range(int(rate * seconds))]


def test_a_hundred_deltas_a_second_go_out_one_by_one_without_waiting():
    waits, frames = writer(steady(100, 5), TextPacer(pace=0.033, quick=0.008))
    assert frames == len(waits) == 500
    assert max(waits) < 1e-9


def test_a_fast_model_gets_thirty_frames_a_second_each_delta_within_the_pace():
    waits, frames = writer(steady(1000, 5), TextPacer(pace=0.033, quick=0.008))
    assert len(waits) == 5000
    assert 5 * 25 <= frames <= 5 * 31
    assert max(waits) <= 0.033 + 1e-9


def test_the_long_pace_ends_when_the_model_slows_down():
    arrivals = steady(1000, 1) + steady(50, 2, start=1.5)
    waits, frames = writer(arrivals, TextPacer(pace=0.033, quick=0.008))
    slow = waits[1000:]
    # At most the first slow delta waits out a long pace; the rest go out at once.
    assert max(slow[1:]) < 1e-9
    assert slow[0] <= 0.033


def test_a_burst_after_a_pause_goes_out_at_once():
    pacer = TextPacer(pace=0.033, quick=0.008)
    pacer.sent(40, 1.000)
    pacer.sent(40, 1.033)  # fast: the long pace
    assert pacer.hold(1.040) > 0.02
    # Ten seconds later a burst of deltas read in one go: nothing held, and the rate
    # over the pause is slow, so the pace is the quick one again.
    assert pacer.hold(11.0) == 0
    pacer.sent(5, 11.0)
    assert abs(pacer.hold(11.0) - 0.008) < 1e-9


def test_frames_without_text_leave_the_pace_alone():
    pacer = TextPacer(pace=0.033, quick=0.008)
    pacer.sent(1, 1.0)
    pacer.sent(0, 1.004)  # a tool event
    assert abs(pacer.hold(1.004) - 0.004) < 1e-9


def test_no_pacing_at_all():
    waits, frames = writer(steady(1000, 1), TextPacer(pace=0.0, quick=0.0))
    assert frames == 1000 and max(waits) < 1e-9
