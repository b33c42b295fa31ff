"""TokenProvider: lazy, renewed ahead of expiry, one fetch for many threads.

These tests drive the provider with a plain fetch function and a hand-moved clock
(no HTTP); the end-to-end token behaviour against the emulator is in
tests/client/test_client_resilience.py.
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


def test_invalidate_compares_the_token_by_value():
    provider = TokenProvider(Issuer())
    old = provider.token()
    provider.invalidate(Secret(old.reveal()))  # an equal token, not the same object
    assert provider.token().reveal() == "token-2"


def test_a_token_fetched_after_the_refusal_counts_towards_the_real_refusal():
    clock = Clock()
    provider = TokenProvider(Issuer(), clock=clock)
    held = provider.current()  # asked for before the call
    clock.now += 1
    refusals = provider.refusals()
    clock.now += 1
    assert not refusals.refused(held)  # held from before the call: changed under it
    first = provider.current()
    assert first.secret.reveal() == "token-2"
    clock.now += 1
    assert not refusals.refused(first)  # one refusal of a just-fetched token
    second = provider.current()
    clock.now += 1
    assert refusals.refused(second)  # the second in a row: the real refusal
    assert refusals.seen == 3


def test_a_token_renewed_by_another_thread_before_the_refusal_is_not_counted():
    clock = Clock()
    provider = TokenProvider(Issuer(), clock=clock)
    refusals = provider.refusals()  # the call begins at 1000
    clock.now += 1
    mine = provider.current()  # fetched for this call
    clock.now += 1
    provider.invalidate(mine.secret)  # another thread saw it refused and renewed it
    theirs = provider.current()
    clock.now += 1
    assert not refusals.refused(mine)  # this call's 401 arrives late: one fresh refusal
    assert provider.token() is theirs.secret  # the other thread's renewal is kept
    clock.now += 1
    # theirs was asked for before this call's refusal: not the token it just fetched
    assert not refusals.refused(theirs)
    clock.now += 1
    assert not refusals.refused(provider.current())  # fresh again, but only one in a row
    assert refusals.seen == 3


def test_credentials_the_api_accepted_lately_ride_through_ten_seconds_of_fresh_refusals():
    clock = Clock()
    provider = TokenProvider(Issuer(), clock=clock)
    provider.current()
    provider.accepted()
    refusals = provider.refusals()
    verdicts, pauses = [], []
    for _ in range(7):
        clock.now += 0.5
        token = provider.current()
        clock.now += 1.5  # a fresh refusal every 2 s: the run spans 0, 2, 4 ... s
        verdicts.append(refusals.refused(token))
        pauses.append(refusals.pause())
    # the first refusal at 0 s; the one 10 s later is the real refusal
    assert verdicts == [False] * 5 + [True, True]
    assert refusals.fresh_in_a_row == 7 and refusals.streak_span() == 12
    # none after the first, then doubling from 50 ms
    assert pauses[:5] == [0.0, 0.05, 0.1, 0.2, 0.4]
    clock.now += 120  # long ago now: two in a row again
    fresh_call = provider.refusals()
    clock.now += 1
    assert not fresh_call.refused(provider.current())
    clock.now += 1
    assert fresh_call.refused(provider.current())
    assert fresh_call.streak_span() == 1


def test_the_pause_between_renewals_is_capped_at_a_second():
    clock = Clock()
    provider = TokenProvider(Issuer(), clock=clock)
    provider.current()
    refusals = provider.refusals()
    pauses = []
    for _ in range(40):
        provider.accepted()  # other threads' calls keep going through
        clock.now += 0.1
        token = provider.current()
        clock.now += 0.1
        refusals.refused(token)
        pauses.append(refusals.pause())
    assert max(pauses) == 1.0 and pauses[-1] == 1.0
    assert pauses == sorted(pauses)


def test_threads_refused_at_once_cause_one_fetch():
    issuer = Issuer(delay=0.2)
    provider = TokenProvider(issuer)
    refused = provider.current()
    barrier = threading.Barrier(16)

    def refused_then_renewed(_: int) -> str:
        barrier.wait()
        provider.refusals().refused(refused)
        return provider.token().reveal()

    with ThreadPoolExecutor(16) as pool:
        tokens = set(pool.map(refused_then_renewed, range(16)))
    assert tokens == {"token-2"}
    assert issuer.issued == 2


def test_held_token_repr_is_masked():
    held = TokenProvider(Issuer()).current()
    assert held.secret.reveal() not in repr(held)
