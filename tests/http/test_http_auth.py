"""TokenProvider: lazy, renewed ahead of expiry, one fetch for many threads.

These tests drive the provider with a plain fetch function and a hand-moved clock
(no HTTP); the end-to-end token behaviour against the emulator is in
tests/test_client_resilience.py.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from mddframes.config import Secret
from mddframes.errors import AuthError
from mddframes.http.auth import FALLBACK_LIFETIME, TokenGrant, TokenProvider, renew_margin


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Issuer:
    """Issues numbered tokens; optionally slow, to let threads pile up."""

    def __init__(self, lifetime: float | None = 300, delay: float = 0.0) -> None:
        self.lifetime = lifetime
        self.delay = delay
        self.issued = 0
        self.lock = threading.Lock()

    def __call__(self) -> TokenGrant:
        time.sleep(self.delay)
        with self.lock:
            self.issued += 1
            number = self.issued
        return TokenGrant(Secret(f"token-{number}"), self.lifetime)


@pytest.mark.parametrize(
    ("lifetime", "margin"), [(300, 30.0), (60, 6.0), (20, 5.0), (8, 4.0), (2, 1.0)]
)
def test_renew_margin_is_max_5s_or_10_percent_capped_at_half(lifetime, margin):
    assert renew_margin(lifetime) == pytest.approx(margin)


def test_lazy_then_cached_until_the_margin():
    clock, issuer = Clock(), Issuer(lifetime=300)
    provider = TokenProvider(issuer, clock=clock)
    assert issuer.issued == 0  # nothing fetched before it is needed
    first = provider.token()
    assert first.reveal() == "token-1"
    clock.now += 269
    assert provider.token() is first
    clock.now += 1.5  # 270.5 s: inside the 30 s margin
    assert provider.token().reveal() == "token-2"
    assert provider.fetches == 2


def test_missing_lifetime_falls_back():
    clock, issuer = Clock(), Issuer(lifetime=None)
    provider = TokenProvider(issuer, clock=clock)
    provider.token()
    clock.now += FALLBACK_LIFETIME - renew_margin(FALLBACK_LIFETIME) - 0.5
    assert provider.token().reveal() == "token-1"
    clock.now += 1
    assert provider.token().reveal() == "token-2"


def test_many_threads_cause_one_fetch():
    issuer = Issuer(delay=0.2)
    provider = TokenProvider(issuer)
    barrier = threading.Barrier(16)

    def need_token(_: int) -> str:
        barrier.wait()
        return provider.token().reveal()

    with ThreadPoolExecutor(16) as pool:
        tokens = set(pool.map(need_token, range(16)))
    assert tokens == {"token-1"}
    assert issuer.issued == 1


def test_invalidate_only_drops_the_refused_token():
    provider = TokenProvider(Issuer())
    old = provider.token()
    provider.invalidate(old)
    new = provider.token()
    assert new.reveal() == "token-2"
    # A second thread reporting the same old token must not throw the new one away.
    provider.invalidate(old)
    assert provider.token() is new
    provider.invalidate()
    assert provider.token().reveal() == "token-3"


def test_fetch_failure_propagates_and_a_later_call_retries():
    calls = []

    def flaky() -> TokenGrant:
        calls.append(1)
        if len(calls) == 1:
            raise AuthError("refused", error="invalid_client")
        return TokenGrant(Secret("token-ok"), 300)

    provider = TokenProvider(flaky)
    with pytest.raises(AuthError):
        provider.token()
    assert provider.token().reveal() == "token-ok"


def test_repr_shows_no_token():
    provider = TokenProvider(Issuer())
    value = provider.token().reveal()
    assert value not in repr(provider)
