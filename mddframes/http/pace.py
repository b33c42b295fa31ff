"""One pace per service: the client-side limiter that every thread of a client shares.

:class:`Pace` hands out one slot every ``1/rate`` and adapts the rate (AIMD, as the
adaptive retry mode of the AWS SDKs), held by the client's :class:`~mddframes.http.session.HttpSession`, so
the workers of every bulk call of that client draw from one budget:

- **No cost when nobody limits.** Until the service first pushes back (429 or 503) the
  rate is unknown and :meth:`Pace.acquire` returns at once; ``max_rate`` declares a
  limit up front (``"400/min"``) and the pace starts there instead, never above it.
- **Slows down on 429 and 503**, once per round: the new rate is ``BETA`` times the
  rate in force, and answers to requests sent before that decrease do not decrease it
  again (8 workers' answers to one burst are one signal, not eight). The first
  push-back after the slow start takes what passed in the last second instead, when
  the rate overshot it.
- **Speeds up on success**: from the first push-back on a cold start it doubles every
  half second (slow start, never past twice what the service let through in the
  last second) until the next push-back; after that, each
  success closes ``APPROACH`` of the gap to the rate at which the service last pushed
  back, and past it grows by 0.5% a success (probing: about one push-back in 30-40
  requests, whatever the rate).
- **One slot every ``1/rate``** (no burst): a waiting thread sleeps until the next
  free slot and takes it if no other thread did, so a change of rate applies to the
  waiting threads at once; a request held by its ``Retry-After`` waits that out
  first and then takes a slot, so it does not hold the others.
- **Retry-After** (seconds or an HTTP-date, :func:`retry_after_seconds`) is the least
  the answered request waits before it is sent again, capped at ``retry_after_max``
  and with jitter; it holds the whole client only when another 429 comes while an
  earlier one's ``Retry-After`` still runs and nothing passed in between (the service
  then means everyone).

The 429 retry budget (``retry_budget``) is counted per call by
:mod:`mddframes.http.attempts`, apart from the error retries (``max_retries``).
No library was taken for this: the limiters on PyPI (pyrate-limiter,
requests-ratelimiter, limits, aiolimiter) keep a fixed rate, and none adapts to the
service's answers or honours ``Retry-After``.
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
from email.utils import parsedate_to_datetime
from typing import Any

__all__ = [
    "Pace",
    "current_pace_note",
    "retry_after_seconds",
]

#: Multiplicative decrease on a push-back (the rate becomes this share of what passed).
BETA = 0.85
#: Share of the gap to the last push-back rate that each success closes.
APPROACH = 0.05
#: Growth per success past that rate, as a share of the rate (0.5%: the 15% lost to a
#: decrease is probed back in about 30 requests, whatever the rate, so a 429 comes
#: about once in 30-40 requests at most).
PROBE = 0.005
#: Seconds in which the rate doubles in slow start (after a cold push-back).
SLOW_START = 0.5
#: The lowest rate the pace goes down to, in requests a second.
MIN_RATE = 0.2
#: Seconds of successes the measured rate counts.
WINDOW = 1.0

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
        self.rate: float | None = max_rate
        self._next_free = clock()  # the earliest time the next slot may start
        self._blocked_until = 0.0
        self._retry_until = 0.0  # when the last 429's Retry-After runs out
        self._decreased_at = -math.inf
        self._w_max: float | None = None  # the rate at the last push-back
        self._successes: deque[float] = deque()
        self._last_success = -math.inf
        self._start_rate = 1.0
        self.throttles = 0
        self.last_throttle: float | None = None
        self.last_retry_after: float | None = None
        self.waited = 0.0
        with _PACES_LOCK:
            _PACES.add(self)

    def __repr__(self) -> str:
        return f"<Pace {self.describe()}>"

    # -- sending -----------------------------------------------------------------

    def acquire(self, not_before: float = 0.0) -> float:
        """Wait for this thread's slot, then return the send time (the clock's).

        Parameters
        ----------
        not_before : float
            A time (the clock's) before which this request may not go (its own
            ``Retry-After``): waited first, then a slot is taken.
        """
        while True:
            with self._lock:
                now = self._clock()
                wait = max(not_before, self._blocked_until) - now
                if wait <= 0:
                    wait = self._take_slot(now)
                    if wait <= 0:
                        return now
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
            self._next_free = max(self._next_free, now - 0.1 / rate) + 1.0 / rate
            return 0.0
        return self._next_free - now

    # -- answers -------------------------------------------------------------------

    def succeeded(self, sent_at: float) -> None:
        """A request sent at ``sent_at`` was answered (not 429/503): speed up."""
        with self._lock:
            now = self._clock()
            self._last_success = now
            self._successes.append(now)
            while self._successes and self._successes[0] < now - WINDOW:
                self._successes.popleft()
            rate = self.rate
            if rate is None or sent_at <= self._decreased_at:
                return
            w_max = self._w_max
            if w_max is None:
                # slow start: doubling every SLOW_START seconds since the push-back,
                # but never past twice what the service let through in the last second
                grown = self._start_rate * 2.0 ** ((now - self._decreased_at) / SLOW_START)
                rate = max(rate, min(grown, 2.0 * len(self._successes) + 4.0))
            elif rate < w_max:
                rate += max((w_max - rate) * APPROACH, PROBE * rate)
            else:
                rate += PROBE * rate
            self.rate = rate if self.max_rate is None else min(rate, self.max_rate)

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
            fresh = sent_at > self._decreased_at  # sent after the last decrease
            # pushed back again while an earlier Retry-After still runs, and nothing
            # passed since: the service means the whole client
            previous = self.last_throttle
            hold = fresh and now < self._retry_until and self._last_success < (previous or 0.0)
            self.last_throttle = now
            if fresh:
                self._decrease(now)
            rate = self.rate or MIN_RATE
            spacing = 1.0 / rate
            if retry_after is None:
                return now + spacing * (1.0 + self._rng.random())
            wait = min(max(retry_after, 0.0), self.retry_after_max)
            self.last_retry_after = wait
            until = now + wait + self._rng.uniform(0.0, min(1.0, 0.1 * wait + spacing))
            if hold:
                self._blocked_until = max(self._blocked_until, until)
                logger.debug("a 429 while Retry-After runs: the client waits %.2f s", until - now)
            self._retry_until = max(self._retry_until, now + wait)
            return until

    def _decrease(self, now: float) -> None:
        while self._successes and self._successes[0] < now - WINDOW:
            self._successes.popleft()
        passed = float(len(self._successes))  # successes in the last second
        if self.rate is None:
            # cold: what the service let through in the last second is all that is
            # known; slow start from there
            self.rate = self._start_rate = max(2.0, passed)
            logger.info("the service pushed back: pacing from %s", _rate_words(self.rate))
        elif self._w_max is None:
            # the end of the slow start: the rate overshot while the service's burst
            # drained; what it let through in the last second is the better measure
            self.rate = max(MIN_RATE, min(self.rate * BETA, max(passed, self.rate / 2)))
            self._w_max = self.rate
        else:
            self._w_max = self.rate
            self.rate = max(MIN_RATE, BETA * self.rate)
            logger.debug(
                "pushed back at %.1f req/s (%d passed in the last second): now %.1f",
                self._w_max,
                passed,
                self.rate,
            )
        # the service's bucket is empty: the next slot one interval of the new rate on
        self._next_free = now + 1.0 / self.rate
        self._decreased_at = now

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

    The pace most recently pushed back (within 10 s) or running under a declared
    ``max_rate``, e.g. ``"paced by the service: 18 req/s"``.
    """
    with _PACES_LOCK:
        paces = list(_PACES)
    throttled = [p for p in paces if p.recently_throttled()]
    if throttled:
        return max(throttled, key=lambda p: p.last_throttle or 0.0).describe()
    declared = [p for p in paces if p.max_rate is not None and p.waited > 0]
    return declared[0].describe() if declared else None


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """The seconds a ``Retry-After`` header asks for: delta-seconds or an HTTP-date.

    Parameters
    ----------
    value : str or None
        The header (``"7"`` or ``"Wed, 21 Oct 2026 07:28:00 GMT"``).
    now : float, optional
        The wall clock (``time.time()``) to count an HTTP-date from.

    Returns
    -------
    float or None
        Seconds (0 for a date already past); None when absent or unreadable.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
