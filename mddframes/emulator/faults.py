"""Fault injection: latency, 5xx answers, 429s, a rate limit, dropped connections and lost answers.

A :class:`FaultInjector` decides, per request, from a seeded random generator, so a
test that sends its requests one after the other sees the same faults on every run.
Two faults are not random:

- ``rate_limit_rps`` (with ``rate_limit_burst``): a token bucket of that many requests
  a second shared by every connection, as a gateway enforces it; a request finding it
  empty is answered 429 with ``Retry-After`` in the style ``retry_after_style``
  (``"seconds"``, ``"http-date"`` or ``"none"``), telling when the next token comes;
- ``lose_answer_rate`` (drawn per request of ``lose_answer_methods``): the request is
  carried out, and then its connection is closed instead of answered (only when the
  service acted, i.e. answered 2xx), as when a proxy drops the answer of a write; with
  ``lose_answer_status`` (a 5xx) the answer is replaced by that status instead, as a
  gateway answers 502 after the service behind it acted.
Faults apply only to the service's operations (API and token routes), never to the
``/_emulator/`` admin routes, and can be restricted to some operation ids.

A dropped connection closes the socket without any answer. The ASGI interface has
no call for that, so the server's protocol class registers each connection's
transport in :data:`CONNECTIONS`, and :func:`drop_connection` aborts it.
"""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

from starlette.types import Scope


@dataclass(frozen=True)
class FaultSettings:
    """What to inject. Rates are probabilities per request (0 to 1), drawn in this order:
    drop, error, rate limit; ``latency`` (seconds) delays every affected request."""

    latency: float = 0.0
    error_rate: float = 0.0
    error_statuses: tuple[int, ...] = (500, 502, 503)
    rate_limit_rate: float = 0.0
    retry_after: int = 1
    drop_rate: float = 0.0
    seed: int = 0
    operations: frozenset[str] | None = None
    rate_limit_rps: float = 0.0
    rate_limit_burst: int = 2
    retry_after_style: str = "seconds"
    lose_answer_rate: float = 0.0
    lose_answer_methods: frozenset[str] = frozenset({"PUT", "POST"})
    lose_answer_status: int | None = None

    def __post_init__(self) -> None:
        if self.lose_answer_status is not None and not 500 <= self.lose_answer_status <= 599:
            raise ValueError(
                f"lose_answer_status must be a 5xx code or None, got {self.lose_answer_status}"
            )
        if not 0.0 <= self.lose_answer_rate <= 1.0:
            raise ValueError(
                f"lose_answer_rate must be between 0 and 1, got {self.lose_answer_rate}"
            )
        if self.rate_limit_rps < 0:
            raise ValueError(f"rate_limit_rps must be >= 0, got {self.rate_limit_rps}")
        if self.rate_limit_burst < 1:
            raise ValueError(f"rate_limit_burst must be >= 1, got {self.rate_limit_burst}")
        if self.retry_after_style not in RETRY_AFTER_STYLES:
            raise ValueError(
                f"retry_after_style must be one of {', '.join(RETRY_AFTER_STYLES)}, "
                f"got {self.retry_after_style!r}"
            )
        for name in ("error_rate", "rate_limit_rate", "drop_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {value}")
        if self.error_rate + self.rate_limit_rate + self.drop_rate > 1.0 + 1e-9:
            raise ValueError("error_rate + rate_limit_rate + drop_rate must not exceed 1")
        if self.latency < 0:
            raise ValueError(f"latency must be >= 0 seconds, got {self.latency}")
        if self.retry_after < 0:
            raise ValueError(f"retry_after must be >= 0 seconds, got {self.retry_after}")
        if not self.error_statuses or any(not 500 <= s <= 599 for s in self.error_statuses):
            raise ValueError(f"error_statuses must be 5xx codes, got {list(self.error_statuses)}")

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> FaultSettings:
        """Build settings from the admin call's JSON body; unknown keys are an error."""
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(doc) - known)
        if unknown:
            raise ValueError(
                f"unknown fault setting(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        values = dict(doc)
        if "error_statuses" in values:
            values["error_statuses"] = tuple(int(s) for s in values["error_statuses"])
        if values.get("operations") is not None:
            values["operations"] = frozenset(values["operations"])
        if "lose_answer_methods" in values:
            values["lose_answer_methods"] = frozenset(
                str(m).upper() for m in values["lose_answer_methods"]
            )
        try:
            return cls(**values)
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    def to_json(self) -> dict[str, Any]:
        """The settings as JSON-ready values."""
        return {
            "latency": self.latency,
            "error_rate": self.error_rate,
            "error_statuses": list(self.error_statuses),
            "rate_limit_rate": self.rate_limit_rate,
            "retry_after": self.retry_after,
            "drop_rate": self.drop_rate,
            "seed": self.seed,
            "operations": None if self.operations is None else sorted(self.operations),
            "rate_limit_rps": self.rate_limit_rps,
            "rate_limit_burst": self.rate_limit_burst,
            "retry_after_style": self.retry_after_style,
            "lose_answer_rate": self.lose_answer_rate,
            "lose_answer_methods": sorted(self.lose_answer_methods),
            "lose_answer_status": self.lose_answer_status,
        }


#: How the ``rate_limit_rps`` fault writes ``Retry-After``.
RETRY_AFTER_STYLES = ("seconds", "http-date", "none")


@dataclass(frozen=True)
class Fault:
    """The decision for one request: wait ``latency``, then do ``action`` (or nothing)."""

    latency: float = 0.0
    action: str | None = None  # None, "error", "rate_limit" or "drop"
    status: int | None = None
    retry_after: int | None = None
    retry_after_header: str | None = None  # the header as sent, when not ``retry_after``
    lose_answer: bool = False  # carry the request out, then close without answering


NO_FAULT = Fault()


@dataclass
class FaultInjector:
    """Holds the current settings and draws one decision per request."""

    settings: FaultSettings = field(default_factory=FaultSettings)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._rng = random.Random(self.settings.seed)
        self._bucket = TokenBucket(self.settings.rate_limit_rps, self.settings.rate_limit_burst)

    def configure(self, settings: FaultSettings) -> None:
        """Replace the settings and restart the random sequence from their seed."""
        with self._lock:
            self.settings = settings
            self._rng = random.Random(settings.seed)
            self._bucket = TokenBucket(settings.rate_limit_rps, settings.rate_limit_burst)

    def clear(self) -> None:
        """No more faults."""
        self.configure(FaultSettings())

    def decide(self, operation: str, method: str = "GET") -> Fault:
        """The fault (possibly none) for one request of ``operation``."""
        with self._lock:
            s = self.settings
            if s.operations is not None and operation not in s.operations:
                return NO_FAULT
            random_faults = s.latency or s.error_rate or s.rate_limit_rate or s.drop_rate
            if not (random_faults or s.rate_limit_rps or s.lose_answer_rate):
                return NO_FAULT
            draw, status = 1.0, 500
            if random_faults:  # (drawn only then: the sequences of older seeds stay)
                draw = self._rng.random()
                status = self._rng.choice(s.error_statuses)
            lose = bool(s.lose_answer_rate) and method in s.lose_answer_methods
            lose = lose and self._rng.random() < s.lose_answer_rate
            wait = self._bucket.take() if s.rate_limit_rps else 0.0
        if draw < s.drop_rate:
            return Fault(s.latency, "drop")
        if draw < s.drop_rate + s.error_rate:
            return Fault(s.latency, "error", status=status)
        if draw < s.drop_rate + s.error_rate + s.rate_limit_rate:
            return Fault(s.latency, "rate_limit", status=429, retry_after=s.retry_after)
        if wait > 0:
            return Fault(s.latency, "rate_limit", status=429,
                         retry_after_header=retry_after_header(wait, s.retry_after_style))  # fmt: skip
        return Fault(s.latency, lose_answer=lose)


class TokenBucket:
    """A token bucket of ``rate`` tokens a second holding at most ``burst`` (0: no limit).

    Not thread-safe by itself (:class:`FaultInjector` holds its lock around it).
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def take(self) -> float:
        """Take a token: 0.0 when there was one, else the seconds until the next one."""
        if not self.rate:
            return 0.0
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self.rate


def retry_after_header(wait: float, style: str, now: float | None = None) -> str | None:
    """``Retry-After`` for a wait of ``wait`` seconds: whole seconds rounded up, an
    HTTP-date (whole seconds, so up to a second early), or None for ``"none"``."""
    if style == "none":
        return None
    if style == "http-date":
        when = (time.time() if now is None else now) + wait
        return formatdate(math.ceil(when), usegmt=True)
    return str(max(1, math.ceil(wait)))


class ConnectionRegistry:
    """Open connections' transports, keyed by (server address, client address)."""

    def __init__(self) -> None:
        self._transports: dict[tuple[Any, Any], asyncio.Transport] = {}
        self._lock = threading.Lock()

    def add(self, server: Any, client: Any, transport: asyncio.Transport) -> None:
        with self._lock:
            self._transports[(_addr(server), _addr(client))] = transport

    def remove(self, server: Any, client: Any) -> None:
        with self._lock:
            self._transports.pop((_addr(server), _addr(client)), None)

    def find(self, server: Any, client: Any) -> asyncio.Transport | None:
        with self._lock:
            return self._transports.get((_addr(server), _addr(client)))

    def __len__(self) -> int:
        with self._lock:
            return len(self._transports)


def _addr(address: Iterable[Any] | None) -> tuple[Any, ...] | None:
    return None if address is None else tuple(address)


CONNECTIONS = ConnectionRegistry()


async def drop_connection(scope: Scope) -> bool:
    """Abort the connection that carries ``scope`` without answering; False if not found."""
    transport = CONNECTIONS.find(scope.get("server"), scope.get("client"))
    if transport is None:
        return False
    transport.abort()
    # let the protocol see the loss before the application returns, so the server
    # does not try to answer on the dead connection
    await asyncio.sleep(0)
    return True
