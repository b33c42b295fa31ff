"""One pace per service: the client-side limiter that every thread of a client shares.

:class:`Pace` hands out one slot every ``1/rate`` and learns the rate from the
service's answers; the client's :class:`~mddframes.http.session.HttpSession` holds one,
so the workers of every bulk call of that client draw from one budget. Only what says
"slow down" reaches it (a 429, a 503 with ``Retry-After``: :mod:`.attempts`); other
5xx and lost answers are repeated with a back-off of their own and never move the rate.

- **Cold, no cost when nobody limits.** Until the service first pushes back there is
  no rate. The first requests go out in rounds (1, 2, 3, 4, then doubling, each when
  the last is answered, as TCP's slow start) until 64 may be in flight, so a service
  with a small burst answers one or two 429s, not one per worker; without a limit that
  costs a few round trips, once per client. ``max_rate`` declares a limit up front
  (``"400/min"``): the pace starts there and never goes above it.
- **Limit or noise** (:meth:`Pace._judge`). A limit is the rate's doing: once the
  rate is over it its push-backs come together, and slowing down stops them. Noise (a
  flaky service's sporadic 429s) comes at any rate as a steady share of the answers.
  A push-back is taken as a limit when it is the first among fewer than ``NOISE_MIN``
  answers (a limit must be acted on at once), in the slow start when it is not the
  first to the slow start's own requests and they were pushed back more than
  ``NOISE_SHARE`` of the time, after it when more than ``NOISE_SHARE`` of the last
  ``NOISE_WINDOW`` answers were push-backs or the rate went above the allowance last
  measured (below). Any other is noise: it holds its own request for its
  ``Retry-After`` and nothing else, as a plain retry loop would. Two push-backs at or
  below the measured allowance since the last limit (a token bucket pushes nothing
  back there, but for one while its measure runs a little high), or an allowance that
  fell at ``FALLS`` limits in a row, say the allowance was noise's measure: it is
  forgotten, and a slow start from the rate then finds what the service allows again.
- **Slow start** after the first limit: from 8 req/s (or what passed in the last
  second), doubling every 0.1 s of being the bottleneck, at most once an answer. Its
  requests are the pace's own guesses at a rate not yet known, sent while the first
  ``Retry-After`` runs: a limit's push-back to one ends the slow start like any
  overshoot, but does not hold the whole client (below).
- **Measured, not guessed.** A limit's push-back says the service's bucket is empty;
  between two of them it let through what it refilled. So what passed between two
  push-backs over the time between measures what it allows (noise that held only its
  own request counts as passed), when the pace was what held the requests back, over
  at least ``MEASURE_SUCCESSES`` successes. The end of the slow start goes on from half
  the rate at which the overshoot began (its first push-back), or that measure if higher,
  and climbs again, doubling a second; the next limit settles the rate at ``MARGIN``
  (97%) of what passed. Settled, the rate grows 3% a second; coming back to the
  allowance is no news, so only a push-back above it (by the margin) is a limit
  there, and the allowance goes down only when clearly less passed. A limit that
  cannot be measured (too soon, or the workers were idle) is a plain multiplicative
  decrease (``BETA``). Answers to requests sent before a decrease do not decrease it
  again (8 workers' answers to one burst are one signal).
- **One slot every ``1/rate``** (no burst): a waiting thread sleeps until the next
  free slot and takes it if no other thread did; a change of rate applies to the
  waiting threads at once. A request held by its ``Retry-After`` waits that out first
  and then takes a slot, so it does not hold the others.
- **Retry-After** (seconds or an HTTP-date, :func:`.retry_after.retry_after_seconds`) is the least
  the answered request waits before it is sent again, capped at ``retry_after_max``,
  with jitter; without one, one or two slots. It holds the whole client only when a
  limit's push-back comes while an earlier ``Retry-After`` still runs and nothing
  passed in between (the service then means everyone), from the end of the slow start.

Why this and not AWS' or TCP's rule: the AWS SDKs' adaptive retry (botocore's
``CubicCalculator`` on the measured send rate) and TCP's loss-based control (Reno,
CUBIC) take every throttle or loss as congestion and cut the rate on each; under
random loss they shrink as the loss rate grows (TCP's throughput falls as
``1/sqrt(p)``). Delivery-rate designs (TCP Westwood, BBR) set the rate from what was
delivered and tolerate a share of loss. The pace keeps the measured allowance
(Westwood, BBR's delivery rate) and a quick reaction to the first push-backs (a token
bucket is found as fast as before), and adds a test of whether the rate explains a
push-back. Known gap: sporadic 429s that come together among the first answers (5
of the first 12, as a limit of a few requests a second would answer) are taken for a
limit, and at the low rate that follows the evidence against it comes slowly (a few
times the plain loop's time); a real limit with sporadic 429s on top may settle under it.
What the benchmarks measure of it is in docs/performance.md.

The 429 retry budget (``retry_budget``) is counted per call by
:mod:`mddframes.http.attempts`, apart from the error retries (``max_retries``).
No library was taken for this: the limiters on PyPI (pyrate-limiter,
requests-ratelimiter, limits, aiolimiter) keep a rate they are given; none learns it
from the service's answers or honours ``Retry-After``, which is the job here.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

from mddframes.http.pace_measure import Phase, measure_allowance
from mddframes.http.retry_after import retry_after_seconds

__all__ = [
    "Pace",
    "current_pace_note",
    "retry_after_seconds",
]

#: Multiplicative decrease on a push-back when nothing was measured.
BETA = 0.85
#: Share of the measured allowance the pace keeps to after a push-back.
MARGIN = 0.97
#: Seconds in which the rate doubles in slow start (after a cold push-back), while the
#: pace is what holds the requests back; it at most doubles per answer.
SLOW_START = 0.1
#: The rate a slow start begins at, at least, in requests a second.
START_RATE = 8.0
#: Seconds in which the rate doubles after the slow start, until the next push-back.
CLIMB = 1.0
#: Growth a second, as a share of the rate, once settled: how slowly the pace probes
#: whether the service allows more (a push-back every few seconds at most).
SETTLED_PROBE = 0.03
#: Seconds of push-backs remembered to measure what the service allows.
MEMORY = 30.0
#: Requests a cold pace lets out in its first round; each round answered without a
#: push-back lets out one more (1, 2, 3, 4), then twice as many, until ``OPEN_WINDOW``.
FIRST_WINDOW = 1
#: Seconds a cold window's round waits for its answers at most before the next goes.
ROUND_MAX = 0.25
#: In flight at which a cold pace stops counting: no pace cost from then on.
OPEN_WINDOW = 64
#: Seconds after a thread last waited for a slot during which the pace counts as the
#: bottleneck, at most (two slots when shorter): the rate grows only then, since a
#: rate nobody uses proves nothing.
BUSY = 0.5
#: The lowest rate the pace goes down to, in requests a second.
MIN_RATE = 0.2
#: Seconds of successes the measured rate counts.
WINDOW = 1.0
#: Answers (successes and push-backs) the share of push-backs is counted over.
NOISE_WINDOW = 64
#: Answers needed before a push-back may be judged noise: with fewer, each one is taken
#: as the service's limit, as a limit's first push-backs must be to be found fast.
NOISE_MIN = 8
#: The share of push-backs among the recent answers up to which one that the rate does
#: not explain is noise (sporadic 429s of a flaky service), not a limit.
NOISE_SHARE = 0.25

#: Limits in a row that lowered the allowance, after which it is noise's and forgotten.
FALLS = 3

#: What a fresh push-back is (:meth:`Pace._judge`).
Verdict = Literal["limit", "noise", "unexplained"]

Clock = Callable[[], float]
Sleep = Callable[[float], None]

logger = logging.getLogger(__name__)

_PACES: weakref.WeakSet[Pace] = weakref.WeakSet()
_PACES_LOCK = threading.Lock()


class Pace:
    """The shared, adaptive pace of one client.

    Parameters
    ----------
    max_rate : float, optional
        A declared limit in requests a second: the pace starts there and never goes
        above it. None: unknown until the service pushes back.
    retry_after_max : float
        The longest ``Retry-After`` honoured, in seconds (a longer one is cut to this).
    clock, sleep : callable, optional
        The monotonic clock and the sleep (a fake pair in tests).
    wall : callable, optional
        The wall clock, to read an HTTP-date ``Retry-After``.
    rng : random.Random, optional
        The source of jitter.
    """

    _overshoot_from: float | None  # (set by _count_afresh)

    def __init__(
        self,
        max_rate: float | None = None,
        *,
        retry_after_max: float = 60.0,
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
        wall: Clock = time.time,
        rng: random.Random | None = None,
    ) -> None:
        self.max_rate = max_rate
        self.retry_after_max = retry_after_max
        self._clock = clock
        self._sleep = sleep
        self._wall = wall
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)  # a cold window's slot came free
        self.rate: float | None = max_rate
        # a cold pace counts what is in flight until the window opens (None: open)
        self._window: int | None = FIRST_WINDOW if max_rate is None else None
        # the cold window's round: sends since ``_round_from``, and their answers
        self._round_from = clock()
        self._round_sent = self._round_answered = self._round_ok = 0
        self._passed = 0  # successes in all
        self._sent = 0  # requests sent under a rate
        # at each push-back: its time, the successes and sends then, the new rate
        self._marks: deque[tuple[float, int, int, float]] = deque()
        self._floor: float | None = None  # what the service was measured to allow
        self._next_free = clock()  # the earliest time the next slot may start
        self._last_slot = -math.inf  # when the last slot was taken
        self._blocked_until = 0.0
        self._retry_until = 0.0  # when the last 429's Retry-After runs out
        self._decreased_at = -math.inf
        # cold (rate None), then "slow" (slow start), "climb", "settled"
        self._phase: Phase = "cold" if max_rate is None else "settled"
        self._successes: deque[float] = deque()
        self._last_success = -math.inf
        self._last_wait = -math.inf  # when a thread last waited for a slot
        self._grown_at = -math.inf  # when the slow start last grew the rate
        # the recent answers: True for a push-back, False for a success
        self._recent: deque[bool] = deque(maxlen=NOISE_WINDOW)
        self._count_afresh()
        self._falls = 0  # limits in a row whose measure lowered the allowance
        self.throttles = 0
        #: Push-backs taken as noise: they held their own request, not the rate.
        self.noise = 0
        self.last_throttle: float | None = None
        self.last_retry_after: float | None = None
        self.waited = 0.0
        with _PACES_LOCK:
            _PACES.add(self)

    def __repr__(self) -> str:
        return f"<Pace {self.describe()}>"

    def retire(self) -> None:
        """Leave the process's progress bars: its client was closed (see
        :func:`current_pace_note`)."""
        with _PACES_LOCK:
            _PACES.discard(self)

    # -- sending -----------------------------------------------------------------

    def acquire(self, not_before: float = 0.0) -> float:
        """Wait for this thread's slot, then return the send time (the clock's).

        Every acquired slot is answered by one call of :meth:`succeeded`,
        :meth:`throttled` or :meth:`unanswered`.

        Parameters
        ----------
        not_before : float
            A time (the clock's) before which this request may not go (its own
            ``Retry-After``): waited first, then a slot is taken.
        """
        waited = False
        while True:
            with self._lock:
                now = self._clock()
                wait = max(not_before, self._blocked_until) - now
                if wait <= 0:
                    window = self._window
                    if window is not None and self.rate is None:
                        if self._round_sent >= window:
                            late = now - self._round_from - ROUND_MAX
                            if late < 0:
                                # a cold pace: the next round goes when this one is
                                # answered (or after ROUND_MAX: slow answers are no
                                # reason to keep the workers waiting)
                                self._room.wait(min(0.05, -late))
                                continue
                            self._next_round(grow=True)
                        self._round_sent += 1
                        return now
                    wait = self._take_slot(now)
                    if wait <= 0:
                        self._sent += 1
                        if waited:
                            # marked when the wait ends: a slot longer than BUSY still
                            # counts as the pace holding requests back (slow rates grow)
                            self._last_wait = now
                        return now
                    self._last_wait = now
                    waited = True
                self.waited += wait
            # wait for the next free slot, then compete for it again (the rate may
            # have changed meanwhile; one thread gets each slot)
            self._sleep(wait)

    def _take_slot(self, now: float) -> float:
        """Take the slot now if it is free (0.0), else the wait until the next one."""
        rate = self.rate
        if rate is None:
            return 0.0
        if now >= self._next_free:
            # a thread woken a little late may catch up a tenth of a slot, never more
            self._last_slot = max(self._next_free, now - 0.1 / rate)
            self._next_free = self._last_slot + 1.0 / rate
            return 0.0
        return self._next_free - now

    def _answered(self, sent_at: float, ok: bool) -> None:
        """Count an answer in the cold window's round (the lock held); when the whole
        round is answered, the next may go: one more at first (a first 429 then costs
        a burst of the service's size at most), then twice as many, until
        ``OPEN_WINDOW``; not more after a failure."""
        window = self._window
        if window is None or self.rate is not None or sent_at < self._round_from:
            return
        self._round_answered += 1
        self._round_ok += ok
        if self._round_answered >= self._round_sent:
            self._next_round(grow=self._round_ok >= window)

    def _next_round(self, grow: bool) -> None:
        """Start the cold window's next round (the lock held), one wider if ``grow``."""
        window = self._window
        if window is None:
            return
        if grow:
            window = window + 1 if window < 4 else 2 * window
        self._window = None if window >= OPEN_WINDOW else window
        self._round_from = self._clock()
        self._round_sent = self._round_answered = self._round_ok = 0
        self._room.notify_all()

    # -- answers -------------------------------------------------------------------

    def unanswered(self, sent_at: float) -> None:
        """A request sent at ``sent_at`` got no answer to learn from (a 5xx, lost).

        Not a push-back: the rate stays, and a cold window's round still counts it as
        answered without one (an error says nothing of the service's limit).
        """
        with self._lock:
            self._answered(sent_at, True)

    def succeeded(self, sent_at: float) -> None:
        """A request sent at ``sent_at`` was answered (not 429/503): speed up."""
        with self._lock:
            self._answered(sent_at, True)
            self._recent.append(False)
            self._since_cut += sent_at > self._decreased_at
            now = self._clock()
            self._last_success = now
            self._successes.append(now)
            self._passed += 1
            while self._successes and self._successes[0] < now - WINDOW:
                self._successes.popleft()
            rate = self.rate
            if rate is None:
                return
            if sent_at <= self._decreased_at or now - self._last_wait > min(BUSY, 2.0 / rate):
                # an answer to the burst before the decrease, or a rate nobody uses:
                # neither says the service allows more
                self._grown_at = now
                return
            since = max(0.0, min(now - self._grown_at, 2 * BUSY))
            self._grown_at = now
            if self._phase == "slow":
                # the rate doubles every SLOW_START seconds of being used, at most
                # once an answer
                rate *= min(2.0, 2.0 ** (since / SLOW_START))
            elif self._phase == "climb":
                rate *= 2.0 ** (since / CLIMB)
            else:
                # settled: probe slowly whether the service allows more
                rate *= 1.0 + SETTLED_PROBE * since
            self.rate = rate if self.max_rate is None else min(rate, self.max_rate)
            # a faster rate brings the next slot nearer (the waiting threads see it)
            self._next_free = min(self._next_free, self._last_slot + 1.0 / self.rate)

    def throttled(self, sent_at: float, retry_after: float | None = None) -> float:
        """A request sent at ``sent_at`` was answered 429 or 503: slow down.

        Parameters
        ----------
        sent_at : float
            When the request was sent (from :meth:`acquire`).
        retry_after : float, optional
            The answer's ``Retry-After`` in seconds (:func:`retry_after_seconds`).

        Returns
        -------
        float
            The time (the clock's) before which this request may not be sent again:
            ``Retry-After`` (capped) plus jitter, or one slot of the new rate.
        """
        with self._lock:
            now = self._clock()
            self.throttles += 1
            self._recent.append(True)
            fresh = sent_at > self._decreased_at  # sent after the last decrease
            self._since_cut += fresh
            self._pushed_since_cut += fresh
            if fresh and self._pushed_since_cut == 1:
                self._overshoot_from = self.rate
            verdict = self._judge(now) if fresh else None
            limit = verdict == "limit"
            if verdict == "unexplained":
                self._forget_allowance()
            if fresh and not limit:
                # noise: it holds its own request (below), not the others; the cold
                # window's round counts it as answered, and what passed counts it as
                # let through (the service answered it without being full)
                self.noise += 1
                self._passed += 1
                self._answered(sent_at, True)
            # pushed back again while an earlier Retry-After still runs, and nothing
            # passed since: the service means the whole client. Not in the slow start:
            # its requests are the pace's own guesses at a rate not yet known, and a
            # guess too fast says only that (holding then would cost a slow service a
            # whole Retry-After)
            previous = self.last_throttle
            hold = (
                limit
                and self._phase != "slow"
                and now < self._retry_until
                and self._last_success < (previous or 0.0)
            )
            self.last_throttle = now
            if limit:
                self._decrease(now)
            # a slot of the pace; unpaced (only noise so far), a slot of a slow start's
            # first rate: no reason to hold the request longer
            spacing = 1.0 / (self.rate or START_RATE)
            if retry_after is None:
                return now + spacing * (1.0 + self._rng.random())
            wait = min(max(retry_after, 0.0), self.retry_after_max)
            self.last_retry_after = wait
            spread = 0.05 * wait + (spacing if self.rate else 0.0)
            until = now + wait + self._rng.uniform(0.0, min(1.0, spread))
            if hold:
                self._blocked_until = max(self._blocked_until, until)
                logger.debug("a 429 while Retry-After runs: the client waits %.2f s", until - now)
            self._retry_until = max(self._retry_until, now + wait)
            return until

    def _judge(self, now: float) -> Verdict:
        """Whether a fresh push-back (already counted among the recent answers) is the
        service's limit or noise (the lock held).

        A limit is the rate's doing: its push-backs come together once the rate is
        over it, and slowing down stops them. Noise comes at any rate, a steady share
        of the answers. So a push-back is a limit when it is the first among fewer
        than ``NOISE_MIN`` answers (a limit must be acted on at once to be found
        fast); in the slow start, when it is the second or later of the push-backs
        to what the slow start sent and more than ``NOISE_SHARE`` of its answers
        (one is not yet an overshoot, and a cluster that ended the cold phase is not
        held against it); after it, when more than ``NOISE_SHARE`` of the recent
        answers were push-backs, or the rate went above what the service was
        measured to allow (measured now, after a cut that could not be). At or below
        that allowance a token bucket pushes nothing back, but for one while its
        measure runs a little high: the second such push-back since the last limit is
        "unexplained", noise that says the allowance was noise's too. Else noise.
        """
        recent = self._recent
        pushed = sum(recent)
        if pushed == 1 and len(recent) < NOISE_MIN:
            return "limit"
        if self._phase == "slow":
            # its own answers (a cluster that ended the cold phase is not held against
            # it), and one push-back among its guesses is not yet an overshoot
            overshot = self._pushed_since_cut >= 2 and (
                self._pushed_since_cut > NOISE_SHARE * self._since_cut
            )
            return "limit" if overshot else "noise"
        if pushed > NOISE_SHARE * len(recent):
            return "limit"
        rate, floor = self.rate, self._floor
        if rate is not None and floor is None:
            # after a cut that could not be measured: what passed since may measure it
            floor = self._measure(now)
        if rate is None or floor is None:
            return "noise"
        # a little above it: probing back up to what passed is no news (the measure
        # between two push-backs is near the rate that ran)
        if rate > floor / MARGIN:
            return "limit"
        # at or below it a token bucket pushes back only while its measure runs a
        # little high (the burst); a second time since the last limit, it does not
        self._quiet += 1
        return "unexplained" if self._quiet >= 2 else "noise"

    def _forget_allowance(self) -> None:
        """Drop an allowance that noise measured, and find the rate again from a slow
        start at the rate now (the lock held): a real limit is found as at first."""
        self._floor = None
        self._phase = "slow"
        self._count_afresh()

    def _count_afresh(self) -> None:
        """Count afresh what comes after a cut (the lock held): the answers to requests
        sent since, the push-backs among them, the rate at the first (where an overshoot
        began), and the push-backs at or below the measured allowance."""
        self._since_cut = self._pushed_since_cut = self._quiet = 0
        self._overshoot_from = None

    def _decrease(self, now: float) -> None:
        while self._successes and self._successes[0] < now - WINDOW:
            self._successes.popleft()
        passed = float(len(self._successes))  # successes in the last second
        previous = self._floor
        measured = self._measure(now)
        floor = self._floor
        rate = self.rate
        if rate is None:
            # cold: what the service let through in the last second is all that is
            # known; slow start from there
            self.rate = max(START_RATE, passed)
            self._phase = "slow"
            self._window = None
            self._room.notify_all()
            logger.info("the service pushed back: pacing from %s", _rate_words(self.rate))
        elif self._phase == "slow":
            # the end of the slow start: the rate overshot while the service's burst
            # drained; half of it passed (or what was measured), and the rate climbs
            # again from there, more slowly
            self._phase = "climb"
            began = self._overshoot_from or rate
            self.rate = max(MIN_RATE, MARGIN * max(began / 2, floor or 0.0))
            self.rate = min(self.rate, BETA * rate)
        elif measured is None:
            # too soon after the last push-back to measure, or the pace was not what
            # held the requests back: a plain decrease, and no more climbing
            self._phase = "settled"
            self.rate = max(MIN_RATE, BETA * rate)
        else:
            self._phase = "settled"
            self.rate = max(MIN_RATE, MARGIN * min(measured, rate))
            # a token bucket's allowance holds still; one that falls at every limit is
            # the measure of a rate that noise keeps cutting
            self._falls = self._falls + 1 if previous is not None and measured < previous else 0
            if self._falls >= FALLS:
                self._falls = 0
                self._forget_allowance()
            logger.debug(
                "pushed back at %.1f req/s (%d passed in the last second, %s measured): "
                "now %.1f", rate, passed, floor, self.rate,
            )  # fmt: skip
        # the service's bucket is empty: the next slot one interval of the new rate on
        self._next_free = now + 1.0 / self.rate

        self._marks.append((now, self._passed, self._sent, self.rate))
        self._decreased_at = now
        self._count_afresh()
        self._grown_at = now

    def _measure(self, now: float) -> float | None:
        """What the service allows, from the successes between push-backs
        (:func:`.pace_measure.measure_allowance`); kept as ``_floor``."""
        marks = self._marks
        while marks and (marks[0][0] < now - MEMORY or len(marks) > 8):
            marks.popleft()
        if not marks:
            return None
        measured = measure_allowance(marks[-1], now, self._passed, self._sent, self._floor)
        if measured is not None:
            self._floor = measured
        return measured

    # -- telling -------------------------------------------------------------------

    def describe(self) -> str:
        """The pace in words: ``"paced by the service: 18 req/s"``, or ``"not paced"``."""
        rate = self.rate
        if rate is None:
            return "not paced"
        if self.throttles:
            return f"paced by the service: {_rate_words(rate)}"
        return f"paced: {_rate_words(rate)} (max_rate)"

    def snapshot(self) -> dict[str, Any]:
        """The pace's state: rate, throttles seen, last ``Retry-After``, seconds waited."""
        with self._lock:
            return {
                "rate": self.rate,
                "max_rate": self.max_rate,
                "throttles": self.throttles,
                "last_retry_after": self.last_retry_after,
                "waited": self.waited,
            }

    def recently_throttled(self, within: float = 10.0) -> bool:
        """Whether the service pushed back in the last ``within`` seconds."""
        last = self.last_throttle
        return last is not None and self._clock() - last <= within


def _rate_words(rate: float) -> str:
    return f"{rate:.0f} req/s" if rate >= 10 else f"{rate:.1f} req/s"


def current_pace_note() -> str | None:
    """What a progress bar says while a client of this process is paced, else None.

    Of the clients not closed, the pace most recently pushed back (within 10 s) or running under a declared
    ``max_rate``, e.g. ``"paced by the service: 18 req/s"``.
    """
    with _PACES_LOCK:
        paces = list(_PACES)
    throttled = [p for p in paces if p.recently_throttled()]
    if throttled:
        return max(throttled, key=lambda p: p.last_throttle or 0.0).describe()
    declared = [p for p in paces if p.max_rate is not None and p.waited > 0]
    return declared[0].describe() if declared else None
