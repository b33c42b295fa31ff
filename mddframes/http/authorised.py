"""The 401 loop of one call: send it with a token, and on a 401 renew and repeat.

A 401 means the call was not processed, so it is repeated with a renewed token for as
long as the token keeps changing under it, within the call's deadline; a token the
client had just fetched, refused twice in a row (for ten seconds while the client's
tokens were accepted lately), is the real refusal
(:class:`~mddframes.http.auth.Refusals`). Each sending goes through the paced attempts
(:func:`~mddframes.http.attempts.send_paced`), and the token is taken after the pace's
wait, so a token renewed meanwhile goes out, not one that expired while the call waited.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import requests

from mddframes import errors
from mddframes.config import Secret
from mddframes.http.attempts import Budget, send_paced
from mddframes.http.auth import HeldToken, TokenProvider
from mddframes.http.endpoints import Endpoint
from mddframes.http.pace import Pace

__all__ = ["send_authorised"]

logger = logging.getLogger(__name__)


class _TokenNotFetched(Exception):
    """A token request failed at a call's send: carried past the attempts' handling of
    a call's own transport failures (which would take it for a lost answer)."""

    def __init__(self, error: errors.TransportError) -> None:
        super().__init__(error.message)
        self.error = error


def send_authorised(
    send: Callable[[Secret], requests.Response],
    entry: Endpoint,
    url: str,
    *,
    tokens: TokenProvider,
    pace: Pace,
    budget: Budget,
    describe: str = "",
    on_repeat: Callable[[], None] | None = None,
) -> requests.Response:
    """Send one call with a token, paced; on a 401 renew it and repeat while it keeps
    changing.

    Parameters
    ----------
    send : callable
        Sends the request once with the token secret it is given.
    entry : Endpoint
        The operation.
    url : str
        Its URL (for messages and the log).
    tokens : TokenProvider
        The client's tokens.
    pace : Pace
        The client's shared pace.
    budget : Budget
        The repeats and the deadline of the call (which covers the repeats after a 401).
    describe : str
        What the call is about, for the message after the 429 budget.
    on_repeat : callable, optional
        Called each time the call is sent again after a 401.

    Returns
    -------
    requests.Response
        The last answer, any status. Its ``mdd_renewals`` says how often the call was
        sent again with a renewed token, ``mdd_refused_fresh`` (when its last 401 was the
        real refusal) how many just-fetched tokens were refused in a row and over how
        many seconds; ``mdd_attempts``, ``mdd_lost`` and ``mdd_rate_limited`` count
        over every sending.

    Raises
    ------
    TransportError
        The token could not be fetched (the call did not go out).
    """
    started = time.monotonic()
    refusals = tokens.refusals()
    attempts = lost = limited = 0
    while True:
        held: list[HeldToken] = []

        def with_token(held: list[HeldToken] = held) -> requests.Response:
            try:
                token = tokens.current()
            except errors.TransportError as exc:
                # not this call's answer lost: its request has not gone out (the token
                # request is repeated by its own adapter, :mod:`.retry`)
                raise _TokenNotFetched(exc) from exc
            held.append(token)
            return send(token.secret)

        try:
            response = send_paced(with_token, entry, url, pace, budget, describe=describe,
                                  started=started)  # fmt: skip
        except _TokenNotFetched as exc:
            raise exc.error from exc.error.__cause__
        attempts += int(getattr(response, "mdd_attempts", 1))
        lost += int(getattr(response, "mdd_lost", 0))
        limited += int(getattr(response, "mdd_rate_limited", 0))
        if response.status_code != 401 or not held:
            if held and response.status_code < 500 and response.status_code != 429:
                tokens.accepted()  # past the API's token check: credentials work
            break
        # The call was refused before being processed: renew the token and repeat,
        # unless a just-fetched token was refused twice or the deadline has come.
        if refusals.refused(held[-1]):
            response.mdd_refused_fresh = (  # type: ignore[attr-defined]
                refusals.fresh_in_a_row,
                refusals.streak_span(),
            )
            break
        left = budget.deadline - (time.monotonic() - started)
        if left <= 0:
            break
        response.close()
        time.sleep(min(refusals.pause(), left))
        if on_repeat is not None:
            on_repeat()
        logger.info("%s %s: token refused (401); renewing it and repeating", entry.method, url)
    response.mdd_renewals = refusals.seen - (response.status_code == 401)  # type: ignore[attr-defined]
    response.mdd_attempts = attempts  # type: ignore[attr-defined]
    response.mdd_lost = lost  # type: ignore[attr-defined]
    response.mdd_rate_limited = limited  # type: ignore[attr-defined]
    return response
