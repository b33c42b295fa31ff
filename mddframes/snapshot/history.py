"""History: a history store read back: its versions, any version as a snapshot, what changed.

The store's layout and how a version is added are in
:mod:`mddframes.snapshot.history_store`; the guide is docs/guide/history.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterator
from numbers import Integral
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mddframes.errors import InvalidArgumentError, NotFoundError
from mddframes.snapshot.diff import (
    SnapshotDiff,
    diff_of,
    object_change,
    tree_rows,
)
from mddframes.snapshot.history_cells import (
    cell_value,
    changed_cells,
    element_step,
    identity,
    object_lines,
    same_value,
    table_versions,
)
from mddframes.snapshot.history_log import (
    OBJECT_KINDS,
    HistorySnapshot,
    fold_objects,
    log_numbers,
    manifest_as_of,
    objects_as_of,
    read_log,
    version_document,
)
from mddframes.snapshot.history_store import store_version
from mddframes.snapshot.reader import Snapshot

#: The columns of :meth:`History.list_versions`.
VERSION_COLUMNS = ("version", "taken_at", "finished_at", "system", "tables", "mappings", "failures")
#: What ``since``/``until`` may say as a span back from now: ``7d``, ``12h``, ``30m``, ``2w``.
_SPAN = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_SPAN_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}

#: A moment or version: a version number, a time (``str``, ``datetime``, ``Timestamp``;
#: a time without a zone is UTC) or a span back from now (``"7d"``).
When = int | str | _dt.datetime | pd.Timestamp


class History:
    """A history store, read: each version a snapshot, and what changed between them.

    Parameters
    ----------
    path : str or os.PathLike
        The store (``snapshot(..., history=path)`` adds its versions).

    Raises
    ------
    InvalidArgumentError
        ``path`` holds no history store.

    Examples
    --------
    >>> _ = client.snapshot("LAB", progress=False, structures=False, history="history")
    >>> history = History("history")
    >>> history.list_versions()["version"].tolist()
    [1]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if store_version(self.path) == 1:
            from mddframes.snapshot.history_upgrade import upgrade

            upgrade(self.path)  # once: the store is of format 2 from then on

    def __repr__(self) -> str:
        numbers = log_numbers(self.path)
        return f"History({str(self.path)!r}, versions={len(numbers)})"

    # -- versions ------------------------------------------------------------------------

    def list_versions(self) -> pd.DataFrame:
        """One row per version, oldest first.

        Returns
        -------
        pandas.DataFrame
            ``version``, ``taken_at`` (when the snapshot's reading began, UTC),
            ``finished_at``, ``system``, ``tables``, ``mappings``, ``failures``.
        """
        rows = []
        for number in log_numbers(self.path):
            manifest = version_document(self.path, number)
            rows.append({
                "version": number, "taken_at": manifest["started_at"],
                "finished_at": manifest["finished_at"], "system": manifest["system"],
                "tables": manifest["counts"]["table"], "mappings": manifest["counts"]["mapping"],
                "failures": len(manifest["failures"]),
            })  # fmt: skip
        frame = pd.DataFrame(rows, columns=list(VERSION_COLUMNS))
        for name in ("taken_at", "finished_at"):
            frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601")
        return frame.astype({"version": "int64", "system": "string", "tables": "int64",
                             "mappings": "int64", "failures": "int64"})  # fmt: skip

    def _times(self) -> list[tuple[int, pd.Timestamp]]:
        """Each version and its time (from the log files' footers: no column is read)."""
        numbers = log_numbers(self.path)
        taken = [version_document(self.path, n)["started_at"] for n in numbers]
        times = pd.to_datetime(pd.Series(taken, dtype=object), utc=True, format="ISO8601")
        return list(zip(numbers, times.tolist(), strict=True))

    def version_at(self, when: When) -> int:
        """The version ``when`` names: itself if a number, else the last taken by then.

        Parameters
        ----------
        when : int, str, datetime or pandas.Timestamp
            A version number, a time (without a zone: UTC), or a span back from now
            (``"7d"``, ``"12h"``, ``"30m"``, ``"2w"``).

        Returns
        -------
        int
            The version.

        Raises
        ------
        NotFoundError
            No such version, or none was taken by then.
        """
        when = _version_number_or_time(when)
        if isinstance(when, int) and when in log_numbers(self.path):
            return when  # no time needed: the log's file names
        times = self._times()
        if isinstance(when, int):
            raise NotFoundError(f"the history {str(self.path)!r} has no version {when} "
                                f"(it has {_range_text(times)})")  # fmt: skip
        moment = to_moment(when)
        taken = [n for n, t in times if t <= moment]
        if not taken:
            raise NotFoundError(f"the history {str(self.path)!r} has no version taken by "
                                f"{moment.isoformat()} (it has {_range_text(times)})")  # fmt: skip
        return taken[-1]

    def as_of(self, when: When) -> Snapshot:
        """The snapshot of one version: what the system held then.

        Parameters
        ----------
        when : int, str, datetime or pandas.Timestamp
            As :meth:`version_at` takes it: a version, or the last version taken by then.

        Returns
        -------
        Snapshot
            Its ``read_table``, ``read_tree``... give the frames read at that version.

        Raises
        ------
        NotFoundError
            No version then.
        """
        return self._snapshot(self.version_at(when))

    # -- changes ---------------------------------------------------------------------------

    def _span(self, since: When | None, until: When | None) -> list[int]:
        """The versions from the one in force at ``since`` to the one at ``until``."""
        numbers = log_numbers(self.path)
        if not numbers:
            return []
        first = numbers[0] if since is None else self._version_or_first(since, numbers)
        last = numbers[-1] if until is None else self.version_at(until)
        return [n for n in numbers if first <= n <= last]

    def _version_or_first(self, since: When, numbers: list[int]) -> int:
        try:
            return self.version_at(since)
        except NotFoundError:
            if isinstance(_version_number_or_time(since), int):
                raise
            return numbers[0]  # since before the first version: from the first on

    def read_changes_by_version(
        self,
        since: When | None = None,
        until: When | None = None,
        *,
        kind: str | None = None,
        ids: list[str] | None = None,
        cells: bool = True,
    ) -> Iterator[SnapshotDiff]:
        """What each version changed, one version at a time (bounded memory).

        Parameters
        ----------
        since : int, str, datetime or pandas.Timestamp, optional
            Where to begin, as :meth:`read_changes` takes it.
        until : int, str, datetime or pandas.Timestamp, optional
            Where to end, as :meth:`read_changes` takes it.
        kind : {"element", "table", "mapping"}, optional
            Only changes of this kind of object.
        ids : list of str, optional
            Only changes of these ids.
        cells : bool, default True
            List the changed cells of changed tables and mappings too.

        Yields
        ------
        SnapshotDiff
            Per version with changes: its ``objects`` and ``cells`` frames, each led by
            ``version`` and ``taken_at``.
        """
        span = self._span(since, until)
        if len(span) < 2:
            return
        times = dict(self._times())
        wanted = None if ids is None else {str(i) for i in ids}
        objects = objects_as_of(self.path, span[0])
        elements = None
        if kind in (None, "element"):
            elements = tree_rows(self._snapshot(span[0]).read_tree())
        for number in span[1:]:
            rows = read_log(self.path, number, since=number)
            lines: list[dict[str, Any]] = []
            if elements is not None:
                lines += element_step(self.path, elements, rows, wanted)
            object_lines_, cell_frames = self._object_step(objects, rows, kind, wanted, cells)
            diff = diff_of(lines + object_lines_, cell_frames)
            if not diff.empty:
                yield _stamped(diff, number, times[number])

    def read_changes(
        self,
        since: When | None = None,
        until: When | None = None,
        *,
        kind: str | None = None,
        ids: list[str] | None = None,
        cells: bool = True,
    ) -> SnapshotDiff:
        """What changed from the version in force at ``since`` to the one at ``until``.

        Parameters
        ----------
        since : int, str, datetime or pandas.Timestamp, optional
            Where to begin (a version, a time or a span back, as :meth:`version_at`
            takes it); by default the first version.
        until : int, str, datetime or pandas.Timestamp, optional
            Where to end; by default the latest version.
        kind : {"element", "table", "mapping"}, optional
            Only changes of this kind of object.
        ids : list of str, optional
            Only changes of these ids.
        cells : bool, default True
            List the changed cells of changed tables and mappings too.

        Returns
        -------
        SnapshotDiff
            ``diff_snapshots``'s frames over each version in the range, each row led by
            the ``version`` that made the change and its ``taken_at``.
        """
        parts = list(self.read_changes_by_version(since, until, kind=kind, ids=ids, cells=cells))
        if not parts:
            return _stamped(diff_of([], []), None, pd.NaT)
        return SnapshotDiff(
            objects=pd.concat([p.objects for p in parts], ignore_index=True),
            cells=pd.concat([p.cells for p in parts], ignore_index=True),
        )

    def _object_step(
        self,
        objects: dict[tuple[str, str], dict[str, Any]],
        rows: list[dict[str, Any]],
        kind: str | None,
        ids: set[str] | None,
        cells: bool,
    ) -> tuple[list[dict[str, Any]], list[pd.DataFrame]]:
        """What one version's log rows changed of the tables and mappings (``objects``,
        as of the version before, brought to this one)."""
        lines: list[dict[str, Any]] = []
        cell_frames: list[pd.DataFrame] = []
        for row in rows:
            if row["kind"] not in OBJECT_KINDS:
                continue
            key = (row["kind"], row["id"])
            a = objects.get(key)
            b = None if row["removed"] else row
            fold_objects(objects, [row])
            if kind not in (None, row["kind"]) or (ids is not None and row["id"] not in ids):
                continue
            change = object_change(a and (a["digest"], a["rows"]), b and (b["digest"], b["rows"]))
            if change is None:
                continue
            lines.append({
                "kind": row["kind"], "id": row["id"], "change": change,
                "old_digest": a and a["digest"], "new_digest": b and b["digest"],
                "old_rows": a and a["rows"], "new_rows": b and b["rows"],
            })  # fmt: skip
            if cells and change == "changed" and a is not None and b is not None:
                cell_frames.append(changed_cells(self.path, a, b))
        return lines, cell_frames

    def _snapshot(self, number: int) -> Snapshot:
        return HistorySnapshot(self.path, manifest=manifest_as_of(self.path, number))

    # -- review ------------------------------------------------------------------------

    def to_review_excel(
        self, since: When | None, until: When | None, path: str | os.PathLike[str]
    ) -> Path:
        """A change-review workbook of the tables and mappings changed in a range.

        One sheet per changed object: a line per change (version, time, row, its key,
        column, old and new side by side, the new value highlighted) and a ``decision``
        column to set to ``revert`` (a drop-down: keep or revert). Only changed cells can
        be reverted; added and deleted rows are listed for reading.
        :func:`~mddframes.snapshot.read_review_excel` turns the decisions into a plan.

        Parameters
        ----------
        since : int, str, datetime or pandas.Timestamp, optional
            As :meth:`read_changes` takes it (None: from the first version).
        until : int, str, datetime or pandas.Timestamp, optional
            As :meth:`read_changes` takes it (None: to the latest).
        path : str or os.PathLike
            The ``.xlsx`` file to write.

        Returns
        -------
        pathlib.Path
            The workbook written.
        """
        from mddframes.snapshot.history_review import write_review

        return write_review(self, since, until, Path(path))

    # -- one object, one cell ---------------------------------------------------------------

    def object_history(self, object_id: str) -> pd.DataFrame:
        """Every version that added, changed or removed one table, mapping or element.

        Parameters
        ----------
        object_id : str
            A table, mapping or element id.

        Returns
        -------
        pandas.DataFrame
            ``version``, ``taken_at``, ``kind``, ``change`` (added, changed, removed),
            ``digest``, ``rows`` (tables and mappings), ``changed_cells``.

        Raises
        ------
        NotFoundError
            No version holds an object of that id.
        """
        rows = object_lines(self.path, str(object_id))
        if not rows:
            raise NotFoundError(f"no version of the history {str(self.path)!r} holds {object_id!r}")
        frame = pd.DataFrame(rows).sort_values("version", kind="stable", ignore_index=True)
        times = dict(self._times())
        frame.insert(1, "taken_at", pd.to_datetime([times[v] for v in frame["version"]], utc=True))
        frame = frame.replace({pd.NA: None})
        return frame.astype({"version": "int64", "kind": "string", "change": "string",
                             "digest": "string", "rows": "Int64",
                             "changed_cells": "int64"})  # fmt: skip

    def row_identity(self, table_id: str) -> tuple[str, list[str]]:
        """How rows of a table are told apart across versions, and by which columns.

        Parameters
        ----------
        table_id : str
            A table of the history.

        Returns
        -------
        (str, list of str)
            ``("declared key", columns)``: its declared primary key; ``("inferred key",
            [column])``: the first column whose values are present and unique in every
            version that holds the table; ``("position", [])``: neither, rows by position.
        """
        table_id = str(table_id)
        return identity(self.path, table_id, list(table_versions(self.path, table_id)))

    def cell_history(self, table_id: str, row_key: Any, column: str) -> pd.DataFrame:
        """One cell of a table in every version that holds the table.

        Parameters
        ----------
        table_id : str
            The table.
        row_key : object
            The row: its key's value (a tuple for a key of several columns) when the
            table has a key (:meth:`row_identity` says which), else its position.
        column : str
            The column.

        Returns
        -------
        pandas.DataFrame
            ``version``, ``taken_at``, ``value`` (None where the row or column is
            absent), ``present`` (the row and column exist), ``changed`` (differs from
            the version before). ``attrs["row_identity"]`` says how the row was found.
        """
        versions = list(table_versions(self.path, str(table_id)))
        how, keys = identity(self.path, str(table_id), versions)
        times = dict(self._times())
        rows: list[dict[str, Any]] = []
        previous: Any = object()
        found: tuple[pd.DataFrame, tuple[Any, bool]] | None = None
        for number, frame, _envelope in versions:
            if found is None or found[0] is not frame:  # a frame is shared while unchanged
                found = frame, cell_value(frame, keys, row_key, column)
            value, present = found[1]
            changed = bool(rows) and not same_value(previous, value)
            rows.append({"version": number, "taken_at": times[number], "value": value,
                         "present": present, "changed": changed})  # fmt: skip
            previous = value
        out = pd.DataFrame(rows, columns=["version", "taken_at", "value", "present", "changed"])
        out["taken_at"] = pd.to_datetime(out["taken_at"], utc=True)
        out = out.astype({"version": "int64", "value": object, "present": "bool",
                          "changed": "bool"})  # fmt: skip
        out.attrs["row_identity"] = f"{how} {keys}" if keys else how
        return out


def _version_number_or_time(when: Any) -> Any:
    """``when`` with any whole number (numpy's too: what ``list_versions()["version"]``
    holds) as a plain ``int``, a version; refused if it is a boolean."""
    if isinstance(when, (bool, np.bool_)):
        raise InvalidArgumentError(f"{when!r} is neither a version number nor a time")
    if isinstance(when, Integral):
        return int(when)
    return when


def to_moment(when: str | _dt.datetime | pd.Timestamp) -> pd.Timestamp:
    """A time, or a span back from now (``"7d"``), as a UTC timestamp.

    Parameters
    ----------
    when : str, datetime or pandas.Timestamp
        A time (without a zone: UTC) or a span: ``"30m"``, ``"12h"``, ``"7d"``, ``"2w"``.

    Returns
    -------
    pandas.Timestamp
        In UTC.

    Raises
    ------
    InvalidArgumentError
        Neither a time nor a span.

    Examples
    --------
    >>> to_moment("2026-11-25T10:00")
    Timestamp('2026-11-25 10:00:00+0000', tz='UTC')
    """
    if isinstance(when, str) and (match := _SPAN.match(when)):
        span = _dt.timedelta(**{_SPAN_UNITS[match.group(2)]: int(match.group(1))})
        return pd.Timestamp.now(tz="UTC") - span
    try:
        moment = pd.Timestamp(when)
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(
            f"{when!r} is neither a version number, a time nor a span back such as '7d'"
        ) from exc
    if pd.isna(moment):
        raise InvalidArgumentError(f"{when!r} names no time")
    return moment.tz_convert("UTC") if moment.tzinfo else moment.tz_localize("UTC")


def _range_text(times: list[tuple[int, pd.Timestamp]]) -> str:
    if not times:
        return "no version"
    (a, ta), (b, tb) = times[0], times[-1]
    return f"versions {a}..{b}, taken {ta.isoformat()} .. {tb.isoformat()}"


def _stamp(frame: pd.DataFrame, number: int | None, taken: Any) -> pd.DataFrame:
    frame = frame.copy()
    count = len(frame)
    frame.insert(0, "taken_at", pd.Series([taken] * count, index=frame.index,
                                          dtype="datetime64[ns, UTC]"))  # fmt: skip
    frame.insert(0, "version", pd.Series([number] * count, index=frame.index, dtype="Int64"))
    return frame


def _stamped(diff: SnapshotDiff, number: int | None, taken: Any) -> SnapshotDiff:
    return SnapshotDiff(objects=_stamp(diff.objects, number, taken),
                        cells=_stamp(diff.cells, number, taken))  # fmt: skip
