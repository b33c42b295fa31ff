"""The allowance the pace measures between two limits (mddframes.http.pace_measure)."""

from __future__ import annotations

from mddframes.http.pace_measure import measure_allowance


def test_the_allowance_is_what_passed_between_two_limits():
    mark = (100.0, 50, 60, 20.0)  # at t=100: 50 passed, 60 sent, the rate set to 20
    # one second later 20 more passed of 20 sent: 19.75 a second (a quarter request off)
    assert measure_allowance(mark, 101.0, 70, 80, None) == 19.75
    # too soon, or the pace not what held the requests back: nothing measured
    assert measure_allowance(mark, 100.1, 52, 62, None) is None
    assert measure_allowance(mark, 101.0, 60, 65, None) is None
    # a little under the allowance known: kept; clearly under: lowered; over: raised
    assert measure_allowance(mark, 101.0, 70, 80, 20.0) == 20.0
    assert measure_allowance(mark, 101.0, 60, 80, 20.0) == 9.75
    assert measure_allowance(mark, 101.0, 75, 80, 20.0) == 24.75


def test_a_few_successes_measure_nothing():
    mark = (100.0, 50, 60, 2.0)  # a slow pace: 2 a second
    # two seconds, every slot used: 4 successes are luck (a sporadic 429 a few answers
    # after another would set the allowance at a fraction of what passes), 5 a measure
    assert measure_allowance(mark, 102.0, 54, 64, None) is None
    assert measure_allowance(mark, 102.0, 55, 64, None) == (5 - 0.25) / 2
