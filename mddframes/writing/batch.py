"""Many tables or mappings from one long frame: every object checked before any is sent.

A batch takes the engine's steps (:mod:`mddframes.writing.engine`) for every object,
phase by phase: prepare and gate them all (nothing is sent if one fails), back them all
up, write the batch's journal (:mod:`mddframes.writing.journal_file`), then send and
verify them concurrently. :func:`send_batch` is shared with
:func:`~mddframes.writing.restores.restore_backups`.

A batch holds the read context of every object it writes from its first check to its
last write (the client's registry keeps only its latest reads), and leaves the long
frame it was given holding them, each written object's replaced by its read-back's
(a :class:`~mddframes.context.ContextGroup` in its ``attrs``): the frame writes back
again, however many objects it holds, as a frame of one object does.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import resolve_workers, run_bulk
from mddframes.codec import CheckReport, Diff
from mddframes.codec.kinds import Kind
from mddframes.codec.values import digest
from mddframes.context import ATTRS_KEY, ContextGroup, context_of
from mddframes.doc_sections import documented
from mddframes.errors import IncompletePayloadError, InvalidArgumentError, MddError
from mddframes.frames.backends import from_user_frame
from mddframes.frames.bulk_tables import iter_groups
from mddframes.writing.changes import Change, prepare_edit
from mddframes.writing.engine import gate, refuse_incomplete, send, take_backup
from mddframes.writing.journal_file import JournalWriter, PlannedObject, new_batch_id
from mddframes.writing.locks import batch_lock, object_locks
from mddframes.writing.result import WriteResult

if TYPE_CHECKING:
    from mddframes.api import Api

#: The dtypes of :data:`RESULT_COLUMNS`.
RESULT_DTYPES = {
    "status": "string", "changed_cells": "Int64", "added_rows": "Int64",
    "deleted_rows": "Int64", "backup": "string", "verified": "boolean", "error": "string",
}  # fmt: skip

#: The columns of the result frame of :func:`write_tables` / :func:`write_mappings`
#: (after the id column).
RESULT_COLUMNS = (
    "status", "changed_cells", "added_rows", "deleted_rows", "backup", "verified", "error",
)  # fmt: skip


def write_edits(
    api: Api,
    kind: Kind,
    frame: pd.DataFrame,
    *,
    dry_run: bool,
    allow_deletes: bool,
    force: bool,
    backup_dir: str | os.PathLike[str] | None,
    max_workers: int | None,
    progress: bool | None,
) -> pd.DataFrame:
    """Write every object of a long frame (:func:`write_tables`, :func:`write_mappings`)."""
    workers = resolve_workers(max_workers, api.max_workers)
    key = f"{kind}_id"
    given = frame
    frame = from_user_frame(frame, what=f"write_{kind}s")  # Arrow-backed or polars
    if not isinstance(frame, pd.DataFrame) or key not in frame.columns:
        raise InvalidArgumentError(
            f"write_{kind}s needs a long frame with a {key!r} column (from read_{kind}s)"
        )
    groups = list(iter_groups(frame, key))
    # held until the batch ends: the read each object's write starts from (the frame's
    # own, else the client's latest), whatever the registry lets go meanwhile
    held = {object_id: context_of(api, rows, kind, object_id) for object_id, rows in groups}

    def prepare(group: tuple[str, pd.DataFrame]) -> Change | MddError:
        # iter_groups gives a table's rows as read the RangeIndex of a single read, so a
        # large table's cell edits take the streamed strategy as in write_table
        object_id, rows = group
        try:
            return prepare_edit(api, kind, object_id, rows, allow_deletes=allow_deletes,
                                force=force, context=held[object_id])  # fmt: skip
        except MddError as exc:  # collected: every object is checked before any is sent
            return exc

    guard = contextlib.nullcontext() if dry_run else object_locks(
        api, [(kind, object_id) for object_id, _rows in groups], purpose=f"write_{kind}s"
    )  # fmt: skip
    with guard:  # from the first check to the last verification
        checking = run_bulk(prepare, groups, max_workers=workers, progress=progress,
                            desc=f"check {kind}s", label=lambda g: g[0])  # fmt: skip
        checked = [outcome for _group, outcome in checking.succeeded]  # all: errors="raise"
        changes = _all_or_none(kind, [g[0] for g in groups], checked)
        results, to_send = gate_all(changes, dry_run=dry_run)
        sent = send_batch(api, f"write_{kind}s", [changes[p] for p in to_send],
                          backup_dir=backup_dir, max_workers=workers, progress=progress)  # fmt: skip
    errors: dict[str, Exception] = {}
    for batch_position, outcome in enumerate(sent.outcomes):
        object_id = changes[to_send[batch_position]].object_id
        if isinstance(outcome, WriteResult):
            results[to_send[batch_position]] = outcome
        else:
            errors[object_id] = outcome
    by_id = {result.object_id: result for result in results if result is not None}
    for change in changes:
        if change.recorded is not None:  # written: the frame's rows now line up with it
            held[change.object_id] = change.recorded
    if isinstance(given, pd.DataFrame):
        given.attrs[ATTRS_KEY] = ContextGroup(c for c in held.values() if c is not None)
    frame = _results_frame(key, [g[0] for g in groups], by_id, errors)
    # the batch to pass to resume / roll_back (None when nothing was sent)
    frame.attrs["batch"] = sent.batch
    frame.attrs["journal"] = sent.journal
    return frame


def _all_or_none(kind: Kind, ids: list[str], checked: list[Change | MddError]) -> list[Change]:
    """The checked changes, or one error naming every object that failed its check."""
    failures: list[tuple[str, MddError]] = []
    for object_id, outcome in zip(ids, checked, strict=True):
        if isinstance(outcome, MddError):
            failures.append((object_id, outcome))
        elif not outcome.diff.empty and not outcome.report.ok:
            failures.append((object_id, _refusal(outcome)))
    if failures:
        _raise_combined(kind, failures)
    return [outcome for outcome in checked if isinstance(outcome, Change)]


def gate_all(changes: list[Change], *, dry_run: bool) -> tuple[list[WriteResult | None], list[int]]:
    """Each change's result when it is not to be sent, and the positions of those to send."""
    results: list[WriteResult | None] = []
    to_send: list[int] = []
    for position, change in enumerate(changes):
        results.append(gate(change, dry_run=dry_run))
        if results[-1] is None:
            to_send.append(position)
    return results, to_send


@dataclass(frozen=True)
class SentBatch:
    """What :func:`send_batch` did: per change a :class:`WriteResult` or the exception,
    and the batch's id and journal (None when there was nothing to send)."""

    outcomes: list[WriteResult | Exception]
    batch: str | None = None
    journal: str | None = None


@documented
def send_batch(
    api: Api,
    operation: str,
    changes: list[Change],
    *,
    backup_dir: str | os.PathLike[str] | None,
    max_workers: int,
    progress: bool | None,
) -> SentBatch:
    """Back up, journal, then send and verify ``changes`` concurrently through the engine.

    Every object is backed up before the journal's plan is written, and the plan is on
    disk before the first PUT, so a crash at any moment leaves a batch that
    :func:`~mddframes.writing.recovery.resume` or
    :func:`~mddframes.writing.recovery.roll_back` can finish.

    Parameters
    ----------
    {api}
    operation : str
        The batch's operation, written in its plan (``write_tables``...).
    changes : list of Change
        The gated changes, of one kind or of both.
    backup_dir, max_workers, progress
        As for :func:`write_tables`.

    Returns
    -------
    SentBatch
    """
    if not changes:
        return SentBatch([])
    kinds = sorted({change.kind for change in changes})
    kind = kinds[0] if len(kinds) == 1 else "object"
    backing_up = run_bulk(lambda change: take_backup(api, change, backup_dir), changes,
                          max_workers=max_workers, progress=False, desc=f"back up {kind}s",
                          label=lambda change: change.object_id)  # fmt: skip
    backups = [path for _change, path in backing_up.succeeded]  # all: errors="raise"
    planned = []
    for change, backup in zip(changes, backups, strict=True):
        payload = change.new.payload()
        planned.append(PlannedObject(change.kind, change.object_id, str(backup),
                                     digest(change.held.document()), digest(payload), payload))  # fmt: skip
    batch = new_batch_id()
    # the batch's lock before its journal exists: a resume or roll back started from the
    # journal while this write still runs waits for it
    with batch_lock(api, batch, purpose=operation), \
            JournalWriter.create(api, operation, planned, backup_dir, batch=batch) as journal:  # fmt: skip

        def send_one(index: int) -> WriteResult:
            try:
                return send(api, changes[index], backup=backups[index],
                            record=lambda event: journal.event(index, event, "after", "write"))  # fmt: skip
            except Exception as exc:
                journal.event(index, "failed", "after", "write", error=describe(exc))
                raise

        sent = run_bulk(send_one, list(range(len(changes))), max_workers=max_workers,
                        progress=progress, errors="skip", desc=f"write {kind}s",
                        label=lambda index: changes[index].object_id)  # fmt: skip
        if not sent.exceptions:
            journal.end("written", "write")
    written = dict(sent.succeeded)
    outcomes: list[WriteResult | Exception] = []
    for position in range(len(changes)):
        if position in sent.exceptions:
            exc = sent.exceptions[position]
            exc.add_note(f"batch {journal.batch}: finish it with resume({journal.batch!r}) or "
                         f"undo it with roll_back({journal.batch!r})")  # fmt: skip
            outcomes.append(exc)
        else:
            outcomes.append(written[position])
    return SentBatch(outcomes, journal.path.stem, str(journal.path))


def result_fields(
    diff: Diff | None, result: WriteResult | None, error: Exception | None
) -> dict[str, Any]:
    """One object's :data:`RESULT_COLUMNS` in a batch's result frame."""
    return {
        "status": "failed" if error is not None or result is None else result.status,
        "changed_cells": None if diff is None else len(diff.changed_cells),
        "added_rows": None if diff is None else len(diff.added_rows),
        "deleted_rows": None if diff is None else len(diff.deleted_rows),
        "backup": None if result is None or result.backup is None else str(result.backup),
        "verified": None if result is None else result.verified,
        "error": None if error is None else describe(error),
    }


def describe(exc: BaseException) -> str:
    """An exception as a journal line or a result frame shows it."""
    return f"{type(exc).__name__}: {exc}"


def _refusal(change: Change) -> IncompletePayloadError:
    try:
        refuse_incomplete(change)
    except IncompletePayloadError as exc:
        return exc
    raise AssertionError("unreachable: the report had errors")


def _raise_combined(kind: Kind, failures: list[tuple[str, MddError]]) -> None:
    """Nothing was sent: raise one error that names every object that failed its check."""
    names = ", ".join(repr(object_id) for object_id, _ in failures[:10])
    more = f" and {len(failures) - 10} more" if len(failures) > 10 else ""
    reports = [e.report for _, e in failures if isinstance(e, IncompletePayloadError)]
    if len(reports) == len(failures):
        report = CheckReport.concat(reports)
        raise IncompletePayloadError(
            f"no {kind} was written: {len(failures)} {kind}(s) failed the completeness check "
            f"({names}{more}): {report.summary}",
            report=report,
        )
    first_id, first = failures[0]
    others = "; ".join(f"{object_id!r}: {exc.message}" for object_id, exc in failures[1:5])
    first.add_note(
        f"no {kind} was written; {len(failures)} {kind}(s) failed before sending ({names}{more})"
        + (f"; others: {others}" if others else "")
    )
    raise first


def _results_frame(
    key: str, ids: list[str], results: dict[str, WriteResult], errors: dict[str, Exception]
) -> pd.DataFrame:
    rows = []
    for object_id in ids:
        result = results.get(object_id)
        diff = None if result is None else result.diff
        rows.append({key: object_id, **result_fields(diff, result, errors.get(object_id))})
    frame = pd.DataFrame(rows, columns=[key, *RESULT_COLUMNS])
    frame = frame.astype({key: "string", **RESULT_DTYPES})
    frame.attrs["results"] = results
    return frame


@documented
def write_tables(
    api: Api,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Write every table of a long frame (from ``read_tables``), safely.

    Each table is read and checked first (concurrently); if any table changed since
    it was read or fails its completeness check, nothing is sent and one error names
    them all. Then the changed tables are backed up, the batch's journal is written
    (``<backup root>/<tenant>/journal/<batch>.jsonl``), and the tables are written and
    verified concurrently with a progress bar. If the process dies half-way,
    :func:`~mddframes.writing.recovery.pending_writes` lists the batch and
    :func:`~mddframes.writing.recovery.resume` / :func:`~mddframes.writing.recovery.roll_back` finish or
    undo it.

    Parameters
    ----------
    {api}
    frame : pandas.DataFrame
        A long frame from ``read_tables``: a ``table_id`` column and a ``row`` column
        with each row's original position (NA for a new row); its index is not used.
        Split with :func:`mddframes.frames.iter_groups`.
    dry_run, allow_deletes, force, backup_dir
        As for :func:`write_table`, applied to every table.
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per table: ``table_id``, ``status`` (written, unchanged, dry-run, or
        failed when its PUT or verification failed), ``changed_cells``, ``added_rows``,
        ``deleted_rows``, ``backup``, ``verified``, ``error``;
        ``attrs["results"]`` maps each id to its :class:`WriteResult`;
        ``attrs["batch"]`` and ``attrs["journal"]`` name the batch and its journal
        (None when nothing was sent).

    Raises
    ------
    ConcurrentModificationError, IncompletePayloadError, MddError
        Before anything is sent, as described above.
    BackupError, JournalError
        A backup or the journal could not be written (nothing was sent).

    Examples
    --------
    >>> tree = client.read_tree("DWH")
    >>> sources = tree.loc[tree["type"] == "SOURCE_TABLE", "table_id"]
    >>> long = client.read_tables(sources, progress=False)
    >>> short = long["customer_no"].str.len().lt(7).fillna(False)
    >>> long.loc[short, "customer_no"] = long["customer_no"].str.zfill(7)
    >>> result = client.write_tables(long, progress=False)  # checks all, then writes each
    >>> result["status"].value_counts().to_dict()  # 8 of the 24 had short numbers
    {'unchanged': 16, 'written': 8}
    >>> client.pending_writes().empty  # the batch's journal: finished
    True
    """
    return write_edits(api, "table", frame, dry_run=dry_run, allow_deletes=allow_deletes,
                       force=force, backup_dir=backup_dir, max_workers=max_workers,
                       progress=progress)  # fmt: skip


@documented
def write_mappings(
    api: Api,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Write every mapping of a long frame (from ``read_mappings``), safely.

    The same steps as :func:`write_tables`: every mapping is read and checked before
    any is sent, and the batch keeps a journal.

    Parameters
    ----------
    {api}
    frame : pandas.DataFrame
        A long frame from ``read_mappings``: a ``mapping_id`` column and a ``row``
        column with each row's original position, as for :func:`write_tables`.
    dry_run, allow_deletes, force, backup_dir
        As for :func:`write_mapping`, applied to every mapping.
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per mapping: ``mapping_id`` and the columns of :func:`write_tables`;
        ``attrs["results"]`` maps each id to its :class:`WriteResult`;
        ``attrs["batch"]`` and ``attrs["journal"]`` as for :func:`write_tables`.

    Raises
    ------
    ConcurrentModificationError, IncompletePayloadError, MddError
        Before anything is sent, as for :func:`write_tables`.
    """
    return write_edits(api, "mapping", frame, dry_run=dry_run, allow_deletes=allow_deletes,
                       force=force, backup_dir=backup_dir, max_workers=max_workers,
                       progress=progress)  # fmt: skip
