"""One object of a history store through its versions: the versions that touched it only.

The log (:mod:`mddframes.snapshot.history_log`) is read filtered by the object's id, so
``cell_history`` and ``object_history`` read the versions that changed the object, not
every version; a frame is read once per distinct content.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from mddframes.codec.align import primary_key_columns
from mddframes.codec.diff import diff_payloads
from mddframes.codec.frame import declared_columns
from mddframes.codec.kinds import Kind
from mddframes.codec.values import strict_equal
from mddframes.errors import InvalidArgumentError, NotFoundError
from mddframes.snapshot.arrow_columns import arrow_to_frame
from mddframes.snapshot.diff import SnapshotSide, cell_lines, element_row_changes, tree_rows
from mddframes.snapshot.history_log import (
    HELPER_COLUMNS,
    KEY_COLUMN,
    OBJECT_KINDS,
    REMOVED_COLUMN,
    VERSION_COLUMN,
    log_numbers,
    read_log,
)
from mddframes.snapshot.reader import Snapshot


def one_object(path: Path, entry: dict[str, Any]) -> Snapshot:
    """A reader of the one table or mapping a log row names (no other entry read)."""
    return Snapshot(path, manifest={"objects": [entry]})


def payload_of(path: Path, entry: dict[str, Any]) -> Any:
    """The payload a table's or mapping's log row stands for."""
    kind: Kind = "table" if entry["kind"] == "table" else "mapping"
    return SnapshotSide(one_object(path, entry)).payload(kind, entry["id"])


def changed_cells(path: Path, before: dict[str, Any], after: dict[str, Any]) -> pd.DataFrame:
    """The cell lines of one object between two of its log rows."""
    kind: Kind = "table" if after["kind"] == "table" else "mapping"
    diff = diff_payloads(payload_of(path, before), payload_of(path, after), kind=kind)
    return cell_lines(kind, after["id"], diff)


def table_versions(path: Path, table_id: str) -> Iterator[tuple[int, pd.DataFrame, dict[str, Any]]]:
    """Each version holding the table, its frame and envelope; a frame read once per
    distinct content, from the log rows of the versions that changed it."""
    touched = {row["version"]: row for row in read_log(path, kinds=("table",), object_id=table_id)}
    held: tuple[pd.DataFrame, dict[str, Any]] | None = None
    for number in log_numbers(path):
        row = touched.get(number)
        if row is not None:
            if row["removed"]:
                held = None
            else:
                snap = one_object(path, row)
                held = snap.read_table(table_id), snap.envelope("table", table_id)
        if held is not None:
            yield number, held[0], held[1]


def object_lines(path: Path, object_id: str) -> list[dict[str, Any]]:
    """:meth:`History.object_history`'s lines, before their times are added."""
    lines = []
    for kind in OBJECT_KINDS:
        before: dict[str, Any] | None = None
        for row in read_log(path, kinds=(kind,), object_id=object_id):
            if row["removed"]:
                if before is not None:
                    lines.append(_line(row["version"], kind, "removed", None, None, 0))
                before = None
                continue
            if before is None:
                lines.append(_line(row["version"], kind, "added", row["digest"], row["rows"], 0))
            elif before["digest"] != row["digest"]:
                count = len(changed_cells(path, before, row))
                lines.append(_line(row["version"], kind, "changed", row["digest"], row["rows"],
                                   count))  # fmt: skip
            before = row
    return lines + _element_lines(path, object_id)


def _line(
    version: int, kind: str, change: str, digest: str | None, rows: int | None, cells: int
) -> dict[str, Any]:
    return {"version": version, "kind": kind, "change": change, "digest": digest, "rows": rows,
            "changed_cells": cells}  # fmt: skip


def _element_lines(path: Path, element_id: str) -> list[dict[str, Any]]:
    """The versions whose tree rows added, changed or removed the element: the tree's
    stored files filtered by key (pushed down), then the files that hold it, read."""
    numbers = log_numbers(path)
    files = sorted(str(p) for p in (path / "frames" / "tree").glob("*.parquet"))
    if not numbers or not files:
        return []
    helpers = pa.schema([(VERSION_COLUMN, pa.int64()), (KEY_COLUMN, pa.string())])
    wanted = (pc.field(KEY_COLUMN) == element_id) & (pc.field(VERSION_COLUMN) <= numbers[-1])
    found = ds.dataset(files, schema=helpers, format="parquet").to_table(
        filter=wanted, columns=[VERSION_COLUMN, "__filename"]
    )
    touched = sorted(set(zip(found.column(VERSION_COLUMN).to_pylist(),
                             found.column("__filename").to_pylist(), strict=True)))  # fmt: skip
    lines = []
    before: dict[str, Any] | None = None
    for number, file in touched:  # an interrupted add's file holds a later _version: left out
        stored = pq.read_table(file, filters=[(KEY_COLUMN, "=", element_id)])
        if stored.column(REMOVED_COLUMN)[0].as_py():
            if before is not None:
                lines.append(_line(number, "element", "removed", None, None, 0))
            before = None
            continue
        frame = arrow_to_frame(stored.slice(0, 1).drop_columns(HELPER_COLUMNS))
        after = next(iter(tree_rows(frame).values()))
        if (
            before is None
            or before.keys() != after.keys()
            or not all(strict_equal(before[k], after[k]) for k in before)
        ):
            lines.append(_line(number, "element", "added" if before is None else "changed",
                               None, None, 0))  # fmt: skip
        before = after
    return lines


def element_step(
    path: Path,
    elements: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    ids: set[str] | None,
) -> list[dict[str, Any]]:
    """The element lines of one version (its tree rows), ``elements`` brought to it."""
    entry = next((r for r in rows if r["kind"] == "tree"), None)
    if entry is None or entry["file"] is None:
        return []
    stored = pq.read_table(path / entry["file"])
    removed = stored.column(REMOVED_COLUMN).to_pylist()
    keys = stored.column(KEY_COLUMN).to_pylist()
    kept = stored.filter(pa.array([not r for r in removed])).drop_columns(HELPER_COLUMNS)
    after = tree_rows(arrow_to_frame(kept))
    gone = [k for k, r in zip(keys, removed, strict=True) if r]
    before = {k: elements[k] for k in [*after, *gone] if k in elements}
    for k in gone:
        elements.pop(k, None)
    elements.update(after)
    lines = element_row_changes(before, after)
    return [line for line in lines if ids is None or line["id"] in ids]


def identity(
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


def cell_value(frame: pd.DataFrame, keys: list[str], row_key: Any, column: str) -> tuple[Any, bool]:
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


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, pd.Timestamp) or isinstance(b, pd.Timestamp):
        return bool(a == b)
    return strict_equal(a, b)
