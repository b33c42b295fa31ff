"""Many tables or mappings from one long frame: every object checked before any is sent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import resolve_workers, run_bulk
from mddframes.codec import CheckReport
from mddframes.errors import IncompletePayloadError, InvalidArgumentError, MddError
from mddframes.frames.bulk_tables import iter_groups
from mddframes.writing.backups import save_backup
from mddframes.writing.journal import JournalWriter, PlannedObject, digest
from mddframes.writing.result import Kind, WriteResult, _not_sent, _Prepared
from mddframes.writing.single import _prepare, _refuse, _send

if TYPE_CHECKING:
    from mddframes.api import Api

#: The columns of the result frame of :func:`write_tables` / :func:`write_mappings`
#: (after the id column).
RESULT_COLUMNS = (
    "status", "changed_cells", "added_rows", "deleted_rows", "backup", "verified", "error",
)  # fmt: skip


def _write_many(
    api: Api,
    kind: Kind,
    frame: pd.DataFrame,
    *,
    dry_run: bool,
    allow_deletes: bool,
    force: bool,
    backup_dir: Any,
    max_workers: int | None,
    progress: bool,
) -> pd.DataFrame:
    workers = resolve_workers(max_workers, api.max_workers)
    key = f"{kind}_id"
    if not isinstance(frame, pd.DataFrame) or key not in frame.columns:
        raise InvalidArgumentError(
            f"write_{kind}s needs a long frame with a {key!r} column (from read_{kind}s)"
        )
    groups = list(iter_groups(frame, key))

    def prepare(group: tuple[str, pd.DataFrame]) -> _Prepared | MddError:
        object_id, rows = group
        try:
            return _prepare(api, kind, object_id, rows, allow_deletes=allow_deletes,
                            force=force)  # fmt: skip
        except MddError as exc:  # collected: every object is checked before any is sent
            return exc

    checked = run_bulk(prepare, groups, max_workers=workers, progress=progress,
                       desc=f"check {kind}s", label=lambda g: g[0])  # fmt: skip
    prepared: list[_Prepared] = []
    failures: list[tuple[str, MddError]] = []
    for (object_id, _rows), outcome in zip(groups, checked.results, strict=True):
        if isinstance(outcome, MddError):
            failures.append((object_id, outcome))
        elif not outcome.diff.empty and not outcome.report.ok:
            failures.append((object_id, _refusal(outcome)))
        else:
            prepared.append(outcome)
    if failures:
        _raise_combined(kind, failures)

    results: dict[str, WriteResult] = {}
    to_send = []
    for item in prepared:
        if item.diff.empty:
            results[item.object_id] = _not_sent(item, "unchanged")
        elif dry_run:
            results[item.object_id] = _not_sent(item, "dry-run")
        else:
            to_send.append(item)
    errors: dict[str, Exception] = {}
    journal = None
    if to_send:
        journal, sent, failed = send_batch(api, f"write_{kind}s", to_send, backup_dir=backup_dir,
                                           max_workers=workers, progress=progress)  # fmt: skip
        results.update((to_send[position].object_id, result) for position, result in sent.items())
        errors.update((to_send[position].object_id, exc) for position, exc in failed.items())
    frame = _results_frame(key, [g[0] for g in groups], results, errors)
    # the batch to pass to resume / roll_back (None when nothing was sent)
    frame.attrs["batch"] = None if journal is None else journal.stem
    frame.attrs["journal"] = None if journal is None else str(journal)
    return frame


def send_batch(
    api: Api,
    operation: str,
    to_send: list[_Prepared],
    *,
    backup_dir: Any,
    max_workers: int,
    progress: bool,
) -> tuple[Path, dict[int, WriteResult], dict[int, Exception]]:
    """Back up, journal, then send and verify ``to_send`` concurrently (steps 6 to 8).

    Every object is backed up before the journal's plan is written, and the plan is on
    disk before the first PUT, so a crash at any moment leaves a batch that
    :func:`mddframes.journal.resume` or :func:`mddframes.journal.roll_back` can finish.

    Parameters
    ----------
    api : Api
    operation : str
        The batch's operation, written in its plan (``write_tables``...).
    to_send : list of _Prepared
        The checked objects, of one kind or of both.
    backup_dir, max_workers, progress
        As for :func:`write_tables`.

    Returns
    -------
    tuple
        The journal's path, the results of the objects written and verified, and the
        errors of those that failed, both by position in ``to_send`` (a table and a
        mapping may share an id).
    """
    kinds = sorted({item.kind for item in to_send})
    kind = kinds[0] if len(kinds) == 1 else "object"
    backups = run_bulk(
        lambda item: save_backup(api, item.kind, item.object_id, item.current,
                                 backup_dir=backup_dir),
        to_send, max_workers=max_workers, progress=False, desc=f"back up {kind}s",
        label=lambda item: item.object_id,
    ).results  # fmt: skip
    planned = [
        PlannedObject(item.kind, item.object_id, str(backup), digest(item.current),
                      digest(item.payload), item.payload)
        for item, backup in zip(to_send, backups, strict=True)
    ]  # fmt: skip
    with JournalWriter.create(api, operation, planned, backup_dir) as journal:

        def send(index: int) -> WriteResult:
            item = to_send[index]
            try:
                return _send(api, item, backup_dir, backup=backups[index],
                             record=lambda event: journal.event(index, event, "after", "write"))  # fmt: skip
            except Exception as exc:
                journal.event(index, "failed", "after", "write", error=_describe(exc))
                raise

        sent = run_bulk(send, list(range(len(to_send))), max_workers=max_workers, progress=progress,
                        errors="skip", desc=f"write {kind}s",
                        label=lambda index: to_send[index].object_id)  # fmt: skip
        if not sent.exceptions:
            journal.end("written", "write")
    results: dict[int, WriteResult] = {}
    errors: dict[int, Exception] = {}
    for position in range(len(to_send)):
        if position in sent.exceptions:
            exc = sent.exceptions[position]
            exc.add_note(f"batch {journal.batch}: finish it with resume({journal.batch!r}) or "
                         f"undo it with roll_back({journal.batch!r})")  # fmt: skip
            errors[position] = exc
        else:
            results[position] = sent.results[position]
    return journal.path, results, errors


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _refusal(prepared: _Prepared) -> IncompletePayloadError:
    try:
        _refuse(prepared)
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
            f"({names}{more}): {report.summary()}",
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
        error = errors.get(object_id)
        rows.append(
            {
                key: object_id,
                "status": "failed" if error is not None else result.status,
                "changed_cells": None if result is None else len(result.diff.changed),
                "added_rows": None if result is None else len(result.diff.added),
                "deleted_rows": None if result is None else len(result.diff.deleted),
                "backup": None if result is None or result.backup is None else str(result.backup),
                "verified": None if result is None else result.verified,
                "error": None if error is None else f"{type(error).__name__}: {error}",
            }
        )
    frame = pd.DataFrame(rows, columns=[key, *RESULT_COLUMNS])
    frame = frame.astype(
        {key: "string", "status": "string", "changed_cells": "Int64", "added_rows": "Int64",
         "deleted_rows": "Int64", "backup": "string", "verified": "boolean", "error": "string"}
    )  # fmt: skip
    frame.attrs["results"] = results
    return frame


def write_tables(
    api: Api,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Write every table of a long frame (from ``read_tables``), safely.

    Each table is read and checked first (concurrently); if any table changed since
    it was read or fails its completeness check, nothing is sent and one error names
    them all. Then the changed tables are backed up, the batch's journal is written
    (``<backup root>/<tenant>/journal/<batch>.jsonl``), and the tables are written and
    verified concurrently with a progress bar. If the process dies half-way,
    :func:`mddframes.journal.pending_writes` lists the batch and
    :func:`~mddframes.journal.resume` / :func:`~mddframes.journal.roll_back` finish or
    undo it.

    Parameters
    ----------
    api : Api
    frame : pandas.DataFrame
        A long frame with a ``table_id`` column and each row's original position as
        index (split with :func:`mddframes.frames.iter_groups`).
    dry_run, allow_deletes, force, backup_dir
        As for :func:`write_table`, applied to every table.
    max_workers : int, optional
        Concurrent calls; default ``api.max_workers``.
    progress : bool, default True
        Show ``tqdm.auto`` progress bars.

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
    """
    return _write_many(api, "table", frame, dry_run=dry_run, allow_deletes=allow_deletes,
                       force=force, backup_dir=backup_dir, max_workers=max_workers,
                       progress=progress)  # fmt: skip


def write_mappings(
    api: Api,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Write every mapping of a long frame (from ``read_mappings``), safely.

    The same steps as :func:`write_tables`: every mapping is read and checked before
    any is sent, and the batch keeps a journal.

    Parameters
    ----------
    api : Api
    frame : pandas.DataFrame
        A long frame with a ``mapping_id`` column and each row's original position as
        index.
    dry_run, allow_deletes, force, backup_dir
        As for :func:`write_mapping`, applied to every mapping.
    max_workers : int, optional
        Concurrent calls; default ``api.max_workers``.
    progress : bool, default True
        Show ``tqdm.auto`` progress bars.

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
    return _write_many(api, "mapping", frame, dry_run=dry_run, allow_deletes=allow_deletes,
                       force=force, backup_dir=backup_dir, max_workers=max_workers,
                       progress=progress)  # fmt: skip
