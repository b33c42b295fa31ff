"""History: a history store read back: its versions, any version as a snapshot, what changed.

The store's layout and how a version is added are in
:mod:`mddframes.snapshot.history_store`; the guide is docs/guide/history.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from mddframes.codec.align import primary_key_columns
from mddframes.codec.diff import diff_payloads
from mddframes.codec.frame import declared_columns
from mddframes.codec.kinds import Kind
from mddframes.codec.values import strict_equal
from mddframes.errors import InvalidArgumentError, NotFoundError
from mddframes.snapshot.diff import (
    SnapshotDiff,
    SnapshotSide,
    cell_lines,
    diff_of,
    element_changes,
    object_change,
)
from mddframes.snapshot.history_store import (
    VERSION_KEY,
    check_store,
    read_version_entries,
    read_version_manifest,
    version_file,
    version_numbers,
)
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
        check_store(self.path)

    def __repr__(self) -> str:
        numbers = version_numbers(self.path)
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
        import json

        rows = []
        for number in version_numbers(self.path):
            parquet = pq.ParquetFile(self.path / version_file(number))
            manifest = json.loads((parquet.schema_arrow.metadata or {})[VERSION_KEY])
            kinds = parquet.read(columns=["kind"]).column("kind").to_pylist()
            rows.append({
                "version": number, "taken_at": manifest["started_at"],
                "finished_at": manifest["finished_at"], "system": manifest["system"],
                "tables": kinds.count("table"), "mappings": kinds.count("mapping"),
                "failures": len(manifest["failures"]),
            })  # fmt: skip
        frame = pd.DataFrame(rows, columns=list(VERSION_COLUMNS))
        for name in ("taken_at", "finished_at"):
            frame[name] = pd.to_datetime(frame[name], utc=True, format="ISO8601")
        return frame.astype({"version": "int64", "system": "string", "tables": "int64",
                             "mappings": "int64", "failures": "int64"})  # fmt: skip

    def _times(self) -> list[tuple[int, pd.Timestamp]]:
        frame = self.list_versions()
        return list(zip(frame["version"].tolist(), frame["taken_at"].tolist(), strict=True))

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
        times = self._times()
        if isinstance(when, bool):
            raise InvalidArgumentError(f"{when!r} is neither a version number nor a time")
        if isinstance(when, int):
            if when not in {n for n, _ in times}:
                raise NotFoundError(f"the history {str(self.path)!r} has no version {when} "
                                    f"(it has {_range_text(times)})")  # fmt: skip
            return when
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
        number = self.version_at(when)
        return Snapshot(self.path, manifest=read_version_manifest(self.path, number))

    # -- changes ---------------------------------------------------------------------------

    def _span(self, since: When | None, until: When | None) -> list[int]:
        """The versions from the one in force at ``since`` to the one at ``until``."""
        numbers = version_numbers(self.path)
        if not numbers:
            return []
        first = numbers[0] if since is None else self._version_or_first(since, numbers)
        last = numbers[-1] if until is None else self.version_at(until)
        return [n for n in numbers if first <= n <= last]

    def _version_or_first(self, since: When, numbers: list[int]) -> int:
        try:
            return self.version_at(since)
        except NotFoundError:
            if isinstance(since, int) and not isinstance(since, bool):
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
        times = dict(self._times())
        wanted_ids = None if ids is None else {str(i) for i in ids}
        previous: tuple[int, list[dict[str, Any]]] | None = None
        for number in span:
            entries = read_version_entries(self.path, number)
            if previous is not None:
                diff = self._pair(previous, (number, entries), kind, wanted_ids, cells)
                if not diff.empty:
                    yield _stamped(diff, number, times[number])
            previous = (number, entries)

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

    def _pair(
        self,
        old: tuple[int, list[dict[str, Any]]],
        new: tuple[int, list[dict[str, Any]]],
        kind: str | None,
        ids: set[str] | None,
        cells: bool,
    ) -> SnapshotDiff:
        """What one version changed from the one before it."""
        before = {(e["kind"], e["id"]): e for e in old[1]}
        after = {(e["kind"], e["id"]): e for e in new[1]}
        lines: list[dict[str, Any]] = []
        cell_frames: list[pd.DataFrame] = []
        old_snap: Snapshot | None = None
        new_snap: Snapshot | None = None
        if kind in (None, "element") and before.get(("tree", None), {}).get("file") != after.get(
            ("tree", None), {}
        ).get("file"):
            old_snap, new_snap = self._snapshot(old[0]), self._snapshot(new[0])
            element_lines = element_changes(old_snap.read_tree(), new_snap.read_tree())
            lines += [line for line in element_lines if ids is None or line["id"] in ids]
        for object_kind in ("table", "mapping"):
            if kind not in (None, object_kind):
                continue
            keys = [k for k in dict.fromkeys([*before, *after]) if k[0] == object_kind]
            for key in keys:
                if ids is not None and key[1] not in ids:
                    continue
                a, b = before.get(key), after.get(key)
                change = object_change(
                    a and (a["digest"], a["rows"]), b and (b["digest"], b["rows"])
                )
                if change is None:
                    continue
                lines.append({
                    "kind": object_kind, "id": key[1], "change": change,
                    "old_digest": a and a["digest"], "new_digest": b and b["digest"],
                    "old_rows": a and a["rows"], "new_rows": b and b["rows"],
                })  # fmt: skip
                if cells and change == "changed":
                    old_snap = old_snap or self._snapshot(old[0])
                    new_snap = new_snap or self._snapshot(new[0])
                    object_kind_: Kind = "table" if object_kind == "table" else "mapping"
                    diff = diff_payloads(
                        SnapshotSide(old_snap).payload(object_kind_, key[1]),
                        SnapshotSide(new_snap).payload(object_kind_, key[1]),
                        kind=object_kind_,
                    )
                    cell_frames.append(cell_lines(object_kind_, key[1], diff))
        return diff_of(lines, cell_frames)

    def _snapshot(self, number: int) -> Snapshot:
        return Snapshot(self.path, manifest=read_version_manifest(self.path, number))

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
        object_id = str(object_id)
        first = version_numbers(self.path)[:1]
        rows: list[dict[str, Any]] = []
        for number in first:  # what the first version holds of it: its "added" line
            for entry in read_version_entries(self.path, number):
                if entry["id"] == object_id:
                    rows.append({"version": number, "kind": entry["kind"], "change": "added",
                                 "digest": entry["digest"], "rows": entry["rows"],
                                 "changed_cells": 0})  # fmt: skip
            if not rows and object_id in set(self._snapshot(number).read_tree()["id"]):
                rows.append({"version": number, "kind": "element", "change": "added",
                             "digest": None, "rows": None, "changed_cells": 0})  # fmt: skip
        changes = self.read_changes(ids=[object_id])
        counts = (
            changes.cells.groupby(["version", "kind"]).size().to_dict()
            if len(changes.cells)
            else {}
        )
        for line in changes.objects.to_dict("records"):
            rows.append({"version": line["version"], "kind": line["kind"],
                         "change": line["change"], "digest": line["new_digest"],
                         "rows": line["new_rows"],
                         "changed_cells": counts.get((line["version"], line["kind"]), 0)})  # fmt: skip
        if not rows:
            raise NotFoundError(f"no version of the history {str(self.path)!r} holds {object_id!r}")
        frame = pd.DataFrame(rows)
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
        return _identity(self.path, str(table_id), list(self._table_versions(str(table_id))))

    def _table_versions(self, table_id: str) -> Iterator[tuple[int, pd.DataFrame, dict[str, Any]]]:
        """Each version holding the table, its frame and envelope; a frame read once per
        distinct content (versions of the same digest share it)."""
        last: tuple[str, pd.DataFrame, dict[str, Any]] | None = None
        for number in version_numbers(self.path):
            entries = read_version_entries(self.path, number, kind="table", object_id=table_id)
            if not entries:
                continue
            entry = entries[0]
            if last is None or last[0] != entry["digest"]:
                # a reader of this one object: the version's other entries are not read
                snap = Snapshot(self.path, manifest={"objects": [{**entry, "kind": "table"}]})
                last = (
                    entry["digest"],
                    snap.read_table(table_id),
                    snap.envelope("table", table_id),
                )
            yield number, last[1], last[2]

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
        versions = list(self._table_versions(str(table_id)))
        identity, keys = _identity(self.path, str(table_id), versions)
        times = dict(self._times())
        rows: list[dict[str, Any]] = []
        previous: Any = object()
        for number, frame, _envelope in versions:
            value, present = _cell(frame, keys, row_key, column)
            changed = bool(rows) and not _same(previous, value)
            rows.append({"version": number, "taken_at": times[number], "value": value,
                         "present": present, "changed": changed})  # fmt: skip
            previous = value
        out = pd.DataFrame(rows, columns=["version", "taken_at", "value", "present", "changed"])
        out["taken_at"] = pd.to_datetime(out["taken_at"], utc=True)
        out = out.astype({"version": "int64", "value": object, "present": "bool",
                          "changed": "bool"})  # fmt: skip
        out.attrs["row_identity"] = f"{identity} {keys}" if keys else identity
        return out


def _identity(
    path: Path, table_id: str, frames: list[tuple[int, pd.DataFrame, dict[str, Any]]]
) -> tuple[str, list[str]]:
    """:meth:`History.row_identity` from the table's versions (frame and envelope each)."""
    if not frames:
        raise NotFoundError(f"no version of the history {str(path)!r} holds table {table_id!r}")
    declared = primary_key_columns(declared_columns(frames[-1][2], "table"))
    if declared:
        return "declared key", declared
    first = frames[0][1]
    for column in first.columns:
        if all(column in f.columns and f[column].notna().all() and f[column].is_unique
               for _n, f, _e in frames):  # fmt: skip
            return "inferred key", [str(column)]
    return "position", []


def _cell(frame: pd.DataFrame, keys: list[str], row_key: Any, column: str) -> tuple[Any, bool]:
    if column not in frame.columns:
        return None, False
    if not keys:
        if not isinstance(row_key, int) or not 0 <= row_key < len(frame):
            return None, False
        value = frame[column].iloc[row_key]
    else:
        wanted = row_key if isinstance(row_key, tuple) else (row_key,)
        if len(wanted) != len(keys):
            raise InvalidArgumentError(f"row_key {row_key!r} must give a value for each key "
                                       f"column {keys}")  # fmt: skip
        match = pd.Series(True, index=frame.index)
        for name, value in zip(keys, wanted, strict=True):
            match &= frame[name].astype(object) == value
        hits = frame.index[match.to_numpy(dtype=bool)]
        if len(hits) == 0:
            return None, False
        value = frame.at[hits[0], column]
    return (None if _missing(value) else _python(value)), True


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _python(value: Any) -> Any:
    return value.item() if hasattr(value, "item") and not isinstance(value, pd.Timestamp) else value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, pd.Timestamp) or isinstance(b, pd.Timestamp):
        return bool(a == b)
    return strict_equal(a, b)


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
