"""Several backups put back as one journalled batch: :func:`restore_backups`.

:func:`~mddframes.writing.single.restore` puts one backup back. Putting back many (the
backups of a bulk write, say) is a batch like ``write_tables``: every backup is read and
checked before anything is sent, what the service holds now is backed up, the batch's
journal is written, and only then are the backups sent, so a crash half-way can be
resumed or rolled back (:mod:`mddframes.journal`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import resolve_workers, run_bulk
from mddframes.codec import check_payload, diff_payloads
from mddframes.errors import InvalidArgumentError
from mddframes.writing.backups import load_backup
from mddframes.writing.many import RESULT_COLUMNS, send_batch
from mddframes.writing.result import WriteResult, _not_sent, _Prepared
from mddframes.writing.single import _get

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


def restore_backups(
    api: Api,
    backups: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    dry_run: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Put several backups back on the service as one batch with a journal.

    Every backup is loaded and every object read before anything is sent; then what
    each object holds now is backed up, the batch's journal is written, and the backups
    are sent and read back concurrently. If the process dies half-way,
    :func:`mddframes.journal.resume` finishes the restore and
    :func:`mddframes.journal.roll_back` undoes it.

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
        journal (``<root>/<tenant>/journal``); default ``.mddframes/backups``.
    max_workers : int, optional
        Concurrent calls; default ``api.max_workers``.
    progress : bool, default True
        Show ``tqdm.auto`` progress bars.

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
    workers = resolve_workers(max_workers, api.max_workers)
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

    current = run_bulk(
        lambda document: _get(api, document["kind"], document["id"]), documents,
        max_workers=workers, progress=progress, desc="read before restore",
        label=lambda document: f"{document['kind']} {document['id']}",
    ).results  # fmt: skip
    prepared = [
        _Prepared(
            document["kind"], document["id"], now, document["payload"],
            diff_payloads(now, document["payload"], kind=document["kind"]),
            # informational: a restore may delete rows added since the backup
            check_payload(document["payload"], now, allow_deletes=True, kind=document["kind"],
                          object_id=document["id"]),
            keeps_positions=True,
        )
        for document, now in zip(documents, current, strict=True)
    ]  # fmt: skip
    results: list[WriteResult | None] = [None] * len(prepared)
    errors: dict[int, Exception] = {}
    to_send: list[int] = []
    for position, item in enumerate(prepared):
        if item.diff.empty:
            results[position] = _not_sent(item, "unchanged")
        elif dry_run:
            results[position] = _not_sent(item, "dry-run")
        else:
            to_send.append(position)
    journal = None
    if to_send:
        journal, sent, failed = send_batch(
            api, "restore_backups", [prepared[p] for p in to_send], backup_dir=backup_dir,
            max_workers=workers, progress=progress,
        )  # fmt: skip
        for batch_position, result in sent.items():
            results[to_send[batch_position]] = result
        for batch_position, exc in failed.items():
            errors[to_send[batch_position]] = exc
    frame = _frame(prepared, paths, results, errors)
    frame.attrs["batch"] = None if journal is None else journal.stem
    frame.attrs["journal"] = None if journal is None else str(journal)
    return frame


def _frame(
    prepared: list[_Prepared],
    paths: list[Path],
    results: list[WriteResult | None],
    errors: dict[int, Exception],
) -> pd.DataFrame:
    rows = []
    for position, (item, path, result) in enumerate(zip(prepared, paths, results, strict=True)):
        error = errors.get(position)
        rows.append({
            "kind": item.kind, "id": item.object_id, "source": str(path),
            "status": "failed" if error is not None else result.status,
            "changed_cells": len(item.diff.changed), "added_rows": len(item.diff.added),
            "deleted_rows": len(item.diff.deleted),
            "backup": None if result is None or result.backup is None else str(result.backup),
            "verified": None if result is None else result.verified,
            "error": None if error is None else f"{type(error).__name__}: {error}",
        })  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(RESTORE_COLUMNS))
    frame = frame.astype(
        {"kind": "string", "id": "string", "source": "string", "status": "string",
         "changed_cells": "Int64", "added_rows": "Int64", "deleted_rows": "Int64",
         "backup": "string", "verified": "boolean", "error": "string"}
    )  # fmt: skip
    frame.attrs["results"] = results
    return frame
