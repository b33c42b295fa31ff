"""Which calls urllib3 repeats, and how: the ``Retry`` policies of the session's adapters.

The API's adapters (:func:`make_connect_retry`) repeat only a failure to connect,
for every method (nothing was sent); statuses and lost answers are the paced loop's
(:mod:`mddframes.http.attempts`). The token request's adapter (:func:`make_retry`)
repeats it on 429/500/502/503/504 and on connection errors, with exponential
back-off, jitter and ``Retry-After`` honoured (capped): it creates nothing.
:class:`IdempotentRetry` makes any error final for a method that may not be repeated.
A wait that would outlast the call's deadline (:mod:`mddframes.http.guard`) is not
waited: the call ends at once.
"""

from __future__ import annotations

import inspect
from types import TracebackType
from typing import Any, Self

from urllib3.connectionpool import ConnectionPool
from urllib3.response import BaseHTTPResponse
from urllib3.util.retry import Retry

from mddframes.http.guard import current_guard

#: Statuses retried for GET/PUT: the gateway's 429/502/503/504, and 500 too, because a
#: GET or a whole-object PUT is idempotent, and flaky gateways do answer 500.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
RETRY_METHODS = frozenset({"GET", "PUT", "HEAD"})
BACKOFF_FACTOR = 0.25
BACKOFF_JITTER = 0.25
BACKOFF_MAX = 30.0


class IdempotentRetry(Retry):
    """urllib3 ``Retry`` that never repeats a method outside ``allowed_methods``.

    Plain ``Retry`` repeats any method after a connection error (it assumes the
    request never left); mddframes promises that a POST goes out at most once, so
    for such a method every error is final.
    """

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        if error is not None and (method is None or not self._is_method_retryable(method)):
            # connect/read/other=False make the stock Retry give up on this error at once.
            final = self.new(connect=False, other=False, read=False)
            return Retry.increment(final, method, url, response, error, _pool, _stacktrace)
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def sleep(self, response: BaseHTTPResponse | None = None) -> None:
        """Wait before the next attempt, unless the wait would outlast the call's deadline
        (then :class:`~mddframes.http.guard.DeadlinePassed` at once)."""
        guard = current_guard()
        if guard is not None:
            retry_after = None
            if response is not None and self.respect_retry_after_header:
                retry_after = self.get_retry_after(response)
            wait = min(retry_after, RETRY_AFTER_MAX) if retry_after else self.get_backoff_time()
            guard.allow_wait(wait)
        super().sleep(response)


# urllib3 >= 2.5 caps Retry-After itself (default 6 hours); a shorter cap keeps a
# misbehaving server from parking a notebook for hours.
_CAP_RETRY_AFTER = "retry_after_max" in inspect.signature(Retry.__init__).parameters
RETRY_AFTER_MAX = 120


def make_retry(max_retries: int, methods: frozenset[str] = RETRY_METHODS) -> Retry:
    """The retry policy mounted on the session's adapters.

    Parameters
    ----------
    max_retries : int
        Retries after the first attempt (0 disables retrying).
    methods : frozenset of str
        The methods that may be repeated.
    """
    extra: dict[str, Any] = {"retry_after_max": RETRY_AFTER_MAX} if _CAP_RETRY_AFTER else {}
    return _policy(
        max_retries,
        **extra,
        read=max_retries,
        status=max_retries,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=methods,
        respect_retry_after_header=True,
    )


def make_connect_retry(max_retries: int) -> Retry:
    """The policy of the API's adapters: repeat a failure to connect, nothing else.

    A refused or timed-out connection sent nothing, so every method is repeated; a
    read error (the request went out) and every status are left to
    :func:`mddframes.http.attempts.send_paced`.

    Parameters
    ----------
    max_retries : int
        Repeats after the first attempt (0 disables them).
    """
    return _policy(
        max_retries,
        read=False,
        status=0,
        status_forcelist=None,
        allowed_methods=None,
        respect_retry_after_header=False,
    )


def _policy(max_retries: int, **which: Any) -> IdempotentRetry:
    """What both policies share: ``max_retries`` in all and for connecting, the same
    back-off, no other errors or redirects repeated, and the last answer returned rather
    than raised; ``which`` says what else is repeated."""
    return IdempotentRetry(
        total=max_retries,
        connect=max_retries,
        backoff_factor=BACKOFF_FACTOR,
        backoff_jitter=BACKOFF_JITTER,
        backoff_max=BACKOFF_MAX,
        other=0,
        redirect=False,
        raise_on_redirect=False,
        raise_on_status=False,
        **which,
    )
