"""Whether a PUT landed when its answer did not come back: read the object and compare.

A PUT's answer can be lost after the service wrote it (a proxy drops the connection).
The paced loop (:mod:`mddframes.http.attempts`) sends the PUT again, which is safe for a
whole-object replacement; but with ETags the repeat carries the same ``If-Match``, now
stale, and the service answers 412. And when every attempt lost its answer the call
ends with a :class:`~mddframes.errors.TransportError`. Neither says whether the write
is on the service, so :func:`put_landed` reads the object and compares it with what
was sent:

- equal: the write landed; :func:`put_landed` returns and the engine's read-back
  verifies it as for any write (reported "written", verified);
- different: a real conflict (someone else wrote in between) or a write that did not
  land; the original error is raised, its message saying what the read found.

A 412 on the first attempt (no answer lost) is a conflict without looking: the object
changed since it was read. A PUT that never left (the connection could not be opened:
``TransportError.may_have_been_sent`` False) wrote nothing and is raised as it is. The engine calls :func:`put_landed` in place of
:func:`~mddframes.writing.documents.put`: the one seam.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from mddframes.doc_sections import documented
from mddframes.errors import ConcurrentModificationError, MddError, TransportError
from mddframes.writing.documents import fetch, put

if TYPE_CHECKING:
    from mddframes.api import Api
    from mddframes.writing.changes import Change

logger = logging.getLogger(__name__)


@documented
def put_landed(api: Api, change: Change) -> None:
    """PUT the change's document; after a lost answer, find out whether it landed.

    Parameters
    ----------
    {api}
    change : Change
        The prepared change (its new document, and the ETag of its read).

    Raises
    ------
    ConcurrentModificationError
        412, and the object does not hold what was sent (after a lost answer: read and
        compared; otherwise at once).
    TransportError
        No answer, and the object does not hold what was sent (or cannot be read); or
        the PUT never left (``may_have_been_sent`` False: nothing was sent, not read).
    """
    kind, object_id = change.kind, change.object_id
    try:
        put(api, kind, object_id, change.new.body(), if_match=change.held.etag)
    except ConcurrentModificationError as exc:
        if not exc.answers_lost:
            raise  # the first attempt's own 412: the object changed since it was read
        _settle(api, change, exc)
    except TransportError as exc:
        if not exc.may_have_been_sent:
            raise  # it never left (could not connect): nothing to settle, nothing written
        _settle(api, change, exc)


def _settle(api: Api, change: Change, error: MddError) -> None:
    """Return when the object holds what was sent; else raise ``error`` explained."""
    kind, object_id = change.kind, change.object_id
    try:
        readback = fetch(api, kind, object_id)
    except MddError as exc:
        raise type(error)(
            f"{error.message}; the answer to the PUT was lost, and reading the {kind} to "
            f"see whether it landed failed too ({type(exc).__name__}: {exc.message}): "
            "it may or may not hold the new content",
            **error.request_details(),
        ) from error
    mismatch = change.new.mismatch(kind, readback)
    if mismatch is None:
        logger.info(
            "%s %r: the answer to the PUT was lost (%s), but the %s holds what was sent: written",
            kind,
            object_id,
            type(error).__name__,
            kind,
        )
        return
    raise type(error)(
        f"{error.message}; read after the lost answer, the {kind} holds something else "
        f"than what was sent ({mismatch.summary}): a real conflict, the write did not land",
        **error.request_details(),
    ) from error
