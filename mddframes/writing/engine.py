"""The write engine: every write, restore, resume and roll back takes these steps, once.

::

    prepare (changes.py)          gate               send (here)
    ─────────────────────         ──────────         ──────────────────────────────
    GET what the service holds    unchanged? ──────► WriteResult "unchanged"
    conflict with the read?       report errors? ──► IncompletePayloadError
    new document, one strategy:   dry run? ────────► WriteResult "dry-run"
      parsed | encoded (streamed) backup ──────────► PUT ─► read back ─► verify
    diff + completeness report                        └─► re-record the context
    └──────────── the object's lock held (locks.py), unless a dry run ─────────┘

:func:`write_one` runs them for one object; a batch (:mod:`mddframes.writing.batch`)
prepares and gates every object first, then backs up, journals and calls :func:`send`
for each; recovery (:mod:`mddframes.writing.recovery`) sends the journal's payloads
through :func:`send` too. So a verification failure is the same
:class:`~mddframes.errors.WriteVerificationError` whoever sent the document.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mddframes.codec.check import COLUMN_DROPPED, ROW_DELETED
from mddframes.codec.fastjson import gc_paused
from mddframes.codec.fingerprint import fingerprint
from mddframes.codec.kinds import Kind
from mddframes.codec.read_route import choose_route
from mddframes.context import ATTRS_KEY, ReadContext, registry_for
from mddframes.errors import IncompletePayloadError, WriteVerificationError
from mddframes.frames.backends import default_slice
from mddframes.writing.backups import save_backup, save_backup_document
from mddframes.writing.changes import Change
from mddframes.writing.documents import Held, fetch
from mddframes.writing.intent import describe, unmet_intent
from mddframes.writing.landed import put_landed
from mddframes.writing.locks import object_lock
from mddframes.writing.result import Status, WriteResult

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)

_OPERATION = {"table": "tableUpdate", "mapping": "mappingUpdate"}

#: Called with "sending", "sent" and "verified" as a write gets there (a batch's journal).
Recorder = Callable[[str], None]


def write_one(
    api: Api,
    kind: Kind,
    object_id: str,
    prepare: Callable[[], Change],
    *,
    dry_run: bool,
    backup_dir: str | os.PathLike[str] | None,
) -> WriteResult:
    """Prepare, gate, back up, send and verify one object's write.

    A write that may send holds the object's lock (:mod:`~mddframes.writing.locks`) from
    its read of what the service holds until its verification ends; a dry run sends
    nothing and takes no lock.
    """
    guard = (
        contextlib.nullcontext()
        if dry_run
        else object_lock(api, kind, object_id, purpose=f"write_{kind} {object_id!r}")
    )
    with guard, gc_paused():  # no cyclic GC passes over the rows of the documents held here
        change = prepare()
        gated = gate(change, dry_run=dry_run)
        if gated is not None:
            return gated
        return send(api, change, backup=take_backup(api, change, backup_dir))


def gate(change: Change, *, dry_run: bool) -> WriteResult | None:
    """The result of a change that is not to be sent, or None when it is to be sent.

    A dry run takes the very checks of the write it previews, in the same order, and
    ends where they end: a change the write would refuse, the dry run refuses with the
    same error (a frame of another object too).

    Raises
    ------
    IncompletePayloadError
        The change would lose or corrupt data (nothing is sent).
    """
    if change.diff.empty:
        return not_sent(change, "unchanged")
    refuse_incomplete(change)
    if dry_run:
        return not_sent(change, "dry-run")
    return None


def refuse_incomplete(change: Change) -> None:
    """Raise :class:`IncompletePayloadError` when the change's report has errors."""
    if not change.report.ok:
        foreign = change.foreign
        if foreign is not None:
            # first: the frame is the wrong object's, whatever its rows would lose here
            raise IncompletePayloadError(
                f"{change.kind} {change.object_id!r} was not written: this frame is the frame "
                f"of {foreign.kind} {foreign.object_id!r}, not of {change.kind} "
                f"{change.object_id!r}; write it with write_{foreign.kind}("
                f"{foreign.object_id!r}, ...). Written to {change.object_id!r} it would lose "
                f"or corrupt data ({change.report.summary}). Nothing was sent; see .report.",
                report=change.report,
            )
        problems = change.report.errors["problem"].astype(str)
        hint = ""
        if problems.str.startswith((ROW_DELETED, COLUMN_DROPPED)).any():
            hint = " If the rows or columns were dropped on purpose, write with allow_deletes=True."
        raise IncompletePayloadError(
            f"{change.kind} {change.object_id!r} was not written: the payload would lose "
            f"or corrupt data ({change.report.summary}). Nothing was sent; see .report." + hint,
            report=change.report,
        )


def not_sent(change: Change, status: Status) -> WriteResult:
    """The result of a change that was not sent (unchanged, or a dry run)."""
    held = change.held if status == "unchanged" else None
    return WriteResult(change.kind, change.object_id, status, change.diff, change.report,
                       _payload=change.new.result_payload(held), route=change.route.route,
                       route_reason=change.route.reason)  # fmt: skip


def take_backup(api: Api, change: Change, backup_dir: str | os.PathLike[str] | None) -> Path:
    """Save what the service held as a backup: a table's bytes as received, streamed to
    disk (no second serialisation), a mapping's parsed document."""
    held = change.held
    if held.kept is not None:
        return save_backup_document(api, held.kind, held.object_id, held.kept,
                                    backup_dir=backup_dir)  # fmt: skip
    return save_backup(api, held.kind, held.object_id, held.document(), backup_dir=backup_dir)


def send(api: Api, change: Change, *, backup: Path, record: Recorder | None = None) -> WriteResult:
    """PUT the change's document, read it back, verify it, and re-record the context.

    Verified: the object read back holds the document that was sent (bytes, else
    content); and every cell the diff changed holds the frame's value there
    (:func:`~mddframes.writing.intent.unmet_intent`). Not re-checked cell by cell: the
    cells the diff found unchanged, whose decision rests on the exact change detection
    (:mod:`mddframes.codec.fingerprint`).

    Raises
    ------
    WriteVerificationError
        The object read back differs from what was sent, or a changed cell does not
        hold the frame's value (``backup`` holds what it held).
    """
    kind, object_id = change.kind, change.object_id
    note = record or (lambda event: None)
    note("sending")
    # If-Match: the service (when it gives ETags) refuses the PUT if the object changed
    # after the read this write checked, even by a writer on another machine
    put_landed(api, change)  # a lost answer: read and compare (landed.py)
    note("sent")
    # hashed as it arrives; held only where it differs from what was sent
    readback = fetch(api, kind, object_id, raw=True, expected=change.new.sent_bytes())
    mismatch = change.new.mismatch(kind, readback)
    if mismatch is not None:
        raise WriteVerificationError(
            f"{kind} {object_id!r} was written but reads back different from what was sent "
            f"({mismatch.summary}); what it held before is in {backup}",
            operation=_OPERATION[kind],
        )
    unmet = unmet_intent(change)
    if unmet:
        raise WriteVerificationError(
            f"{kind} {object_id!r} was written but does not hold what the frame says in "
            f"{len(unmet)} changed cell(s) ({describe(unmet)}); what it held before is in "
            f"{backup}",
            operation=_OPERATION[kind],
        )
    note("verified")
    readback = change.new.as_held(readback)
    if logger.isEnabledFor(logging.INFO):  # (a summary costs more than a small write's diff)
        logger.info("%s %r written and verified (%s); backup %s", kind, object_id,
                    change.diff.summary, backup)  # fmt: skip
    if change.keeps_positions:
        _record(api, change, readback_context(change, readback))
    return WriteResult(kind, object_id, "written", change.diff, change.report, backup, True,
                       _payload=change.new.result_payload(readback), route=change.route.route,
                       route_reason=change.route.reason)  # fmt: skip


def readback_context(change: Change, readback: Held) -> ReadContext:
    """The context of what the service holds after the write, for the next write.

    The same rule as a read's (:func:`~mddframes.codec.read_route.choose_route`): a
    table of at most :data:`~mddframes.codec.read_route.STREAM_THRESHOLD` bytes keeps
    its parsed payload, so the next write overlays it whole, as after a read (the
    streamed overlay's set-up costs more than a small table's whole parse); a larger one
    keeps the read-back bytes compressed and the frame's fingerprint, so the next write
    of the same frame can stream too.
    """
    kept = readback.kept
    if kept is None or choose_route(kept.size) == "whole":
        return ReadContext(change.kind, change.object_id, readback.document(), kept=kept,
                           route="readback")  # fmt: skip
    # the streamed strategy's own survey of the frame, or (an Arrow-backed frame hashed
    # a slice at a time) the frame's fingerprint now
    frame = change.frame
    frame_print = change.frame_print
    if frame_print is None and frame is not None:
        frame_print = fingerprint(frame, convert=default_slice)
    return ReadContext(
        change.kind, change.object_id, kept=kept, fingerprint=frame_print, route="readback"
    )


def _record(api: Api, change: Change, context: ReadContext) -> None:
    # the frame still lines up row for row with what the service now holds, so it can
    # be edited and written again; after added or deleted rows it cannot, and its stale
    # context makes a second write of it stop with a conflict
    registry_for(api).record(context)
    change.recorded = context
    for frame in (change.frame, change.owner):
        if frame is not None:
            frame.attrs[ATTRS_KEY] = context
