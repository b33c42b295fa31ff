"""What changed between a snapshot and the service, or between two snapshots, as frames.

Objects are compared by digest (:func:`~mddframes.codec.values.digest` of the payload:
equal digests, equal content); elements by their row of the tree. For a table or
mapping whose digest changed, the changed cells come from the codec's
:func:`~mddframes.codec.diff.diff_payloads`, the snapshot's side rebuilt from its frame
and the payload's envelope kept in its file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import iter_bulk, resolve_workers
from mddframes.codec.diff import diff_payloads
from mddframes.codec.frame import from_payload
from mddframes.codec.frame_overlay import to_payload
from mddframes.codec.kinds import Kind
from mddframes.codec.values import JsonObject, digest, strict_equal
from mddframes.errors import NotFoundError
from mddframes.frames.tree import read_tree
from mddframes.snapshot.layout import ID_COLUMNS, envelope_of
from mddframes.snapshot.reader import Snapshot

if TYPE_CHECKING:
    from mddframes.api import Api

#: The columns of :attr:`SnapshotDiff.objects` and :attr:`SnapshotDiff.cells`.
OBJECT_CHANGE_COLUMNS = ("kind", "id", "change", "old_digest", "new_digest", "old_rows", "new_rows")
CELL_CHANGE_COLUMNS = ("kind", "id", "change", "row", "column", "old", "new")


@dataclass(frozen=True)
class SnapshotDiff:
    """What changed from an old snapshot to a newer one or to the service.

    Attributes
    ----------
    objects : pandas.DataFrame
        One row per element, table or mapping that was ``"added"``, ``"removed"`` or
        ``"changed"``: ``kind`` (``element``, ``table``, ``mapping``), ``id``, ``change``,
        ``old_digest``/``new_digest`` and ``old_rows``/``new_rows`` (tables and mappings).
    cells : pandas.DataFrame
        For each changed table and mapping: ``kind``, ``id``, ``change`` (``"cell"``,
        ``"row added"``, ``"row deleted"``, ``"envelope"``), ``row`` (the row's position,
        old for cells and deleted rows), ``column`` (or the envelope key), ``old``, ``new``.
    """

    objects: pd.DataFrame
    cells: pd.DataFrame

    @property
    def empty(self) -> bool:
        """True when nothing changed."""
        return len(self.objects) == 0


def compare_snapshots(
    old: Snapshot | str | os.PathLike[str],
    new: Snapshot | str | os.PathLike[str] | Api,
    *,
    cells: bool,
    max_workers: int | None,
    progress: bool | None,
) -> SnapshotDiff:
    """The work of :func:`mddframes.snapshot.diff_snapshots`, documented there (same
    arguments, every one given: the defaults are that function's).

    That public function imports this module, and with it pyarrow, only when called.

    Returns
    -------
    SnapshotDiff
        ``objects`` and ``cells`` frames.
    """
    before = old if isinstance(old, Snapshot) else Snapshot(old)
    if isinstance(new, (Snapshot, str, os.PathLike)):
        after: _Side = SnapshotSide(new if isinstance(new, Snapshot) else Snapshot(new))
    else:
        after = _ServiceSide(new, before.system, max_workers, progress)
    old_side = SnapshotSide(before)
    rows = element_changes(old_side.tree(), after.tree())
    cell_frames: list[pd.DataFrame] = []
    for kind in ("table", "mapping"):
        ids = list(dict.fromkeys([*old_side.ids(kind), *after.ids(kind)]))
        olds, news = old_side.digests(kind, ids), after.digests(kind, ids)
        for object_id in ids:
            a, b = olds.get(object_id), news.get(object_id)
            change = object_change(a, b)
            if change is None:
                continue
            rows.append({
                "kind": kind, "id": object_id, "change": change,
                "old_digest": a and a[0], "new_digest": b and b[0],
                "old_rows": a and a[1], "new_rows": b and b[1],
            })  # fmt: skip
            if cells and change == "changed":
                diff = diff_payloads(
                    old_side.payload(kind, object_id), after.payload(kind, object_id), kind=kind
                )
                cell_frames.append(cell_lines(kind, object_id, diff))
    return diff_of(rows, cell_frames)


def diff_of(lines: list[dict[str, Any]], cell_frames: list[pd.DataFrame]) -> SnapshotDiff:
    """A :class:`SnapshotDiff` of object lines and the cell lines of changed objects."""
    objects = pd.DataFrame(lines, columns=list(OBJECT_CHANGE_COLUMNS))
    objects = objects.astype({"kind": "string", "id": "string", "change": "string",
                              "old_digest": "string", "new_digest": "string",
                              "old_rows": "Int64", "new_rows": "Int64"})  # fmt: skip
    cells_frame = (
        pd.concat(cell_frames, ignore_index=True)
        if cell_frames
        else pd.DataFrame(columns=list(CELL_CHANGE_COLUMNS), dtype=object)
    )
    return SnapshotDiff(objects=objects, cells=cells_frame)


def object_change(a: Any, b: Any) -> str | None:
    """``added``, ``removed``, ``changed`` or None, from two (digest, rows) or None."""
    if a is None:
        return "added"
    if b is None:
        return "removed"
    return "changed" if a[0] != b[0] else None


def element_changes(old: pd.DataFrame, new: pd.DataFrame) -> list[dict[str, Any]]:
    """Elements added, removed, or whose row of the tree changed."""
    return element_row_changes(tree_rows(old), tree_rows(new))


def element_row_changes(
    old_rows: dict[str, dict[str, Any]], new_rows: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """:func:`element_changes` of two trees' rows (:func:`tree_rows`) by element id."""
    lines = []
    for element_id in dict.fromkeys([*old_rows, *new_rows]):
        a, b = old_rows.get(element_id), new_rows.get(element_id)
        if a is not None and b is not None:
            if a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a):
                continue
            change = "changed"
        else:
            change = "added" if a is None else "removed"
        lines.append({
            "kind": "element", "id": element_id, "change": change,
            "old_digest": None if a is None else digest(a),
            "new_digest": None if b is None else digest(b),
            "old_rows": None, "new_rows": None,
        })  # fmt: skip
    return lines


def tree_rows(tree: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """A tree's rows by element id, each a dict of plain values (times as ISO text)."""
    records = tree.astype(object).where(tree.notna(), None).to_dict("records")
    return {str(r["id"]): {str(k): _plain(v) for k, v in r.items()} for r in records}


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, pd.Timestamp) else value


def cell_lines(kind: Kind, object_id: str, diff: Any) -> pd.DataFrame:
    """The lines of :attr:`SnapshotDiff.cells` of one object's ``diff_payloads`` result."""
    lines: list[tuple[Any, ...]] = []
    for row, column, a, b in diff.changed.itertuples(index=False):
        lines.append((kind, object_id, "cell", row, column, a, b))
    for label, row in diff.added.iterrows():
        lines.append((kind, object_id, "row added", label, None, None, row.dropna().to_dict()))
    for label, row in diff.deleted.iterrows():
        lines.append((kind, object_id, "row deleted", label, None, row.dropna().to_dict(), None))
    for key, a, b in diff.envelope.itertuples(index=False):
        lines.append((kind, object_id, "envelope", None, key, a, b))
    return pd.DataFrame(lines, columns=list(CELL_CHANGE_COLUMNS), dtype=object)


class _Side:
    """One side of a comparison: its tree, its objects' digests and payloads."""

    def tree(self) -> pd.DataFrame:
        raise NotImplementedError

    def ids(self, kind: Kind) -> list[str]:
        return [str(i) for i in self.tree()[ID_COLUMNS[kind]].dropna().drop_duplicates()]

    def digests(self, kind: Kind, ids: list[str]) -> dict[str, tuple[str, int]]:
        raise NotImplementedError

    def payload(self, kind: Kind, object_id: str) -> JsonObject:
        raise NotImplementedError


class SnapshotSide(_Side):
    """A snapshot as one side of a comparison (its payloads rebuilt from its frames)."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self._tree: pd.DataFrame | None = None

    def tree(self) -> pd.DataFrame:
        if self._tree is None:
            self._tree = self.snap.read_tree()
        return self._tree

    def ids(self, kind: Kind) -> list[str]:
        return [o["id"] for o in self.snap.manifest["objects"] if o["kind"] == kind]

    def digests(self, kind: Kind, ids: list[str]) -> dict[str, tuple[str, int]]:
        return {
            o["id"]: (o["digest"], o["rows"])
            for o in self.snap.manifest["objects"]
            if o["kind"] == kind
        }

    def payload(self, kind: Kind, object_id: str) -> JsonObject:
        frame = (
            self.snap.read_table(object_id)
            if kind == "table"
            else self.snap.read_mapping(object_id)
        )
        # every row new to an envelope without rows: the payload the frame stands for
        return to_payload(frame, self.snap.envelope(kind, object_id), kind=kind)


class _ServiceSide(_Side):
    def __init__(
        self, api: Api, system: str, max_workers: int | None, progress: bool | None
    ) -> None:
        self.api = api
        self._tree = read_tree(api, system)
        self.workers = resolve_workers(max_workers, api.max_workers)
        self.progress = progress

    def tree(self) -> pd.DataFrame:
        return self._tree

    def _get(self, kind: Kind, object_id: str) -> JsonObject:
        if kind == "table":
            return self.api.get_table(object_id)
        return self.api.get_mapping(object_id)

    def digests(self, kind: Kind, ids: list[str]) -> dict[str, tuple[str, int]]:
        from mddframes.codec.frame import payload_rows

        def measure(object_id: str) -> tuple[str, int] | None:
            try:
                payload = self._get(kind, object_id)
            except NotFoundError:
                return None  # gone from the service: removed
            return digest(payload), len(payload_rows(payload, kind))

        found: dict[str, tuple[str, int]] = {}
        # any other failure stops the comparison: a table that could not be read is
        # not a removed table
        outcomes = iter_bulk(measure, ids, ahead=self.workers, max_workers=self.workers,
                             progress=self.progress, errors="raise", desc=f"diff {kind}s")  # fmt: skip
        for _position, object_id, value, _error in outcomes:
            if value is not None:
                found[object_id] = value
        return found

    def payload(self, kind: Kind, object_id: str) -> JsonObject:
        # through the snapshot's own route (frame, then every row new to the envelope),
        # so that only content differs, never the spelling a rebuild gives a value
        payload = self._get(kind, object_id)
        frame = from_payload(payload, kind)
        return to_payload(frame, envelope_of(payload, kind), kind=kind)
