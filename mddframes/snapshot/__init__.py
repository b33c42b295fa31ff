"""Snapshots: a whole system as a folder of Parquet files, read back as frames, compared.

:func:`snapshot` writes one (bounded memory, crash safe); :func:`read_snapshot` opens
one as a :class:`~mddframes.snapshot.reader.Snapshot`; :func:`diff_snapshots` says what
changed between two snapshots or between a snapshot and the service. The layout is in
:mod:`mddframes.snapshot.layout` and docs/guide/snapshots.md.

pyarrow is a dependency of mddframes, imported only when these functions are called (so
``import mddframes`` stays quick); where it cannot be imported, calling one raises a
:class:`~mddframes.errors.MissingDependencyError` naming the extra that installs it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from mddframes.doc_sections import documented
from mddframes.errors import InvalidArgumentError

if TYPE_CHECKING:
    from mddframes.api import Api
    from mddframes.snapshot.diff import SnapshotDiff
    from mddframes.snapshot.history import History
    from mddframes.snapshot.reader import Snapshot
    from mddframes.tables_as_code.plan import Plan

__all__ = [
    "History",
    "Snapshot",
    "SnapshotDiff",
    "diff_snapshots",
    "read_history",
    "read_review_excel",
    "read_snapshot",
    "snapshot",
]


@documented
def snapshot(
    api: Api,
    system: str,
    path: str | os.PathLike[str] | None = None,
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    structures: bool = True,
    history: str | os.PathLike[str] | None = None,
) -> Snapshot:
    """Write a whole system to a folder of Parquet files that DuckDB, polars and Spark read.

    The tree (``tree.parquet``), every element's record (``structures.parquet``), every
    table and mapping (under ``tables/`` and ``mappings/``: the objects of the same
    columns share a file, a row group per chunk read), the object types and the open packages,
    and ``manifest.json`` (service, system, time, each object's digest, row count, file
    and row group, the objects that failed), written last. Each object is written as
    soon as its chunk is read, a few chunks read ahead, so memory follows the largest
    objects, not the system. Everything goes into a hidden ``.DIR.partial`` folder
    renamed to ``DIR`` at the end: an interrupted snapshot leaves no ``DIR``, and the
    next run into ``DIR`` keeps the files the interrupted one finished (listed in its
    journal, their SHA-256 checked) and reads only the objects not in them.

    Parameters
    ----------
    {api}
    system : str
        The system to snapshot.
    path : str or os.PathLike, optional
        The snapshot folder; it must not exist yet (or be empty). An interrupted
        snapshot into it is resumed. Give either ``path`` or ``history``.
    {max_workers}
    {progress}
    structures : bool, default True
        Read every element's record (one request per element); ``False`` leaves
        ``structures.parquet`` out (the tree keeps each element's main fields).
    history : str or os.PathLike, optional
        A history store (made on its first version): the snapshot is added to it as its
        next version, stored at the cost of what changed since the latest version (see
        :class:`~mddframes.snapshot.history.History`). One writer at a time: a second
        waits for the first (up to the ``lock_timeout`` setting). An interrupted add
        leaves no version and is resumed by the next.

    Returns
    -------
    Snapshot
        The snapshot written (``.failures`` lists the objects that could not be read);
        with ``history``, the version added.

    Raises
    ------
    InvalidArgumentError
        ``path`` exists and is not an empty folder, neither or both of ``path`` and
        ``history`` are given, or pyarrow is not installed.
    LockTimeoutError
        Another writer held the history store longer than ``lock_timeout``.
    MddError
        The tree, object types or packages could not be read (nothing is left at ``path``).

    Examples
    --------
    >>> snap = client.snapshot("DWH", "snapshots/2026-11-25", progress=False)
    >>> snap.failures.empty
    True
    """
    from mddframes.snapshot import arrow_columns  # noqa: F401 - the clear error without pyarrow
    from mddframes.snapshot.reader import Snapshot
    from mddframes.snapshot.writer import write_snapshot

    if (path is None) == (history is None):
        raise InvalidArgumentError("snapshot: give either a folder (path) or history=, not both")
    if history is not None:
        from mddframes.snapshot.history import History
        from mddframes.snapshot.history_add import add_version

        number = add_version(api, system, history, max_workers=max_workers, progress=progress,
                             structures=structures)  # fmt: skip
        return History(history).as_of(number)
    assert path is not None  # for mypy: checked above
    write_snapshot(api, system, path, max_workers=max_workers, progress=progress,
                   structures=structures)  # fmt: skip
    return Snapshot(path)


def read_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """Open a snapshot folder: its frames back, as the readers returned them then.

    Parameters
    ----------
    path : str or os.PathLike
        The folder :func:`snapshot` wrote.

    Returns
    -------
    Snapshot
        ``read_tree()``, ``read_table(id)``, ``read_mapping(id)``, ``read_structures()``,
        ``read_object_types()``, ``read_packages()``, ``objects``, ``failures``: each
        frame equal (``assert_frame_equal``) to what the reader returned at snapshot time.

    Raises
    ------
    InvalidArgumentError
        No complete snapshot there (no manifest), or pyarrow is not installed.

    Examples
    --------
    >>> _ = snapshot(client.api, "LAB", "snapshots/lab", progress=False)
    >>> snap = read_snapshot("snapshots/lab")
    >>> tree = snap.read_tree()  # the frame read_tree returned then
    """
    from mddframes.snapshot import arrow_columns  # noqa: F401 - the clear error without pyarrow
    from mddframes.snapshot.reader import Snapshot

    return Snapshot(path)


@documented
def diff_snapshots(
    old: Snapshot | str | os.PathLike[str],
    new: Snapshot | str | os.PathLike[str] | Api,
    *,
    cells: bool = True,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> SnapshotDiff:
    """What changed since a snapshot: in a newer snapshot, or in the service now.

    Tables and mappings are compared by digest (equal digests, equal content),
    elements by their row of the tree; for each changed table and mapping the changed
    cells, added and deleted rows come from the codec's ``diff_payloads``.

    Parameters
    ----------
    old : Snapshot or path
        The earlier snapshot.
    new : Snapshot, path or Api
        A later snapshot of the same system, or the raw layer (``client.api``) to
        compare with what the service holds now (each table and mapping is fetched
        once for its digest).
    cells : bool, default True
        List the changed cells of changed tables and mappings too.
    {max_workers}
    progress : bool, optional
        Show a progress bar while the service is read: by default only on a terminal or in Jupyter.

    Returns
    -------
    SnapshotDiff
        ``objects``: kind, id, change (added/removed/changed), old/new digest and rows;
        ``cells``: kind, id, change (cell, row added, row deleted, envelope), row,
        column, old, new.

    Examples
    --------
    >>> _ = snapshot(client.api, "LAB", "snapshots/lab", progress=False, structures=False)
    >>> changes = diff_snapshots("snapshots/lab", client.api, progress=False)
    >>> changes.empty  # nothing changed since
    True
    """
    from mddframes.snapshot import arrow_columns  # noqa: F401 - the clear error without pyarrow
    from mddframes.snapshot.diff import compare_snapshots as compare

    return compare(old, new, cells=cells, max_workers=max_workers, progress=progress)


def read_history(path: str | os.PathLike[str]) -> History:
    """Open a history store: its versions, any version as a snapshot, what changed.

    Parameters
    ----------
    path : str or os.PathLike
        The store ``snapshot(..., history=path)`` adds versions to.

    Returns
    -------
    History
        ``list_versions()``, ``as_of(when)``, ``read_changes(since, until)``,
        ``cell_history(table_id, row_key, column)``, ``object_history(id)``.

    Raises
    ------
    InvalidArgumentError
        No history store there, or pyarrow is not installed.

    Examples
    --------
    >>> _ = snapshot(client.api, "LAB", progress=False, structures=False, history="lab-history")
    >>> read_history("lab-history").list_versions()["version"].tolist()
    [1]
    """
    from mddframes.snapshot import arrow_columns  # noqa: F401 - the clear error without pyarrow
    from mddframes.snapshot.history import History

    return History(path)


def read_review_excel(
    api: Api, path: str | os.PathLike[str], *, folder: str | os.PathLike[str] | None = None
) -> Plan:
    """A reviewed change-review workbook's ``revert`` decisions as a plan for the service.

    Each object with reverted lines is read from the service, its reverted cells set
    back to their old values, and written to ``folder`` as a tables-as-code file; the
    folder is planned (:func:`~mddframes.tables_as_code.plan.plan_folder`), so
    :func:`~mddframes.tables_as_code.apply.apply_plan` writes it with the checks,
    backups, journal and read-back of every write. An object whose reverted cell no
    longer holds the value the review showed is ``refused`` in the plan (and a plan
    with a refused object is not applied).

    Parameters
    ----------
    api : Api
        The raw layer of a client of the service (``client.api``).
    path : str or os.PathLike
        The workbook :meth:`History.to_review_excel` wrote, decisions set.
    folder : str or os.PathLike, optional
        Where the reverted objects' files go (a new or empty folder); by default
        ``<workbook name>-reverts`` beside the workbook.

    Returns
    -------
    Plan
        One object per reverted table or mapping; ``exit_code`` as ``plan``'s.

    Raises
    ------
    InvalidArgumentError
        Not a review workbook, or ``folder`` is not empty.
    DataShapeError
        A decision other than keep or revert, or a revert of a line that is not a cell.
    """
    from mddframes.snapshot.history_review import read_review

    return read_review(api, path, folder)


def __getattr__(name: str) -> Any:
    # the classes, imported (with pyarrow) only when asked for
    if name == "History":
        from mddframes.snapshot.history import History

        return History
    if name == "Snapshot":
        from mddframes.snapshot.reader import Snapshot

        return Snapshot
    if name == "SnapshotDiff":
        from mddframes.snapshot.diff import SnapshotDiff

        return SnapshotDiff
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
