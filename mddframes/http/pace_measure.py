"""What the pace measures of the service: the allowance between two limits, and its phases.

:class:`~mddframes.http.pace.Pace` is the gate; this is its estimator's arithmetic, apart
from the threads and the clock: :func:`measure_allowance` reads what the service let
through between two of its push-backs.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "KEEP",
    "MEASURE_MIN",
    "MEASURE_SPAN",
    "MEASURE_SUCCESSES",
    "Phase",
    "measure_allowance",
]

#: Where the pace is: no rate yet ("cold"), its slow start after the first limit
#: ("slow"), climbing again after the slow start ("climb"), kept near the allowance
#: the service was measured to give ("settled").
Phase = Literal["cold", "slow", "climb", "settled"]

#: The shortest time between two push-backs over which what passed is measured.
MEASURE_SPAN = 0.2
#: The fewest successes between two push-backs that measure anything.
MEASURE_SUCCESSES = 5
#: A measure at or below this (requests a second) is no measure.
MEASURE_MIN = 0.2
#: The share of the allowance under which a new measure lowers it.
KEEP = 0.97


def measure_allowance(
    mark: tuple[float, int, int, float],
    now: float,
    passed: int,
    sent: int,
    floor: float | None,
) -> float | None:
    """What the service allows, from the successes since the last push-back taken for
    a limit, and the allowance known before (``floor``): the allowance now (``floor``
    when the measure is a little under it), or None when nothing could be measured.

    A limit's push-back says the service's bucket was empty; between two of them it
    let through what it refilled (within a request), less what it dropped while full.
    So the successes since the last one, over the time since, measure its rate (a
    little under, when the pace was slower than the service for a while). Nothing is
    measured when that was less than ``MEASURE_SPAN`` ago, when fewer than
    ``MEASURE_SUCCESSES`` passed (two or three successes at a low rate measure luck:
    a sporadic 429 a few answers after another would set the allowance at a fraction
    of what passes), or when the pace was not what held the requests back (fewer than
    80% of its slots used).

    Parameters
    ----------
    mark : tuple
        At the last limit: its time, the successes and the paced sends then, and the
        rate it set.
    now : float
        The time of this push-back.
    passed, sent : int
        The successes and paced sends so far.
    floor : float, optional
        The allowance measured before.
    """
    at, passed_then, sent_then, rate = mark
    span = now - at
    if span < MEASURE_SPAN or sent - sent_then < 0.8 * rate * span:
        return None  # too short, or the pace was not what held the requests back
    if passed - passed_then < MEASURE_SUCCESSES:
        return None  # a few successes measure luck, not the service
    sample = (passed - passed_then - 0.25) / span
    if sample <= MEASURE_MIN:
        return None
    if floor is None or sample > floor or sample < KEEP * floor:
        # up freely; down only when clearly less passed (a lower limit), not by the
        # little that sporadic 429s and the measure's own margin take off
        return sample
    return floor
