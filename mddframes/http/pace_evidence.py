"""What the pace's answers say of the service: whether the rate explains its push-backs.

The gate (:class:`~mddframes.http.pace.Pace`) decides from this whether a push-back
(a 429, a 503 with ``Retry-After``) is the service's limit or noise. A limit is the
rate's doing: under a token bucket of R a second, a rate r above it is pushed back at
a share of about ``1 - R/r`` of its requests and a rate below it not at all, so the
share rises with the rate. Noise (a flaky service's sporadic 429s) is a share that
does not depend on the rate. :class:`RateEvidence` keeps the recent answers with the
rate each was sent at and compares the share of push-backs at the lower rates with
the share at the higher ones (:meth:`RateEvidence.verdict`): the two hypotheses
predict different shares at the lower rates, and the nearer prediction wins.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

__all__ = [
    "EVIDENCE_MIN",
    "HISTORY",
    "SPREAD",
    "Phase",
    "RateEvidence",
    "Verdict",
    "measure_allowance",
]

#: Where the pace is: no rate yet ("cold"), its slow start after the first limit
#: ("slow"), climbing again after the slow start ("climb"), kept near the allowance
#: the service was measured to give ("settled").
Phase = Literal["cold", "slow", "climb", "settled"]
#: What the evidence says of a push-back: the rate explains it ("limit"), it does not
#: ("noise"), or the answers do not tell yet (None).
Verdict = Literal["limit", "noise"] | None

#: Answers remembered, with the rate each was sent at.
HISTORY = 128
#: Answers each side (the lower and the higher rates) needs before a verdict.
EVIDENCE_MIN = 8
#: How far apart the lowest and highest rates remembered must be for a verdict: close
#: rates do not show whether the share of push-backs depends on the rate.
SPREAD = 1.5
#: The shortest time between two push-backs over which what passed is measured.
MEASURE_SPAN = 0.2
#: A measure at or below this (requests a second) is no measure.
MEASURE_MIN = 0.2
#: The share of the allowance under which a new measure lowers it.
KEEP = 0.97
#: Answers each side of the allowance needed to tell whether the rate explains the
#: push-backs above it.
VERIFY = 8
#: How much more than twice the share at or below the allowance the share above it
#: must be to show a limit there.
CLEARLY = 0.05
#: A share of push-backs above this at the higher rates is never noise.
NOISE_MAX = 0.5


class RateEvidence:
    """The recent answers, each with the pace's rate when it was sent (not thread-safe:
    the pace calls it under its lock)."""

    def __init__(self) -> None:
        self._sent: dict[float, float] = {}  # send time -> rate then
        self._answers: deque[tuple[float, bool]] = deque(maxlen=HISTORY)

    def sent(self, at: float, rate: float) -> None:
        """A request goes out at ``at`` under ``rate``."""
        sent = self._sent
        sent[at] = rate
        if len(sent) > 4 * HISTORY:  # sends never answered (an exception) are forgotten
            del sent[next(iter(sent))]

    def answered(self, at: float, pushed: bool) -> None:
        """The request sent at ``at`` was answered: pushed back, or passed."""
        rate = self._sent.pop(at, None)
        if rate is not None:
            self._answers.append((rate, pushed))

    def forget(self, at: float) -> None:
        """The request sent at ``at`` got no answer to learn from."""
        self._sent.pop(at, None)

    def above(self, line: float) -> Verdict:
        """Whether the push-backs to requests sent above ``line`` (the allowance the
        pace was measured to have) are the limit's: a share clearly above that of the
        requests sent at or below it (``VERIFY`` answers each side). Under a limit
        what goes at or below the allowance is not pushed back at all, so a first
        push-back above it is the limit's at once; noise is pushed back at the same
        share on both sides."""
        below = [pushed for rate, pushed in self._answers if rate <= line]
        above = [pushed for rate, pushed in self._answers if rate > line]
        if len(below) < VERIFY or not any(below):
            return "limit"
        if len(above) < VERIFY:
            return None
        share_below = sum(below) / len(below)
        share_above = sum(above) / len(above)
        return "limit" if share_above > 2 * share_below + CLEARLY else "noise"

    def fastest(self) -> float | None:
        """The highest rate among the remembered answers."""
        return max((rate for rate, _ in self._answers), default=None)

    def verdict(self) -> Verdict:
        """Whether the remembered answers show a limit, noise, or not enough.

        The answers are split at the geometric middle of the lowest and highest rate
        (``SPREAD`` apart at least, ``EVIDENCE_MIN`` answers each side). What passed
        at the higher rates, ``(1 - share_high) * rate_high``, is the limit if there is
        one; a limit then predicts ``max(0, 1 - that / rate_low)`` as the share at the
        lower rates, noise predicts the same share as at the higher ones. The share
        seen at the lower rates decides by which prediction is nearer; a share above
        ``NOISE_MAX`` at the higher rates is a limit whatever the lower rates show.
        """
        answers = self._answers
        if len(answers) < 2 * EVIDENCE_MIN:
            return None
        low_rate = min(rate for rate, _ in answers)
        high_rate = max(rate for rate, _ in answers)
        if high_rate < SPREAD * low_rate:
            return None
        middle = math.sqrt(low_rate * high_rate)
        low = [(rate, pushed) for rate, pushed in answers if rate < middle]
        high = [(rate, pushed) for rate, pushed in answers if rate >= middle]
        if len(low) < EVIDENCE_MIN or len(high) < EVIDENCE_MIN:
            return None
        share_low = sum(pushed for _, pushed in low) / len(low)
        share_high = sum(pushed for _, pushed in high) / len(high)
        if share_high > NOISE_MAX:
            return "limit"
        rate_low = sum(rate for rate, _ in low) / len(low)
        rate_high = sum(rate for rate, _ in high) / len(high)
        allowed = (1.0 - share_high) * rate_high
        if_limit = max(0.0, 1.0 - allowed / rate_low)
        return "noise" if share_low >= (if_limit + share_high) / 2 else "limit"


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
    measured when that was less than ``MEASURE_SPAN`` ago or the pace was not what held
    the requests back (fewer than 80% of its slots used).

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
    sample = (passed - passed_then - 0.25) / span
    if sample <= MEASURE_MIN:
        return None
    if floor is None or sample > floor or sample < KEEP * floor:
        # up freely; down only when clearly less passed (a lower limit), not by the
        # little that sporadic 429s and the measure's own margin take off
        return sample
    return floor
