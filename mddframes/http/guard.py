"""Bounds on one call: a deadline for the whole exchange and a cap on the answer's size.

A read time-out bounds one socket read only: an answer trickling a byte every half
second never trips it. :class:`Guard` bounds the whole call instead. The session's
adapters (:class:`GuardedAdapter`) open connections that attach themselves to the guard
of the call they serve (a thread-local set around the send); the guard's clock starts
when the first attempt connects or sends, and covers retries, their waits and the
reading of the body, streamed or not. When it runs out, one watchdog thread shuts the
connection's socket down: whatever read or write was blocked on it returns at once,
and the reader raises :class:`DeadlinePassed` instead of what the broken read would
say.

:class:`GuardedBody` replaces ``response.raw``: it counts the body's bytes after
decompression (a gzip bomb stops at the cap, urllib3 inflating it piece by piece) and
raises :class:`BodyTooLarge` past ``max_response_bytes``.

Neither exception is an ``OSError`` (nor a ``requests`` exception, which is one):
urllib3 would take such an error for a broken connection and retry it.
"""

from __future__ import annotations

import heapq
import itertools
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, Self

from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool


class BoundExceeded(Exception):
    """A call went past one of its bounds (translated by :mod:`.translation`)."""

    def __init__(self, message: str, received: int | None) -> None:
        super().__init__(message)
        self.received = received


class DeadlinePassed(BoundExceeded):
    """The call did not complete within its deadline."""

    def __init__(self, seconds: float, received: int | None = None) -> None:
        super().__init__(f"no complete answer within {seconds:g} s", received)
        self.seconds = seconds


class BodyTooLarge(BoundExceeded):
    """The answer's body is larger than the configured cap."""

    def __init__(self, cap: int, received: int | None = None, declared: int | None = None) -> None:
        super().__init__(f"the answer is larger than {cap:,} bytes", received)
        self.cap = cap
        self.declared = declared


# One lock for every guard and connection: attaching a connection to a guard and the
# watchdog's "is it still this guard's?" then cannot interleave.
_LOCK = threading.Lock()
_current = threading.local()


class Guard:
    """The deadline and size cap of one call.

    Parameters
    ----------
    seconds : float
        The deadline, counted from the first attempt's connect or send.
    cap : int
        The largest body read, in bytes after decompression.
    """

    def __init__(self, seconds: float, cap: int) -> None:
        self.seconds = seconds
        self.cap = cap
        self.expired = False
        self.done = False
        self.started: float | None = None
        self._connections: list[Any] = []

    def __enter__(self) -> Self:
        _current.guard = self
        return self

    def __exit__(self, *exc_info: object) -> None:
        _current.guard = None

    def attach(self, connection: Any) -> None:
        """Make ``connection`` this call's (its socket is shut down when time runs out).

        Raises
        ------
        DeadlinePassed
            If the deadline has already passed (no new attempt is started then).
        """
        with _LOCK:
            if self.expired:
                raise DeadlinePassed(self.seconds)
            connection.mdd_guard = self
            if connection not in self._connections:
                self._connections.append(connection)
            if self.started is None:
                self.started = time.monotonic()
                _watchdog.watch(self.started + self.seconds, self)

    def allow_wait(self, seconds: float) -> None:
        """Raise :class:`DeadlinePassed` now if waiting ``seconds`` (a retry's back-off
        or ``Retry-After``) would end past the deadline: the retry could not finish."""
        if self.started is not None and time.monotonic() + seconds > self.started + self.seconds:
            raise DeadlinePassed(self.seconds)

    def finish(self) -> None:
        """The call is over: the watchdog leaves its connections alone from now on."""
        with _LOCK:
            self.done = True
            self._connections = []

    def check(self, received: int | None = None) -> None:
        """Raise :class:`DeadlinePassed` if the deadline passed (a read cut short by it)."""
        if self.expired:
            raise DeadlinePassed(self.seconds, received)

    def expire(self) -> None:
        """The deadline passed: shut down the sockets of the connections still ours."""
        with _LOCK:
            if self.done:
                return
            self.expired = True
            for connection in self._connections:
                if getattr(connection, "mdd_guard", None) is self:
                    _shut_down(connection)


def current_guard() -> Guard | None:
    """The guard of the call this thread is sending, if any."""
    return getattr(_current, "guard", None)


def _shut_down(connection: Any) -> None:
    sock = getattr(connection, "sock", None)
    if sock is None:
        return
    try:
        # socket.socket's own shutdown, also for a TLS socket: SSLSocket.shutdown would
        # drop its TLS state under a thread still reading from it.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed


#: Guards queued before the watchdog first drops the finished ones (see _Watchdog.watch).
_COMPACT_FLOOR = 64


class _Watchdog:
    """One daemon thread that expires guards at their deadlines (started on first use)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Guard]] = []
        self._compact_at = _COMPACT_FLOOR
        self._order = itertools.count()
        self._wake = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def watch(self, when: float, guard: Guard) -> None:
        with self._wake:
            heapq.heappush(self._heap, (when, next(self._order), guard))
            if len(self._heap) >= self._compact_at:
                # finished guards wait for their deadline (minutes) in the heap: thousands
                # of calls would keep thousands of them; dropped in one pass once the heap
                # doubles (amortised O(1) a call), so it follows the calls in flight
                self._heap = [entry for entry in self._heap if not entry[2].done]
                heapq.heapify(self._heap)
                self._compact_at = max(_COMPACT_FLOOR, 2 * len(self._heap))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="mddframes-deadlines", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    # A finished guard stays queued until its time or the next compaction
                    # (watch): dropping each one at once would cost a heap search per call.
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._wake.wait(wait)
                _, _, guard = heapq.heappop(self._heap)
            guard.expire()


_watchdog = _Watchdog()


class GuardedBody:
    """``response.raw`` bounded by the call's guard: size cap and deadline.

    ``requests`` reads a body through ``raw.stream``; everything else is the
    urllib3 response's own.
    """

    def __init__(self, raw: Any, guard: Guard) -> None:
        self._raw = raw
        self._guard = guard
        self.received = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def stream(
        self, amt: int | None = 2**16, decode_content: bool | None = None
    ) -> Iterator[bytes]:
        """The body's pieces, decoded; raises past the cap or the deadline."""
        guard = self._guard
        try:
            for chunk in self._raw.stream(amt, decode_content=decode_content):
                self.received += len(chunk)
                if self.received > guard.cap:
                    raise BodyTooLarge(guard.cap, self.received)
                yield chunk
        except BoundExceeded:
            raise
        except Exception:
            guard.check(self.received)  # the deadline cut it: say so, not what broke
            raise
        # a body without a length ends at the connection's close: the shut-down one too
        guard.check(self.received)
        guard.finish()

    def close(self) -> None:
        """Close the urllib3 response; the call is over."""
        self._guard.finish()
        self._raw.close()

    def release_conn(self) -> None:
        """Return the connection to the pool; the call is over."""
        self._guard.finish()
        self._raw.release_conn()


class _GuardedConnection(HTTPConnection):
    def connect(self) -> None:
        _attach(self)
        super().connect()
        _attach(self)  # a deadline passed while connecting: shut the new socket at once

    def request(self, *args: Any, **kwargs: Any) -> None:
        _attach(self)
        super().request(*args, **kwargs)


class _GuardedTlsConnection(HTTPSConnection):
    def connect(self) -> None:
        _attach(self)
        super().connect()
        _attach(self)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _attach(self)
        super().request(*args, **kwargs)


def _attach(connection: Any) -> None:
    guard = current_guard()
    if guard is not None:
        guard.attach(connection)


class _GuardedPool(HTTPConnectionPool):
    ConnectionCls = _GuardedConnection


class _GuardedTlsPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedTlsConnection


_POOLS = {"http": _GuardedPool, "https": _GuardedTlsPool}


class GuardedAdapter(HTTPAdapter):
    """``HTTPAdapter`` whose connections (direct or through an HTTP proxy) obey guards."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_POOLS)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(_POOLS)
        return manager
