"""lnlab.serving.pace: a session's runs, paced by a token bucket (pure Python, simulated time)."""

from __future__ import annotations

import pytest

from lnlab.serving.pace import BURST, MAX_WAIT_S, RATE, Pace


def _waits(times: list[float], pace: Pace | None = None) -> list[float]:
    """The wait of a run asked for at each of `times` (a run starts after its wait)."""
    pace = pace or Pace()
    return [pace.take(t) for t in times]


def test_a_teacher_pressing_next_five_times_a_second_never_waits():
    assert _waits([k / 5 for k in range(5 * 600)]) == [0.0] * 3000


def test_a_burst_as_large_as_the_bucket_never_waits():
    assert _waits([0.0] * int(BURST)) == [0.0] * int(BURST)


def test_runs_beyond_the_burst_wait_their_turn_at_the_rate():
    waits = _waits([0.0] * (int(BURST) + 3))
    assert waits[-3:] == pytest.approx([1 / RATE, 2 / RATE, 3 / RATE])


def test_a_flood_costs_at_most_the_rate_and_never_waits_past_the_cap():
    """2,000 requests at once: no run waits more than MAX_WAIT_S, and after the burst a run
    that does not wait comes only once its token has been earned."""
    waits = _waits([k * 0.05 / 2000 for k in range(2000)])
    assert max(waits) == pytest.approx(MAX_WAIT_S)
    assert sum(w == 0 for w in waits) <= BURST + 1


def test_the_bucket_fills_up_again_at_rest():
    pace = Pace()
    _waits([0.0] * 100, pace)
    assert pace.take(100.0) == 0.0
    assert pace.tokens == BURST - 1


def test_a_clock_that_goes_back_earns_nothing():
    pace = Pace()
    _waits([10.0] * int(BURST), pace)
    assert pace.take(0.0) > 0
