"""A request whose answer was lost, settled by asking the service what it shows.

A POST that acts can lose its answer after the service acted
(:class:`~mddframes.errors.AnswerLostError`: the connection dropped, or a 5xx answer
that does not say whether it acted). Reporting it failed makes the user send it again; sending it again
blindly may do it twice. Where the service can be asked, :func:`settle_lost` asks:

- it acted: the outcome is what the service shows (:class:`Acted`), reported done;
- it did not act: the request is sent again (safe: nothing was done), up to
  :data:`LOST_ASKS` times;
- the service cannot tell (the answer it shows does not say): the asking function
  raises, and only then does the error end in "check before repeating it".

Who asks what: a created child, the tree (:mod:`mddframes.elements.asking`); an
addition to a package, the package listing; a deploy or a confirmation, the element's
``deployed`` and ``deploymentId`` (:func:`deployed_under`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mddframes.config import DEFAULT_MAX_RETRIES
from mddframes.elements.records import field_of
from mddframes.errors import AnswerLostError

T = TypeVar("T")

#: How often a request is sent when its answers are lost and the service shows each
#: time that it did not act: as often as a call safe to repeat is (the first send and
#: ``max_retries``' default), since a request shown not to have acted is safe to repeat.
LOST_ASKS = 1 + DEFAULT_MAX_RETRIES


@dataclass(frozen=True)
class Acted(Generic[T]):
    """What the service shows a request did, after its answer was lost."""

    value: T


def settle_lost(
    send: Callable[[], T],
    ask: Callable[[AnswerLostError], Acted[T] | None],
    *,
    not_done: Callable[[], str],
) -> T:
    """Send a request; after each lost answer ask the service whether it acted.

    Parameters
    ----------
    send : callable
        Sends the request once (it may read state the last ``ask`` updated, to send
        only what is left); returns the outcome.
    ask : callable
        Called with the lost answer's error: reads what the service shows and returns
        :class:`Acted` with the outcome when the request acted, None when it did not
        (then it is sent again); raises ``AnswerLostError`` when the service cannot
        tell.
    not_done : callable
        Says what the service showed after the last lost answer (for the message
        when every attempt lost its answer).

    Returns
    -------
    object
        The outcome: ``send``'s, or the one ``ask`` found.

    Raises
    ------
    AnswerLostError
        Every one of :data:`LOST_ASKS` attempts lost its answer, and each time the
        service showed it had not acted (nothing was done), or ``ask`` could not tell.
    """
    lost: AnswerLostError | None = None
    for _ in range(LOST_ASKS):
        try:
            return send()
        except AnswerLostError as exc:
            lost = exc
            acted = ask(exc)
            if acted is not None:
                return acted.value
    assert lost is not None
    raise AnswerLostError(
        f"the answer was lost on each of {LOST_ASKS} attempts, and each time the service "
        f"showed that the request had not acted ({not_done()}): nothing was done, and it "
        f"can be sent again (last failure: {lost.message})",
        **lost.request_details(),
    ) from lost


def deployed_under(element: Any, deployment_id: str | None) -> bool | None:
    """Whether an element, as the service shows it, is deployed under ``deployment_id``.

    Parameters
    ----------
    element : dict
        The element as read (``getStructure``), any field spelling.
    deployment_id : str or None
        The deployment; None: any deployment.

    Returns
    -------
    bool or None
        True: it is; False: it is not (not deployed, or under another deployment);
        None: the element does not say (no ``deployed``/``deploymentId`` fields, or
        ``deployed`` without the deployment it was).
    """
    deployed = field_of(element, "deployed")
    shown = field_of(element, "deploymentId", "deployment_id")
    if deployed is False:
        return False
    if deployment_id is None:
        return True if deployed is True or shown is not None else None
    if shown is not None:
        return str(shown) == str(deployment_id)
    return None
