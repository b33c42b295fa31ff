"""The access-token provider (lazy, thread-safe, renewed ahead of expiry) and the bearer auth.

The service issues client-credentials tokens without a refresh token, so a token is
simply fetched again: when the first request needs one, when the current one is about
to expire, and when the API refuses it (the session then calls :meth:`invalidate`).

A token an administrator revoked, or one that expired early, is refused (401) however
well the client keeps time; the session then renews it and sends the call again, for
as long as the token keeps changing under the call (:class:`Refusals` tells that churn
from a real refusal: a token the client had just fetched, refused twice in a row, or
for ten seconds while the API accepted the client's tokens lately).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from mddframes import errors
from mddframes.config import Secret

logger = logging.getLogger(__name__)

#: Lifetime assumed when the token answer carries no usable ``expires_in``.
FALLBACK_LIFETIME = 60.0
#: Refusals of a just-fetched token in a row that are the real refusal...
FRESH_REFUSALS = 2
#: ... unless the API accepted one of the client's tokens in the last ``PROVEN_FOR``
#: seconds: credentials that worked a moment ago are far likelier to meet another
#: revocation in the round trip of a new token than to have stopped working, so fresh
#: tokens must then be refused in a row for ``PROVEN_REFUSAL_SPAN`` seconds. A time, not a
#: count: a loaded machine stretches round trips past the revocations, and counts of six
#: and then twelve in a row were both met in CI's combined-conditions run.
PROVEN_REFUSAL_SPAN = 10.0
#: The pause before renewing again, from the second fresh refusal in a row on: doubling
#: from the first, capped, so credentials that did stop cost about fifteen token requests
#: over the span rather than one per round trip.
STREAK_PAUSE_FIRST = 0.05
STREAK_PAUSE_MAX = 1.0
PROVEN_FOR = 60.0


@dataclass(frozen=True)
class TokenGrant:
    """What the token endpoint granted.

    Attributes
    ----------
    access_token : Secret
        The bearer token, masked.
    expires_in : float or None
        Lifetime in seconds as the server stated it, if it did.
    """

    access_token: Secret
    expires_in: float | None


@dataclass(frozen=True, repr=False)
class HeldToken:
    """A token as the provider handed it out.

    Attributes
    ----------
    secret : Secret
        The bearer token, masked.
    asked_at : float
        When its request to the token endpoint began (the provider's clock): a token
        asked for after a 401 was issued after that refusal, whatever revoked the
        refused one.
    """

    secret: Secret
    asked_at: float

    def __repr__(self) -> str:
        return f"<HeldToken asked at {self.asked_at:.3f}, masked>"


def renew_margin(lifetime: float) -> float:
    """How long before expiry a token is renewed.

    ``max(5 s, 10 % of the lifetime)``, but never more than half the lifetime, so a
    very short-lived token (e.g. 2 s in tests) is still used for a while before it is
    renewed.

    Parameters
    ----------
    lifetime : float
        The token's lifetime in seconds.
    """
    return min(max(5.0, 0.1 * lifetime), 0.5 * lifetime)


class TokenProvider:
    """Hands out a valid access token, fetching a new one only when needed.

    Parameters
    ----------
    fetch : callable
        Fetches a new token from the service and returns a :class:`TokenGrant`; raises
        an ``MddError`` (``AuthError`` for refused credentials) on failure.
    clock : callable, optional
        A monotonic clock in seconds (default :func:`time.monotonic`).

    Notes
    -----
    One lock guards the current token. A thread that finds no valid token fetches one
    while holding the lock, so N threads needing a token cause one fetch; the others
    wait and then use it.
    """

    def __init__(
        self,
        fetch: Callable[[], TokenGrant],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._lock = threading.Lock()
        self._token: HeldToken | None = None
        self._renew_at = 0.0
        self._fetches = 0
        self._accepted_at: float | None = None

    def __repr__(self) -> str:
        state = "holding a token" if self._token is not None else "no token yet"
        return f"<TokenProvider {state}, {self._fetches} fetches>"

    @property
    def fetches(self) -> int:
        """How many tokens this provider has fetched."""
        return self._fetches

    def token(self) -> Secret:
        """A token that is valid for a while yet; fetched now if needed.

        Returns
        -------
        Secret
            The bearer token (call ``.reveal()`` to put it in a header).

        Raises
        ------
        MddError
            Whatever the fetch raises (``AuthError`` when the credentials are refused).
        """
        return self.current().secret

    def current(self) -> HeldToken:
        """Like :meth:`token`, with when the token was asked for (for :class:`Refusals`).

        Raises
        ------
        MddError
            Whatever the fetch raises (``AuthError`` when the credentials are refused).
        """
        with self._lock:
            if self._token is not None and self._clock() < self._renew_at:
                return self._token
            asked_at = self._clock()
            grant = self._fetch()
            self._fetches += 1
            lifetime = grant.expires_in
            if lifetime is None or lifetime <= 0:
                logger.debug(
                    "token answer has no usable expires_in; assuming %.0f s", FALLBACK_LIFETIME
                )
                lifetime = FALLBACK_LIFETIME
            # Counted from before the request went out, so the estimate errs early.
            self._renew_at = asked_at + lifetime - renew_margin(lifetime)
            self._token = HeldToken(grant.access_token, asked_at)
            logger.debug("fetched a new access token, valid for %.0f s", lifetime)
            return self._token

    def invalidate(self, token: Secret | None = None) -> None:
        """Forget the current token so the next :meth:`token` call fetches a new one.

        Parameters
        ----------
        token : Secret, optional
            The token the API refused. When given, the current token is dropped only
            if it is that one (compared by value): after many threads see the same
            refusal, only the first invalidation counts and the others use the token
            it renewed, so they cause one token request between them.
        """
        with self._lock:
            if token is None or (self._token is not None and self._token.secret == token):
                self._token = None
                self._renew_at = 0.0

    def accepted(self) -> None:
        """Note that the API just accepted one of this provider's tokens (an answer
        past its token check: not a 401, 429 or 5xx): the credentials work
        (see :class:`Refusals`)."""
        self._accepted_at = self._clock()  # one float, written whole: no lock needed

    def proven(self) -> bool:
        """Whether the API accepted one of this provider's tokens in the last
        ``PROVEN_FOR`` seconds."""
        accepted = self._accepted_at
        return accepted is not None and self._clock() - accepted < PROVEN_FOR

    def refusals(self) -> Refusals:
        """A fresh :class:`Refusals` for one call, on this provider's clock."""
        return Refusals(self, self._clock)


class Refusals:
    """The 401s of one call: churn to ride through, or the service's real refusal.

    A 401 with a token asked for *after* the call's previous refusal (or after the call
    began, for its first) is a refusal of a token the client had just fetched; two of
    those in a row are the real refusal. Any other 401 means the token changed under
    the call (it expired, or was revoked) and a renewed one is worth sending.

    While the API has accepted the client's tokens within ``PROVEN_FOR`` seconds, fresh
    tokens must be refused in a row for ``PROVEN_REFUSAL_SPAN`` seconds: a token revoked
    within the round trip of its first request is refused just like a token the API never
    accepts, and with revocations every half second (a tenant's tokens revoked in bulk, a
    loaded machine stretching the round trips) such refusals come in runs whose length no
    count bounds; credentials that worked a moment ago and then stopped for ten seconds
    did stop. From the second fresh refusal in a row, :meth:`pause` says how long to wait
    before renewing again.

    Parameters
    ----------
    provider : TokenProvider
        The provider the refused tokens came from (invalidated here).
    clock : callable
        The provider's monotonic clock.
    """

    def __init__(self, provider: TokenProvider, clock: Callable[[], float]) -> None:
        self._provider = provider
        self._clock = clock
        self._since = clock()
        self._fresh_in_a_row = 0
        self._streak_began = 0.0
        #: 401s seen so far in this call.
        self.seen = 0

    def __repr__(self) -> str:
        return f"<Refusals: {self.seen} seen, {self._fresh_in_a_row} of fresh tokens in a row>"

    @property
    def fresh_in_a_row(self) -> int:
        """Refusals of just-fetched tokens in a row, up to the last one."""
        return self._fresh_in_a_row

    def streak_span(self) -> float:
        """Seconds from the first fresh refusal in a row to the last (0 without a run)."""
        return self._since - self._streak_began if self._fresh_in_a_row else 0.0

    def refused(self, token: HeldToken) -> bool:
        """Record a 401 to ``token``; True when it is the real refusal (do not repeat).

        Otherwise the token is invalidated (if it is still the provider's: one renewal
        for every thread that saw the same refusal), and the call may be sent again
        after :meth:`pause`.
        """
        self.seen += 1
        now = self._clock()
        if token.asked_at >= self._since:  # fetched after the previous refusal: fresh
            self._fresh_in_a_row += 1
            if self._fresh_in_a_row == 1:
                self._streak_began = now
        else:
            self._fresh_in_a_row = 0
        self._since = now
        self._provider.invalidate(token.secret)
        if self._fresh_in_a_row < FRESH_REFUSALS:
            return False
        return not self._provider.proven() or self.streak_span() >= PROVEN_REFUSAL_SPAN

    def pause(self) -> float:
        """Seconds to wait before renewing the token again (after a :meth:`refused`
        that was not the real refusal): none after one fresh refusal, then doubling."""
        beyond = self._fresh_in_a_row - FRESH_REFUSALS
        if beyond < 0:
            return 0.0
        return min(STREAK_PAUSE_FIRST * 2.0 ** min(beyond, 16), STREAK_PAUSE_MAX)


def refusal_error(error: errors.AuthError, *, fresh_in_a_row: int, span: float,
                  renewals: int, deadline: float) -> errors.AuthError:  # fmt: skip
    """The ``AuthError`` of a call the API still refused after renewing its token.

    Parameters
    ----------
    error : AuthError
        The 401 as translated (its request details and OAuth fields are kept).
    fresh_in_a_row : int
        Tokens fetched just before, refused in a row: 0 unless that was the real
        refusal (else the deadline came).
    span : float
        Seconds from the first of those refusals to the last.
    renewals : int
        How often the call was sent again with a renewed token.
    deadline : float
        The call's deadline in seconds.
    """
    if fresh_in_a_row:
        times = "twice" if fresh_in_a_row == 2 else f"{fresh_in_a_row} times"
        over = f" over {span:.0f} s" if span >= 1 else ""
        message = (
            f"the service refused the access token the client had just fetched, {times} in "
            f"a row{over}: the token endpoint grants tokens that this API does not accept. "
            "Check that the API user (client_id) may use this API and that the token "
            "realm belongs to this service; tokens that expire before a request reaches "
            "the service are refused the same way"
        )
    else:
        message = (
            f"the service kept refusing the access token: renewed {renewals} time(s) "
            f"until the call's deadline ({deadline:g} s), as tokens expired or were "
            "revoked faster than the call could use them"
        )
    return errors.AuthError(
        message,
        error=error.error,
        error_description=error.error_description,
        **error.request_details(),
    )


class BearerAuth(requests.auth.AuthBase):
    """Sets ``Authorization: Bearer`` from a masked token (also blocks .netrc lookup)."""

    def __init__(self, token: Secret | None) -> None:
        self._token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if self._token is not None:
            request.headers["Authorization"] = "Bearer " + self._token.reveal()
        return request

    def __repr__(self) -> str:
        return "<bearer auth, masked>"
