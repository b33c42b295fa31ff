"""Removing old backups and finished journals: :func:`prune_backups` (``mddframes writes
--prune DAYS``).

Backups and journals hold whole payloads (a journal's plan holds every object of its
batch), so they are worth removing once they are no longer needed. A batch that did not
finish is never touched: its journal and every backup it names stay, whatever their
age, because :func:`~mddframes.writing.recovery.resume` and
:func:`~mddframes.writing.recovery.roll_back` need them; they are listed as refused.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.disk_names import id_file_name
from mddframes.errors import InvalidArgumentError
from mddframes.writing.backups import backup_root
from mddframes.writing.journal_file import journal_folder, read_journal

if TYPE_CHECKING:
    from mddframes.api import Api

#: The columns of :func:`prune_backups`' frame.
PRUNE_COLUMNS = ("path", "kind", "saved_at", "action")

# backup files are named by their UTC time (backups._store); journals by their batch id
_BACKUP_TIME = re.compile(r"^(\d{8}T\d{6}\.\d{6})Z(?:-\d+)?\.json$")
_BATCH_TIME = re.compile(r"^(\d{8}T\d{6})Z-")


def prune_backups(
    api: Api,
    days: float,
    *,
    backup_dir: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
) -> pd.DataFrame:
    """Remove a tenant's backups and finished journals older than ``days`` days.

    Unfinished batches are refused: their journals and the backups they name are kept
    whatever their age (finish them with ``resume`` or ``roll_back`` first). Folders
    left empty are removed too.

    Parameters
    ----------
    api : Api
        A client of the tenant (its folder under the backup root is pruned).
    days : float
        Files saved more than this many days ago go (0: every finished one).
    backup_dir : path, optional
        The backup root; default the ``backup_dir`` setting, else the user's data folder.
    dry_run : bool, default False
        List what would go without removing anything.

    Returns
    -------
    pandas.DataFrame
        One row per file considered old enough: ``path``, ``kind`` (``backup`` or
        ``journal``), ``saved_at`` (UTC) and ``action`` (``removed``, ``would remove``
        or ``kept: unfinished batch <id>``). ``attrs["refused"]`` counts the kept ones.

    Raises
    ------
    InvalidArgumentError
        ``days`` is negative or not a number.
    JournalError
        A journal is damaged in the middle (nothing was removed).

    Examples
    --------
    >>> pruned = prune_backups(client.api, 90, dry_run=True)
    >>> list(pruned.columns)
    ['path', 'kind', 'saved_at', 'action']
    """
    if isinstance(days, bool) or not isinstance(days, int | float) or not days >= 0:
        raise InvalidArgumentError(f"prune: days must be a number >= 0, not {days!r}")
    if math.isinf(days):
        return _frame([], 0)
    cutoff = _dt.datetime.now(_dt.UTC) - _dt.timedelta(days=days)
    tenant = getattr(api, "tenant", None) or "default"
    tenant_folder = backup_root(api, backup_dir) / id_file_name(str(tenant))
    journals = journal_folder(api, backup_dir)

    # every unfinished batch first: nothing is removed if a journal cannot be read
    unfinished: dict[Path, str] = {}
    finished: list[Path] = []
    for path in sorted(journals.glob("*.jsonl")) if journals.is_dir() else []:
        state = read_journal(path)
        if state is None:  # the plan was cut off while written: nothing was sent
            finished.append(path)
        elif state.outcome is None:
            unfinished[path.resolve()] = state.batch
            for item in state.objects:
                if item.backup:
                    unfinished[Path(item.backup).resolve()] = state.batch
        else:
            finished.append(path)
    candidates: list[tuple[Path, str, _dt.datetime]] = []
    for path in finished:
        candidates.append((path, "journal", _saved_at(path, _BATCH_TIME, "%Y%m%dT%H%M%S")))
    for path in sorted(tenant_folder.glob("*/*/*.json")) if tenant_folder.is_dir() else []:
        if path.parent.parent.parent == tenant_folder and path.parent.parent.name != "journal":
            candidates.append((path, "backup", _saved_at(path, _BACKUP_TIME, "%Y%m%dT%H%M%S.%f")))
    for path in sorted(journals.glob("*.jsonl")) if journals.is_dir() else []:
        if path.resolve() in unfinished:
            candidates.append((path, "journal", _saved_at(path, _BATCH_TIME, "%Y%m%dT%H%M%S")))

    rows: list[dict[str, Any]] = []
    refused = 0
    for path, kind, saved in sorted(candidates, key=lambda c: (c[2], str(c[0]))):
        if saved >= cutoff:
            continue
        batch = unfinished.get(path.resolve())
        if batch is not None:
            refused += 1
            action = f"kept: unfinished batch {batch}"
        elif dry_run:
            action = "would remove"
        else:
            path.unlink(missing_ok=True)
            _remove_empty(path.parent, stop=tenant_folder)
            action = "removed"
        rows.append({"path": str(path), "kind": kind, "saved_at": saved, "action": action})
    return _frame(rows, refused)


def _frame(rows: list[dict[str, Any]], refused: int) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=list(PRUNE_COLUMNS)).astype(
        {"path": "string", "kind": "string", "saved_at": "datetime64[ns, UTC]",
         "action": "string"}
    )  # fmt: skip
    frame.attrs["refused"] = refused
    return frame


def _saved_at(path: Path, pattern: re.Pattern[str], layout: str) -> _dt.datetime:
    """When a file was saved: the UTC time in its name, else its modification time."""
    match = pattern.match(path.name)
    if match:
        try:
            return _dt.datetime.strptime(match.group(1), layout).replace(tzinfo=_dt.UTC)
        except ValueError:
            pass
    return _dt.datetime.fromtimestamp(path.stat().st_mtime, _dt.UTC)


def _remove_empty(folder: Path, *, stop: Path) -> None:
    """Remove ``folder`` and its parents up to (not including) ``stop`` while empty."""
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return  # not empty (or not ours to remove)
        folder = folder.parent
