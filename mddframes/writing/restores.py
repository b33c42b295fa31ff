"""Backups put back on the service, as a journalled batch: :func:`restore`, :func:`restore_backups`.

Putting back one backup or many is the same batch as ``write_tables``: every backup is
read and checked before anything is sent, what the service holds now is backed up, the
batch's journal is written, and only then are the backups sent, so a crash half-way can
be resumed or rolled back (:mod:`mddframes.writing.recovery`). :func:`restore` is the
batch of one backup.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import resolve_workers, run_bulk
from mddframes.doc_sections import documented
from mddframes.errors import InvalidArgumentError
from mddframes.writing.backups import load_backup
from mddframes.writing.batch import (
    RESULT_COLUMNS,
    RESULT_DTYPES,
    SentBatch,
    gate_all,
    result_fields,
    send_batch,
)
from mddframes.writing.changes import Change, prepare_replacement
from mddframes.writing.locks import object_locks
from mddframes.writing.result import WriteResult

if TYPE_CHECKING:
    from mddframes.api import Api

#: The columns of the frame :func:`restore_backups` returns.
RESTORE_COLUMNS = ("kind", "id", "source", *RESULT_COLUMNS)


def _paths(backups: Any) -> list[Path]:
    """The backup files to restore; missing values (NA) are skipped."""
    if isinstance(backups, str | bytes | os.PathLike):
        return [Path(os.fsdecode(backups))]
    if not isinstance(backups, Iterable):
        raise InvalidArgumentError(
            "backups must be a backup file or a list of them (e.g. the 'backup' column of "
            f"write_tables' result), not {type(backups).__name__}"
        )
    paths = []
    for value in backups:
        if value is None or (not isinstance(value, str | os.PathLike) and pd.isna(value)):
            continue  # an object the write did not change has no backup
        if not isinstance(value, str | os.PathLike):
            raise InvalidArgumentError(f"{value!r} is not a backup file's path")
        paths.append(Path(value))
    return paths


def _load_all(api: Api, paths: list[Path]) -> list[dict[str, Any]]:
    """Every backup loaded, of this tenant, each object at most once (else nothing is read)."""
    documents = [load_backup(path) for path in paths]
    tenant = getattr(api, "tenant", None)
    seen: dict[tuple[str, str], Path] = {}
    for path, document in zip(paths, documents, strict=True):
        if document.get("tenant") and tenant and document["tenant"] != tenant:
            raise InvalidArgumentError(
                f"backup {path} is of tenant {document['tenant']!r}, this client is "
                f"connected to {tenant!r}; nothing was sent"
            )
        key = (document["kind"], document["id"])
        if key in seen:
            raise InvalidArgumentError(
                f"two backups of {key[0]} {key[1]!r} ({seen[key]} and {path}): which one to "
                "restore is ambiguous; pass one. Nothing was sent"
            )
        seen[key] = path
    return documents


def _restore(
    api: Api,
    paths: list[Path],
    operation: str,
    *,
    dry_run: bool,
    backup_dir: str | os.PathLike[str] | None,
    max_workers: int | None,
    progress: bool | None,
) -> tuple[list[Change], list[WriteResult | None], dict[int, Exception], SentBatch]:
    """The batch: prepare every restore, gate, send the changed ones with a journal."""
    workers = resolve_workers(max_workers, api.max_workers)
    documents = _load_all(api, paths)
    guard = contextlib.nullcontext() if dry_run else object_locks(
        api, [(document["kind"], document["id"]) for document in documents], purpose=operation
    )  # fmt: skip
    with guard:  # from the first check to the last verification
        return _restore_locked(api, documents, operation, dry_run=dry_run,
                               backup_dir=backup_dir, workers=workers, progress=progress)  # fmt: skip


def _restore_locked(
    api: Api,
    documents: list[dict[str, Any]],
    operation: str,
    *,
    dry_run: bool,
    backup_dir: str | os.PathLike[str] | None,
    workers: int,
    progress: bool | None,
) -> tuple[list[Change], list[WriteResult | None], dict[int, Exception], SentBatch]:
    preparing = run_bulk(
        lambda document: prepare_replacement(api, document["kind"], document["id"],
                                             document["payload"]),
        documents, max_workers=workers, progress=progress, desc="read before restore",
        label=lambda document: f"{document['kind']} {document['id']}",
    )  # fmt: skip
    changes = [change for _document, change in preparing.succeeded]  # all: errors="raise"
    results, to_send = gate_all(changes, dry_run=dry_run)
    sent = send_batch(api, operation, [changes[p] for p in to_send],
                      backup_dir=backup_dir, max_workers=workers, progress=progress)  # fmt: skip
    errors: dict[int, Exception] = {}
    for batch_position, outcome in enumerate(sent.outcomes):
        if isinstance(outcome, WriteResult):
            results[to_send[batch_position]] = outcome
        else:
            errors[to_send[batch_position]] = outcome
    return changes, results, errors, sent


def restore(
    api: Api,
    backup: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult:
    """Put a backup back on the service, after backing up what it holds now.

    The batch of one backup of :func:`restore_backups`: journalled like it, so a restore
    cut off half-way is finished or undone by ``resume`` / ``roll_back``.

    Parameters
    ----------
    api : Api
        A client of the tenant the backup was taken from.
    backup : path
        A backup file (``WriteResult.backup``).
    dry_run : bool, default False
        Return the diff without sending.
    backup_dir : path, optional
        Root folder for the backup taken before restoring, and for the journal.

    Returns
    -------
    WriteResult
        ``status`` "unchanged" when the service already holds the backup's content.
        The report is informational: a restore may delete rows added since.

    Raises
    ------
    InvalidArgumentError
        The backup is of another tenant.
    WriteVerificationError
        The object read back differs from the backup.
    """
    _changes, results, errors, _sent = _restore(
        api, [Path(os.fsdecode(backup))], "restore", dry_run=dry_run, backup_dir=backup_dir,
        max_workers=1, progress=False,
    )  # fmt: skip
    if errors:
        raise errors[0]
    result = results[0]
    assert result is not None
    return result


@documented
def restore_backups(
    api: Api,
    backups: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    dry_run: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Put several backups back on the service as one batch with a journal.

    Every backup is loaded and every object read before anything is sent; then what
    each object holds now is backed up, the batch's journal is written, and the backups
    are sent and read back concurrently. If the process dies half-way,
    :func:`~mddframes.writing.recovery.resume` finishes the restore and
    :func:`~mddframes.writing.recovery.roll_back` undoes it.

    Parameters
    ----------
    api : Api
        A client of the tenant the backups were taken from.
    backups : path or iterable of paths
        Backup files (``WriteResult.backup``, or the ``backup`` column of the frame
        :func:`write_tables` returns: its missing values are skipped). Tables and
        mappings may be mixed; each object at most once.
    dry_run : bool, default False
        Return the diffs without sending.
    backup_dir : path, optional
        Root folder for the backups taken before restoring, and for the batch's
        journal (``<root>/<tenant>/journal``); default
        the ``backup_dir`` setting, else the user's data folder.
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per backup: ``kind``, ``id``, ``source`` (the backup restored) and the
        columns of :func:`write_tables` (``status`` written, unchanged, dry-run or
        failed; ``backup`` is the new backup of what the restore overwrote).
        ``attrs["batch"]`` and ``attrs["journal"]`` name the batch (None when nothing
        was sent); ``attrs["results"]`` is the list of :class:`WriteResult` (None
        where the object failed).

    Raises
    ------
    InvalidArgumentError
        No backup given, a backup of another tenant, or two backups of one object
        (nothing was read or sent).
    DataShapeError
        A file is not an mddframes backup (names the file; nothing was sent).
    MddError
        Reading what an object holds now failed (nothing was sent).
    """
    paths = _paths(backups)
    if not paths:
        raise InvalidArgumentError("restore_backups needs at least one backup file")
    changes, results, errors, sent = _restore(api, paths, "restore_backups", dry_run=dry_run, backup_dir=backup_dir,
                                              max_workers=max_workers, progress=progress)  # fmt: skip
    frame = _frame(changes, paths, results, errors)
    frame.attrs["batch"] = sent.batch
    frame.attrs["journal"] = sent.journal
    return frame


def _frame(
    changes: list[Change],
    paths: list[Path],
    results: list[WriteResult | None],
    errors: dict[int, Exception],
) -> pd.DataFrame:
    rows = []
    for position, (item, path, result) in enumerate(zip(changes, paths, results, strict=True)):
        rows.append({"kind": item.kind, "id": item.object_id, "source": str(path),
                     **result_fields(item.diff, result, errors.get(position))})  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(RESTORE_COLUMNS))
    frame = frame.astype({"kind": "string", "id": "string", "source": "string", **RESULT_DTYPES})
    frame.attrs["results"] = results
    return frame
