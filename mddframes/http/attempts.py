"""The attempts of one call: paced, repeated on 429 within a budget, and on errors when safe.

:func:`send_paced` sends one call through the client's :class:`~mddframes.http.pace.Pace`
and decides what an answer means for the next attempt:

=====================  ==========================================================
answer                 what happens
=====================  ==========================================================
429                    the pace hears "slow down" (it judges limit or noise); sent
                       again (any method: a 429 was not processed) after its own
                       ``Retry-After`` or a slot or two, up to ``retry_budget`` times
503 with Retry-After   the same, counted and repeated like an error (below)
500, 502, 503, 504     sent again after a back-off of its own (exponential, full
                       jitter, capped) if the method is repeatable; the pace's rate
                       stays (an error is not a limit)
no answer, lost        the same; a POST is not repeated:
                       :class:`~mddframes.errors.AnswerLostError` ("it may have been
                       done"), and so is a 5xx to a POST that acts
anything else          the pace speeds up; handed back
=====================  ==========================================================

Repeatable: GET, PUT and HEAD, and the POSTs that change nothing (a single export).
Error repeats count against ``max_retries``, 429 repeats against ``retry_budget``;
no wait starts that would end past the call's deadline. A failure to connect at all
(nothing was sent) is repeated by urllib3 for every method (:mod:`.retry`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from mddframes import errors
from mddframes.http.endpoints import Endpoint
from mddframes.http.guard import DeadlinePassed
from mddframes.http.pace import Pace, retry_after_seconds
from mddframes.http.retry import BACKOFF_FACTOR, BACKOFF_MAX, RETRY_METHODS
from mddframes.http.translation import bound_error, nothing_sent

#: POSTs that change nothing on the service: repeating one is safe.
SAFE_POSTS = frozenset({"externalExportStructure", "getToken"})
#: Statuses repeated for a repeatable method (with back-off).
ERROR_STATUSES = frozenset({500, 502, 503, 504})
#: Statuses after which a POST that acts may have acted: a 500 from a handler that
#: failed half-way, a gateway's 502/504 after the service answered, a proxy's 503 do not
#: say whether the service did it. Such a POST is not sent again blindly: its answer
#: counts as lost, and the caller asks the service where it can (elements/settling.py).
MAY_HAVE_ACTED = ERROR_STATUSES


@dataclass(frozen=True)
class Budget:
    """How many times one call may be sent again, and for how long.

    Attributes
    ----------
    max_retries : int
        Repeats after errors (5xx, a lost answer) of a repeatable method.
    retry_budget : int
        Repeats after 429 (any method).
    deadline : float
        Seconds the call may take in all, waits included.
    """

    max_retries: int
    retry_budget: int
    deadline: float


def repeatable(entry: Endpoint) -> bool:
    """Whether ``entry`` may be sent again after an error (it changes nothing twice)."""
    return entry.method in RETRY_METHODS or entry.operation in SAFE_POSTS


def send_paced(
    send: Callable[[], requests.Response],
    entry: Endpoint,
    url: str,
    pace: Pace,
    budget: Budget,
    *,
    describe: str = "",
    started: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> requests.Response:
    """Send one call through ``pace`` and return its last answer (any status).

    Parameters
    ----------
    send : callable
        Sends the request once; raises ``MddError`` when no answer came.
    entry : Endpoint
        The operation.
    url : str
        Its URL (for messages).
    pace : Pace
        The client's shared pace.
    budget : Budget
        The repeats allowed.
    describe : str
        What the call is about (``"table 'tbl-1'"``), for the message after the budget.
    started : float, optional
        When the call began (``clock``'s time), if before this: its deadline counts
        from then (a call sent again with a renewed token after a 401).
    clock, sleep : callable
        The monotonic clock and the sleep (fakes in tests).

    Returns
    -------
    requests.Response
        The answer. Its ``mdd_attempts`` says how often it was sent, ``mdd_lost`` how
        many earlier attempts lost their answer, ``mdd_rate_limited`` how many were
        answered 429.

    Raises
    ------
    AnswerLostError
        A POST that acts went out and its answer was lost.
    RateLimitError
        Still 429 after ``retry_budget`` repeats (names the object, the pace, the last
        ``Retry-After`` and the settings to change).
    MddError
        No answer after ``max_retries`` repeats (as ``send`` raised it).
    """
    started = clock() if started is None else started
    can_repeat = repeatable(entry)
    errors_used = limited = lost = 0
    not_before = 0.0
    while True:
        sent_at = pace.acquire(not_before)
        not_before = 0.0
        try:
            response = send()
        except errors.TransportError as exc:
            pace.unanswered(sent_at)
            _raise_unless_repeated(exc, entry, url, can_repeat, errors_used < budget.max_retries)
            _sleep_backoff(budget, clock() - started, errors_used, entry, url, None, sleep)
            errors_used += 1
            lost += 1
            continue
        except BaseException:
            pace.unanswered(sent_at)
            raise
        status = response.status_code
        retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        if status == 429 or (status == 503 and retry_after is not None):
            # the service says "slow down": the pace hears it, and this request waits
            # its Retry-After (or a slot or two of the pace) before it goes again
            until = pace.throttled(sent_at, retry_after)
            if status == 429:
                allowed = limited < budget.retry_budget
            else:
                allowed = can_repeat and errors_used < budget.max_retries
            if allowed:
                response.close()
                _within(budget, until - started, entry, url, status)
                if status == 429:
                    limited += 1
                else:
                    errors_used += 1
                not_before = until
                continue
            if status == 429:
                response.close()
                raise _budget_spent(entry, url, pace, limited, clock() - started, describe,
                                    response.headers.get("Retry-After"))  # fmt: skip
        elif status in ERROR_STATUSES and can_repeat and errors_used < budget.max_retries:
            # an error, not a limit: this request alone backs off, the pace stays
            pace.unanswered(sent_at)
            response.close()
            _sleep_backoff(budget, clock() - started, errors_used, entry, url, status, sleep)
            errors_used += 1
            continue
        elif status in ERROR_STATUSES:
            pace.unanswered(sent_at)
        else:
            pace.succeeded(sent_at)
        response.mdd_attempts = 1 + errors_used + limited  # type: ignore[attr-defined]
        response.mdd_lost = lost  # type: ignore[attr-defined]
        response.mdd_rate_limited = limited  # type: ignore[attr-defined]
        return response


def _raise_unless_repeated(
    exc: errors.TransportError, entry: Endpoint, url: str, can_repeat: bool, retries_left: bool
) -> None:
    """Return when a call whose request failed goes again: its answer was lost, the method
    is repeatable and ``max_retries`` not spent. Else raise what the caller sees: ``exc``
    itself, or the :class:`~mddframes.errors.AnswerLostError` of a POST that acts."""
    if not answer_lost(exc):
        raise exc
    if can_repeat and retries_left:
        return
    if not can_repeat:
        raise lost_answer_error(exc, entry, url) from exc
    raise exc


def _sleep_backoff(
    budget: Budget,
    elapsed: float,
    done: int,
    entry: Endpoint,
    url: str,
    status: int | None,
    sleep: Callable[[float], None],
) -> None:
    """Sleep the back-off before error repeat ``done + 1``, or raise the deadline's
    ``TransportError`` if that repeat would start past it (``elapsed`` so far)."""
    wait = _backoff(done)
    _within(budget, elapsed + wait, entry, url, status)
    sleep(wait)


def _within(budget: Budget, elapsed: float, entry: Endpoint, url: str, status: int | None) -> None:
    """Raise the deadline's ``TransportError`` now if the next attempt would start past it."""
    if elapsed >= budget.deadline:
        raise bound_error(DeadlinePassed(budget.deadline), entry, url, status=status)


def _backoff(done: int) -> float:
    """Exponential back-off with full jitter: anywhere up to 0.125, 0.25, 0.5, ... s
    (capped at ``BACKOFF_MAX``), so the requests that failed together do not come back
    together. The first is short: most errors of a flaky service pass at once (urllib3's
    ``Retry`` sends its first repeat without waiting)."""
    ceiling: float = min(BACKOFF_MAX, BACKOFF_FACTOR * 2.0 ** (done - 1))
    return ceiling * random.random()


def answer_lost(exc: BaseException) -> bool:
    """Whether a failed call's request went out (its answer lost), not just failed to
    connect: a read time-out or a dropped connection, not a refused one."""
    cause: BaseException | None = exc.__cause__
    if not isinstance(cause, requests.exceptions.ConnectionError | requests.exceptions.Timeout):
        return False  # a deadline, a cap, TLS: not a lost answer to repeat
    if isinstance(cause, requests.exceptions.SSLError):
        return False
    return not nothing_sent(cause)


def lost_answer_error(
    exc: errors.MddError, entry: Endpoint, url: str, status: int | None = None
) -> errors.AnswerLostError:
    """The :class:`~mddframes.errors.AnswerLostError` of a POST whose answer was lost."""
    how = f"it was answered {status}" if status else "the connection dropped"
    return errors.AnswerLostError(
        f"the request went out but its answer was lost ({how}): the service may have "
        f"done it, so it was not sent again. Check on the service before repeating it "
        f"(first failure: {exc.message})",
        operation=entry.operation,
        method=entry.method,
        url=url,
        status=status,
        server_message=exc.server_message,
    )


def _budget_spent(
    entry: Endpoint,
    url: str,
    pace: Pace,
    limited: int,
    elapsed: float,
    describe: str,
    retry_after: str | None,
) -> errors.RateLimitError:
    what = f"{describe}: " if describe else ""
    seen = f"; last Retry-After: {retry_after}" if retry_after else ""
    return errors.RateLimitError(
        f"{what}the service kept answering 429 Too Many Requests: {limited} repeat(s) over "
        f"{elapsed:.1f} s ({pace.describe()}{seen}). Raise retry_budget "
        "(MDD_RETRY_BUDGET), or declare the service's limit with max_rate "
        "(MDD_MAX_RATE, e.g. '400/min') so the client keeps under it",
        operation=entry.operation,
        method=entry.method,
        url=url,
        status=429,
    )
