"""The access-token provider (lazy, thread-safe, renewed ahead of expiry) and the bearer auth.

The service issues client-credentials tokens without a refresh token, so a token is
simply fetched again: when the first request needs one, when the current one is about
to expire, and when the API refuses it (the session then calls :meth:`invalidate`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from mddframes.config import Secret

logger = logging.getLogger(__name__)

#: Lifetime assumed when the token answer carries no usable ``expires_in``.
FALLBACK_LIFETIME = 60.0


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
        self._token: Secret | None = None
        self._renew_at = 0.0
        self._fetches = 0

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
            self._token = grant.access_token
            logger.debug("fetched a new access token, valid for %.0f s", lifetime)
            return self._token

    def invalidate(self, token: Secret | None = None) -> None:
        """Forget the current token so the next :meth:`token` call fetches a new one.

        Parameters
        ----------
        token : Secret, optional
            The token the API refused. When given, the current token is dropped only
            if it is that one: after many threads see the same refusal, only the first
            invalidation counts and the others use the already renewed token.
        """
        with self._lock:
            if token is None or token is self._token:
                self._token = None
                self._renew_at = 0.0


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
