"""Which strategy writes one edited frame: the rule, in one function.

A write builds its new document by one of two routes:

- ``"streamed"``: the frame's edits are overlaid on the document its read kept
  (compressed), batch by batch; a batch the frame does not change goes back as the very
  bytes it was read as (:func:`~mddframes.codec.streamed_overlay.overlay_document`).
- ``"parsed"``: the frame's edits are overlaid on the whole parsed document
  (:func:`~mddframes.codec.overlay`), the plain route every other is tested against.

Both decide what changed exactly (:mod:`mddframes.codec.fingerprint`); the route only
decides how much of the document is parsed and rebuilt. :func:`choose_write_route` is
asked once per write: the route it names is the route taken, except where the streamed
overlay finds, inside the document, something only the parsed route handles (the late
exits its docstring lists); :func:`declined` then makes the choice, whose reason starts
with "streamed declined".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mddframes.codec.kinds import Kind

if TYPE_CHECKING:
    import pandas as pd

    from mddframes.codec.streamed_overlay import StreamUnsupported
    from mddframes.context import ReadContext

logger = logging.getLogger(__name__)

#: The two ways a write builds its document (see the module notes).
WriteRoute = Literal["streamed", "parsed"]

#: The read routes whose kept document the splitter vouched for (the streamed write
#: cuts the same document with the same splitter).
SPLIT_READS = ("arrow", "splitter", "readback")


@dataclass(frozen=True)
class RouteChoice:
    """The route a write takes, and the condition that decided it.

    Attributes
    ----------
    route : {"streamed", "parsed"}
    reason : str
        The rule's condition, in words (shown in the DEBUG line and the result).
    """

    route: WriteRoute
    reason: str


def choose_write_route(
    kind: Kind,
    context: ReadContext | None,
    frame: pd.DataFrame,
    *,
    stream: bool = True,
    columns_given: bool = False,
    same_bytes: bool | Callable[[], bool] | None = None,
) -> RouteChoice:
    """The route that writes ``frame``, decided before any work.

    Parameters
    ----------
    kind : {"table", "mapping"}
        What is written.
    context : ReadContext or None
        The read the frame came from (None: never read, a ``force=True`` write).
    frame : pandas.DataFrame
        The frame to write (its Arrow-backed columns as they are).
    stream : bool, default True
        False asks for the parsed route (the reference the streamed one is tested
        against).
    columns_given : bool, default False
        The write replaces the column metadata (``columns=``).
    same_bytes : bool, callable or None, default None
        Whether the service still holds the very bytes the frame was read from (by
        SHA-256); a callable is called only when the rule reaches that step (asking
        costs a GET); None: not asked (the rule then stops before that step).

    Returns
    -------
    RouteChoice

    Notes
    -----
    The rule, in order; the first condition that holds decides:

    1. ``stream=False``: ``"parsed"`` (asked for).
    2. A mapping: ``"parsed"`` (mappings are read whole and are small).
    3. ``columns=`` given: ``"parsed"`` (new metadata changes how every row is checked).
    4. No read context: ``"parsed"`` (nothing kept to overlay on).
    5. The read kept no document or took no fingerprint (a small table, read whole):
       ``"parsed"`` (its parsed payload is at hand).
    6. The read's route was not one the splitter cut (``"ijson"``, ``"kept"``): ``"parsed"``
       (the splitter could not cut that document into rows when it was read).
    7. The frame does not line up with the read (rows or columns added, deleted or
       moved, an index that is not the read's positions): ``"parsed"``.
    8. The service holds other bytes than the read's (changed since, or only spelled
       otherwise): ``"parsed"`` (its conflict check compares content).
    9. Otherwise ``"streamed"``.

    Late exits: a streamed write turns back to ``"parsed"`` (:func:`declined`) only where
    :func:`~mddframes.codec.streamed_overlay.overlay_document` finds, inside the kept
    document, what no earlier look can tell; each is one
    :class:`~mddframes.codec.streamed_overlay.StreamUnsupported`, saying:

    - "the document cannot be cut into batches of rows" (the splitter does not vouch
      for the kept copy this time);
    - "the document does not divide as its layout says" (a kept document is cut where
      the read or the write that made it found its batches,
      :mod:`~mddframes.codec.row_layout`; a layout is never wrong, but a wrong one
      would stop here, not write a misplaced row);
    - "the attributes before the rows are not a JSON object";
    - "the document has attributes after its rows" (they differ from those before);
    - "the document does not hold the rows the frame was read from" (a kept batch or
      column disagrees with the read's fingerprint);
    - "a cell changed before the first value of column" (the template that says how
      to write the cell is not known yet);
    - "an undeclared key is added to a row" (the order of undeclared keys is the whole
      check's to tell);
    - "a table-wide problem in one batch" (a report line with no row).
    """
    if not stream:
        return RouteChoice("parsed", "the parsed route was asked for (stream=False)")
    if kind != "table":
        return RouteChoice("parsed", f"a {kind} is written whole")
    if columns_given:
        return RouteChoice("parsed", "columns= replaces the column metadata")
    if context is None:
        return RouteChoice("parsed", "no read of this table to overlay on (force=True)")
    if not context.streamed or context.fingerprint is None:
        return RouteChoice("parsed", "the table was read whole (small)")
    if context.route is not None and context.route not in SPLIT_READS:
        return RouteChoice("parsed", f"the read could not cut the document ({context.route} route)")
    if not context.fingerprint.fits(frame):
        return RouteChoice("parsed", "rows or columns were added, deleted or moved")
    if callable(same_bytes):
        same_bytes = same_bytes()
    if same_bytes is False:
        return RouteChoice("parsed", "the service holds other bytes than the read's")
    return RouteChoice("streamed", "cells edited in a table read as a stream")


def declined(why: StreamUnsupported) -> RouteChoice:
    """The parsed route a streamed write turns to at one of the rule's late exits."""
    return RouteChoice("parsed", f"streamed declined: {why}")


def log_route(kind: Kind, object_id: str, choice: RouteChoice) -> None:
    """The DEBUG line of the route a write took."""
    logger.debug("%s %r: %s write (%s)", kind, object_id, choice.route, choice.reason)
