"""Fault injection: latency, 5xx answers, 429 with Retry-After, and dropped connections.

A :class:`FaultInjector` decides, per request, from a seeded random generator, so a
test that sends its requests one after the other sees the same faults on every run.
Faults apply only to the service's operations (API and token routes), never to the
``/_emulator/`` admin routes, and can be restricted to some operation ids.

A dropped connection closes the socket without any answer. The ASGI interface has
no call for that, so the server's protocol class registers each connection's
transport in :data:`CONNECTIONS`, and :func:`drop_connection` aborts it.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
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

    def __post_init__(self) -> None:
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
        }


@dataclass(frozen=True)
class Fault:
    """The decision for one request: wait ``latency``, then do ``action`` (or nothing)."""

    latency: float = 0.0
    action: str | None = None  # None, "error", "rate_limit" or "drop"
    status: int | None = None
    retry_after: int | None = None


NO_FAULT = Fault()


@dataclass
class FaultInjector:
    """Holds the current settings and draws one decision per request."""

    settings: FaultSettings = field(default_factory=FaultSettings)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._rng = random.Random(self.settings.seed)

    def configure(self, settings: FaultSettings) -> None:
        """Replace the settings and restart the random sequence from their seed."""
        with self._lock:
            self.settings = settings
            self._rng = random.Random(settings.seed)

    def clear(self) -> None:
        """No more faults."""
        self.configure(FaultSettings())

    def decide(self, operation: str) -> Fault:
        """The fault (possibly none) for one request of ``operation``."""
        with self._lock:
            s = self.settings
            if s.operations is not None and operation not in s.operations:
                return NO_FAULT
            if not (s.latency or s.error_rate or s.rate_limit_rate or s.drop_rate):
                return NO_FAULT
            draw = self._rng.random()
            status = self._rng.choice(s.error_statuses)
        if draw < s.drop_rate:
            return Fault(s.latency, "drop")
        if draw < s.drop_rate + s.error_rate:
            return Fault(s.latency, "error", status=status)
        if draw < s.drop_rate + s.error_rate + s.rate_limit_rate:
            return Fault(s.latency, "rate_limit", status=429, retry_after=s.retry_after)
        return Fault(s.latency)


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
