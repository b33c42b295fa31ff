"""A write's checked change: what the service holds, the new document, its diff and report.

:func:`prepare_edit` turns an edited frame into a :class:`Change`, choosing the document
strategy once (:mod:`mddframes.writing.documents`): a frame of a streamed read whose
table still holds the very bytes it was read from, edited in its cells only, is
overlaid on those bytes batch by batch; anything else (a mapping, a small table, rows or
columns added or deleted, new column metadata, a table changed on the service) is
overlaid on the parsed document, reusing the one GET already made.
:func:`prepare_replacement` makes the change of a whole payload put back (a restore, a
resumed or rolled-back batch).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.codec import CheckReport, Diff, check_payload, diff_payloads, overlay, to_payload
from mddframes.codec.fingerprint import FrameFingerprint
from mddframes.codec.kinds import Kind
from mddframes.codec.streamed_overlay import StreamUnsupported, overlay_document
from mddframes.codec.values import same_json
from mddframes.context import ATTRS_KEY, RECENT_CONTEXTS, ReadContext, context_of, registry_for
from mddframes.errors import ConcurrentModificationError, InvalidArgumentError, WriteRefusedError
from mddframes.frames.backends import default_slice, from_user_frame
from mddframes.frames.shaping import snake_case
from mddframes.writing.documents import (
    EncodedDocument,
    Held,
    NewDocument,
    ParsedDocument,
    fetch,
)
from mddframes.writing.route import RouteChoice, choose_write_route, declined, log_route

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)

#: The route of a whole payload put back (a restore, a resumed or rolled-back batch).
REPLACEMENT = RouteChoice("parsed", "a whole payload put back")


@dataclass
class Change:
    """A write that passed its preparation and waits to be gated and sent.

    Attributes
    ----------
    kind, object_id
        The object written.
    held : Held
        What the service held at the write's last check (the backup's content).
    new : NewDocument
        The document to send, in one of the two strategies.
    diff : Diff
        What the write changes compared with ``held``.
    report : CheckReport
        The completeness check of the new document.
    keeps_positions : bool
        Whether the frame (if any) still lines up row for row with the new document,
        so the context of the read-back can be recorded for the next write.
    frame : pandas.DataFrame or None
        The edited frame, whose ``attrs`` get the new context.
    frame_print : FrameFingerprint or None
        ``frame``'s fingerprint when the streamed strategy took it already (None: the
        read-back's context takes it).
    foreign : ReadContext or None
        The read the frame came from when that is another object's (its report's first
        error says which).
    owner : pandas.DataFrame or None
        The frame the user passed when ``frame`` is its numpy-nullable form (an Arrow-
        backed frame, see :func:`~mddframes.frames.backends.from_user_frame`): its
        ``attrs`` get the new context too.
    route : RouteChoice
        The route that built ``new`` and why (:func:`~mddframes.writing.route.choose_write_route`).
    labels : list or None
        The frame's label of each row of ``new`` (None: each row's label is its
        position, as in a streamed write).
    recorded : ReadContext or None
        The context of the read-back, once the write is verified and it is recorded
        (a batch gives it to the long frame it wrote).
    """

    kind: Kind
    object_id: str
    held: Held
    new: NewDocument
    diff: Diff
    report: CheckReport
    keeps_positions: bool
    frame: pd.DataFrame | None = None
    foreign: ReadContext | None = None
    owner: pd.DataFrame | None = None
    frame_print: FrameFingerprint | None = None
    route: RouteChoice = REPLACEMENT
    labels: list[Any] | None = None
    recorded: ReadContext | None = None


def prepare_edit(
    api: Api,
    kind: Kind,
    object_id: str,
    frame: pd.DataFrame,
    *,
    columns: Any = None,
    allow_deletes: bool = False,
    force: bool = False,
    stream: bool = True,
    context: ReadContext | None = None,
) -> Change:
    """Read what the service holds, check for a conflict, overlay the frame's edits, check.

    ``stream=False`` keeps to the parsed strategy (the reference the streamed one is
    tested against). ``context`` is the read to start from when the caller holds it (a
    batch); default the frame's own, else the client's latest read
    (:func:`~mddframes.context.context_of`).

    A frame read from another object is refused by the completeness check (its report's
    first error names both), whether or not this object was read and whatever ``force``:
    the dry run and the write reach the same refusal.

    Raises
    ------
    InvalidArgumentError
        ``frame`` is not a DataFrame, or ``columns`` is malformed.
    WriteRefusedError
        No read of the object is held (the frame carries none and the client holds
        none) and ``force`` is False.
    ConcurrentModificationError
        The object changed on the service since it was read and ``force`` is False.
    """
    given = frame
    # polars frames: the numpy-nullable frame of the same content; Arrow-backed pandas
    # frames are kept as they are for the streamed strategy, which converts only the
    # slices it needs, and converted whole for any other (see _prepare_edit)
    frame = from_user_frame(frame, what=f"write_{kind}", keep_arrow=True)
    if not isinstance(frame, pd.DataFrame):
        raise InvalidArgumentError(
            f"write_{kind} needs a DataFrame (from read_{kind}), got {type(frame).__name__}"
        )
    change = _prepare_edit(api, kind, object_id, frame, columns=columns,
                           allow_deletes=allow_deletes, force=force, stream=stream,
                           context=context)  # fmt: skip
    if given is not change.frame and isinstance(given, pd.DataFrame):
        change.owner = given
    return change


def _prepare_edit(
    api: Api,
    kind: Kind,
    object_id: str,
    frame: pd.DataFrame,
    *,
    columns: Any,
    allow_deletes: bool,
    force: bool,
    stream: bool,
    context: ReadContext | None,
) -> Change:
    """:func:`prepare_edit` of a frame in the numpy-nullable form, or with Arrow-backed
    columns kept (``from_user_frame(..., keep_arrow=True)``): those reach the streamed
    strategy as they are and are converted whole before any other."""
    if context is None:
        context = context_of(api, frame, kind, object_id)
    foreign = _read_from_elsewhere(frame, kind, object_id)
    if context is None and not force and foreign is None:
        # (a frame of another object goes on to the check, which refuses it naming both)
        raise WriteRefusedError(_no_context(api, kind, object_id))
    fetched: list[Held] = []

    def same_bytes() -> bool:
        # asked by the rule's last step only: the one GET, raw to compare the bytes
        assert context is not None
        fetched.append(fetch(api, kind, object_id, raw=True))
        return fetched[0].sha256 == context.kept.sha256

    choice = choose_write_route(kind, context, frame, stream=stream,
                                columns_given=columns is not None, same_bytes=same_bytes)  # fmt: skip
    held = fetched.pop() if fetched else fetch(api, kind, object_id)
    if choice.route == "streamed":
        assert context is not None
        # the very bytes the frame was read from: the kept copy serves as both (the
        # chunks just received are dropped here, before the overlay builds the new ones)
        held = Held.of_kept(kind, object_id, context.kept, held.etag)
        try:
            change = _streamed_edit(held, context, frame, allow_deletes)
        except StreamUnsupported as late:
            choice = declined(late)
        else:
            change.route = choice
            log_route(kind, object_id, choice)
            return _name_foreign(change, foreign)
    log_route(kind, object_id, choice)
    frame = from_user_frame(frame, what=f"write_{kind}")  # Arrow-backed columns, whole
    change = _parsed_edit(held, context, frame, columns=columns, allow_deletes=allow_deletes,
                          force=force)  # fmt: skip
    change.route = choice
    return _name_foreign(change, foreign)


def _no_context(api: Api, kind: Kind, object_id: str) -> str:
    """Why a write without ``force`` has no original, in words that are true.

    "Not read through this client" only when the registry surely never recorded the
    object (:meth:`~mddframes.context.ContextRegistry.may_have_read`); otherwise the
    read was let go: the frame lost the context its ``attrs`` held, and no frame holds
    it any more.
    """
    again = (
        f"read it with read_{kind}({object_id!r}) and edit that frame (keep its index), or "
        "pass force=True to take what the service holds now as the original"
    )
    if not registry_for(api).may_have_read(kind, object_id):
        return (
            f"{kind} {object_id!r} was not read through this client, so there is no "
            f"original to overlay the frame on: {again}"
        )
    return (
        f"{kind} {object_id!r}: the frame carries no read context and this client holds no "
        f"read of it any more, so there is no original to overlay the frame on. A frame "
        f"keeps its read in frame.attrs, which pd.concat of frames of different reads, "
        f"pd.DataFrame(frame) and polars frames drop; the client keeps its "
        f"{RECENT_CONTEXTS} latest reads, and older ones while a frame holds them. Write "
        f"the frame read_{kind} returned (pandas operations on it keep its attrs), or "
        f"{again}"
    )


def _name_foreign(change: Change, foreign: ReadContext | None) -> Change:
    """The change, its report led by an error naming the other object the frame is of."""
    if foreign is not None:
        # the frame's rows are another object's: say so first, above the losses it causes
        line = {"level": "error", "table": change.object_id, "row": None, "column": None,
                "problem": f"{FOREIGN_FRAME}: {foreign_words(foreign)}", "old": None,
                "new": None}  # fmt: skip
        change.report = CheckReport.concat([CheckReport.from_records([line]), change.report])
        change.foreign = foreign
    return change


#: The report's problem when the frame written was read from another object.
FOREIGN_FRAME = "frame of another object"


def foreign_words(foreign: ReadContext) -> str:
    """Where a frame written to another object was read from, and how to write it."""
    return (
        f"it was read from {foreign.kind} {foreign.object_id!r}: write it with "
        f"write_{foreign.kind}({foreign.object_id!r}, ...)"
    )


def _read_from_elsewhere(frame: pd.DataFrame, kind: Kind, object_id: str) -> ReadContext | None:
    """The read ``frame`` came from, when that is not of ``kind`` ``object_id``."""
    attached = frame.attrs.get(ATTRS_KEY)
    if not isinstance(attached, ReadContext):
        return None
    if attached.kind == kind and attached.object_id == str(object_id):
        return None
    return attached


def _streamed_edit(
    held: Held, context: ReadContext, frame: pd.DataFrame, allow_deletes: bool
) -> Change:
    """The streamed strategy; :class:`StreamUnsupported` at one of the rule's late exits."""
    assert context.fingerprint is not None
    new = overlay_document(context.kept, frame, context.fingerprint,
                           allow_deletes=allow_deletes, object_id=held.object_id,
                           convert=default_slice)  # fmt: skip
    return Change(held.kind, held.object_id, held, EncodedDocument(new.document, new.layout), new.diff,
                  new.report, keeps_positions=True, frame=frame,
                  frame_print=new.fingerprint)  # fmt: skip


def _parsed_edit(
    held: Held,
    context: ReadContext | None,
    frame: pd.DataFrame,
    *,
    columns: Any,
    allow_deletes: bool,
    force: bool,
) -> Change:
    """The parsed strategy: the frame's edits overlaid on the whole original payload."""
    kind, object_id = held.kind, held.object_id
    current = held.document()
    if context is not None and context.kept.sha256 == held.sha256:
        # the very bytes that were read: no conflict to look for, and the service's parse
        # is the original (a nested cell the user mutated in place is then an edit, where
        # the read's own payload would have changed with it)
        original: dict[str, Any] | None = current
    else:
        # once: a streamed read's context parses its kept document on each call
        original = context.load_document() if context is not None else None
    conflict = original is not None and current is not original and not same_json(original, current)
    if conflict and not force:
        assert context is not None and original is not None
        changes = diff_payloads(original, current, kind=kind)
        raise ConcurrentModificationError(
            f"{kind} {object_id!r} changed on the service since it was read at "
            f"{context.read_at:%Y-%m-%d %H:%M:%S} UTC: {changes.summary}. Nothing was "
            f"sent. Read it again and redo the edit, or pass force=True to overwrite "
            "(a backup is kept)",
            changes=changes.to_frame(),
        )
    base = original if original is not None else current
    new_columns = columns_payload(columns, base) if columns is not None else None
    result = overlay(frame, base, kind=kind, columns=new_columns)
    if conflict:
        # rows of the base are not rows of what the service holds: match them afresh
        report = check_payload(result.payload, current, allow_deletes=allow_deletes, kind=kind,
                               object_id=object_id)  # fmt: skip
        diff = diff_payloads(current, result.payload, kind=kind)
    else:
        # same content as the base, and the base's row objects make unchanged rows free
        report = check_payload(result.payload, base, allow_deletes=allow_deletes, kind=kind,
                               object_id=object_id, origin=result.origin, labels=result.labels)  # fmt: skip
        diff = diff_payloads(base, result.payload, kind=kind, origin=result.origin,
                             labels=result.labels)  # fmt: skip
    keeps_positions = not result.deleted and all(p is not None for p in result.origin)
    return Change(kind, object_id, held, ParsedDocument(result.payload), diff, report,
                  keeps_positions, frame, labels=result.labels)  # fmt: skip


def prepare_replacement(
    api: Api,
    kind: Kind,
    object_id: str,
    payload: dict[str, Any],
    *,
    held: Held | None = None,
    records_context: bool = True,
) -> Change:
    """The change of putting ``payload`` back whole (a restore, a resumed batch).

    ``held`` is what the service holds if the caller already read it (one GET per
    object). The report is informational: a restore may delete rows added since.
    """
    held = held if held is not None else fetch(api, kind, object_id)
    current = held.document()
    return Change(
        kind, object_id, held, ParsedDocument(payload),
        diff_payloads(current, payload, kind=kind),
        check_payload(payload, current, allow_deletes=True, kind=kind, object_id=object_id),
        keeps_positions=records_context, route=REPLACEMENT,
    )  # fmt: skip


def columns_payload(columns: Any, base: dict[str, Any]) -> list[dict[str, Any]]:
    """New ``metadata.columns`` from a list of dicts or a ``read_table_columns`` frame."""
    if isinstance(columns, pd.DataFrame):
        metadata = base.get("metadata")
        if not isinstance(metadata, dict):
            metadata = {}
        original = metadata.get("columns")
        if not isinstance(original, list):
            original = []
        # back to the service's own field names (data_type -> dataType)
        names = {snake_case(k): k for c in original if isinstance(c, dict) for k in c}
        frame = columns.rename(columns=lambda c: names.get(c, _camel_case(c)))
        rows: list[dict[str, Any]] = to_payload(frame, {"data": list(original)}, kind="table")[
            "data"
        ]
        return rows
    if not isinstance(columns, Sequence) or isinstance(columns, str | bytes):
        raise InvalidArgumentError(
            "columns= must be a list of column objects or the frame of read_table_columns, "
            f"not {type(columns).__name__}"
        )
    for position, column in enumerate(columns):
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            raise InvalidArgumentError(
                f"columns= entry {position} must be an object with a string 'name', got {column!r}"
            )
    return list(columns)


def _camel_case(name: Any) -> Any:
    if not isinstance(name, str):
        return name
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)
