"""Frame -> payload: the edited frame overlaid on the original rows, only where a cell changed.

Writing back never rebuilds rows from the frame. It starts from the original row
objects and changes only the cells whose value really changed (type-aware: 1 == 1.0,
and a NaN from a missing key is no change), so an untouched cell comes back exactly as it was read: same key order, absent keys
absent, nulls null, ints ints, nested values the very same objects. The payload ->
frame direction, and the payload's rows and declared columns, are
:mod:`mddframes.codec.frame`'s.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np
import pandas as pd

from mddframes.codec.dtypes import STRING_DTYPE, column_array
from mddframes.codec.frame import (
    column_order,
    declared_columns,
    declared_type,
    describe_payload,
    payload_rows,
    rows_key,
)
from mddframes.codec.kinds import Kind
from mddframes.codec.values import (
    ABSENT,
    JsonObject,
    cell_changed,
    is_missing_cell,
    is_missing_json,
    same_json_column,
    to_json_value,
)
from mddframes.errors import DataShapeError

_FAST_DTYPES = ("Int64", "Float64", "boolean")


def _data_types(payload: Any, kind: Kind) -> dict[str, Any]:
    return {c["name"]: declared_type(c) for c in declared_columns(payload, kind)}


@dataclass
class Overlay:
    """The outcome of :func:`overlay`: the new payload and where each row came from.

    Attributes
    ----------
    payload : dict
        The full payload to send.
    origin : list of int or None
        For each row of the new payload, the position of the original row it comes
        from, or None for a new row.
    labels : list
        For each row of the new payload, the frame index label of that row (what a
        report calls the row).
    deleted : list of int
        Positions of original rows that are not in the frame.
    """

    payload: dict[str, Any]
    origin: list[int | None]
    labels: list[Any]
    deleted: list[int] = field(default_factory=list)


def _check_frame(frame: pd.DataFrame, what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise DataShapeError(f"{what}: expected a pandas DataFrame, not {type(frame).__name__}")
    if isinstance(frame.index, pd.MultiIndex):
        raise DataShapeError(
            f"{what}: the frame has a MultiIndex; its index must be each row's original "
            "position (as read), e.g. use frame.droplevel(...) or reset the extra level"
        )
    bad = [c for c in frame.columns if not isinstance(c, str)]
    if bad:
        raise DataShapeError(f"{what}: column names must be strings, got {bad[:5]!r}")
    if not frame.columns.is_unique:
        duplicated = frame.columns[frame.columns.duplicated()].unique().tolist()
        raise DataShapeError(f"{what}: duplicate column names {duplicated[:5]!r}")
    if not frame.index.is_unique:
        labels = frame.index[frame.index.duplicated()].unique().tolist()
        raise DataShapeError(
            f"{what}: duplicate index labels {labels[:5]!r}. The index is each row's "
            "original position; give new rows labels that no other row uses "
            "(e.g. numbers above the last position)"
        )


def _split_rows(index: pd.Index, n_original: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions of kept rows (ascending), their frame positions, frame positions of new rows."""
    if (
        isinstance(index, pd.RangeIndex)
        and index.start == 0
        and index.step == 1
        and index.stop == n_original
    ):
        positions = np.arange(n_original)
        return positions, positions, np.empty(0, dtype=np.int64)
    if pd.api.types.is_integer_dtype(index.dtype):
        labels = index.to_numpy(dtype=np.int64, na_value=-1)
        is_kept = (labels >= 0) & (labels < n_original)
    else:
        labels = np.array(
            [
                int(x)
                if isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)
                else -1
                for x in index
            ],
            dtype=np.int64,
        )
        is_kept = (labels >= 0) & (labels < n_original)
    kept_frame = np.flatnonzero(is_kept)
    order = np.argsort(labels[kept_frame], kind="stable")
    kept_frame = kept_frame[order]
    return labels[kept_frame], kept_frame, np.flatnonzero(~is_kept)


def _sample(rows: list[dict[str, Any]], name: str) -> Any:
    """The first non-missing original value of a column: the template for new cells."""
    for row in rows:
        value = row.get(name, ABSENT)
        if not is_missing_json(value):
            return value
    return ABSENT


def _same_fast_dtype(old: Any, new: Any) -> bool:
    if old.dtype != new.dtype:
        return False
    return str(new.dtype) in _FAST_DTYPES or new.dtype == STRING_DTYPE or new.dtype.kind == "M"


def _signbits(values: Any) -> np.ndarray:
    signs: np.ndarray = np.signbit(values.to_numpy(dtype="float64", na_value=0.0))
    return signs


def _candidate_changes(old: Any, new: Any, originals: list[Any]) -> np.ndarray:
    """Indices (into the kept rows) of cells that may have changed."""
    if _same_fast_dtype(old, new):
        old_na = np.asarray(pd.isna(old), dtype=bool)
        new_na = np.asarray(pd.isna(new), dtype=bool)
        equal = old == new
        if hasattr(equal, "to_numpy"):
            equal = equal.to_numpy(dtype=bool, na_value=False)
        equal = np.asarray(equal, dtype=bool) | (old_na & new_na)
        if new.dtype.kind == "f":  # == holds -0.0 equal to 0.0: the sign is content too
            equal &= _signbits(old) == _signbits(new)
        return np.flatnonzero(~equal)
    values = new.tolist() if hasattr(new, "tolist") else list(new)
    changed = [
        i
        for i, (original, value) in enumerate(zip(originals, values, strict=True))
        if original is not value and cell_changed(original, value)[0]
    ]
    return np.asarray(changed, dtype=np.int64)


def overlay(
    frame: pd.DataFrame,
    original: dict[str, Any],
    *,
    kind: Kind = "table",
    columns: Sequence[dict[str, Any]] | None = None,
    templates: Mapping[str, Any] | None = None,
    compare: Collection[str] | None = None,
) -> Overlay:
    """Build the payload to send from an edited frame and the payload it was read from.

    Parameters
    ----------
    frame : pandas.DataFrame
        The (edited) frame; its index holds each row's original position. Rows whose
        label is not an original position are new rows; original positions missing
        from the index are deleted rows.
    original : dict
        The payload the frame was read from (not modified).
    kind : {"table", "mapping"}
        Which kind of payload it is.
    columns : list of dict, optional
        New column metadata for a table: replaces ``metadata.columns``; everything
        else outside the rows is kept exactly.
    templates : mapping, optional
        Each column's template (the value that guides how a new cell is written); by
        default the column's first value in ``original``.
    compare : collection of str, optional
        The only columns that may have changed (an exact decision, such as a
        fingerprint's): only their cells are compared, and ``frame`` needs to hold no
        other column; every other column keeps all its cells. ``frame`` then holds
        no new row.

    Returns
    -------
    Overlay
        The payload, and for each of its rows where it comes from.

    Notes
    -----
    - An untouched cell keeps the original value object; a cell counts as changed
      only by type-aware inequality (``1`` vs ``1.0`` is no change, NA where the key
      was absent or null is no change).
    - A changed cell is converted back to JSON guided by the original cell: an
      integral float goes back as an int where the original was an int, a timestamp in
      the original's ISO format. A cell set to NA where there was a value becomes
      ``null``.
    - A column dropped from the frame removes that key from every row (the
      completeness check then refuses the payload); a new column adds a key to the
      rows where it has a value.
    - Kept rows stay in their original order; new rows follow, in frame order, with
      keys for their non-missing cells in column order.
    """
    key = rows_key(original, kind)
    rows = payload_rows(original, kind)
    _check_frame(frame, f"frame of {describe_payload(original, kind)}")
    kept_pos, kept_frame, new_frame = _split_rows(frame.index, len(rows))
    out = _CopyOnWrite([rows[p] for p in kept_pos])
    original_columns = column_order(original, kind)
    data_types = _data_types(original, kind)
    known = {name: data_types.get(name) for name in original_columns}
    if compare is None:
        _drop_columns(out, original_columns, set(frame.columns))
        cells = frame.items()
    else:  # the columns left out are unchanged, not dropped
        if len(new_frame):
            raise ValueError(
                "overlay(compare=...) takes no new rows: their other cells are unknown"
            )
        cells = ((name, frame[name]) for name in compare)
    samples = _overlay_cells(cells, len(frame), out, known, rows, kept_frame, templates)
    out_rows = out.rows
    if len(new_frame):
        out_rows.extend(_new_rows(frame, new_frame, samples))
    payload = _replace_rows(original, key, out_rows, kind, columns)
    labels = frame.index
    kept_set = set(kept_pos.tolist())
    return Overlay(
        payload=payload,
        origin=[*kept_pos.tolist(), *([None] * len(new_frame))],
        labels=[*labels[kept_frame].tolist(), *labels[new_frame].tolist()],
        deleted=[p for p in range(len(rows)) if p not in kept_set],
    )


class _CopyOnWrite:
    """The kept rows: the original objects until one of their cells changes."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.kept = list(rows)  # the originals, never written
        self.rows = rows  # what is sent: originals, and copies of the edited rows
        self._copied: set[int] = set()

    def writable(self, i: int) -> dict[str, Any]:
        """Row ``i``, copied the first time one of its cells changes."""
        if i not in self._copied:
            self.rows[i] = dict(self.rows[i])
            self._copied.add(i)
        return self.rows[i]


def _drop_columns(out: _CopyOnWrite, original_columns: list[str], in_frame: set[Any]) -> None:
    """Remove from every kept row the keys of the columns the frame no longer has."""
    for name in original_columns:
        if name in in_frame:
            continue
        for i, row in enumerate(out.kept):
            if name in row:
                del out.writable(i)[name]


#: At most this many kept rows: every cell is compared by itself (:func:`_overlay_cells`).
CELL_BY_CELL_ROWS = 64


def _overlay_cells(
    columns: Iterable[tuple[Any, pd.Series]],
    n_rows: int,
    out: _CopyOnWrite,
    known: dict[str, Any],
    rows: list[dict[str, Any]],
    kept_frame: np.ndarray,
    templates: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Write into the kept rows the cells of the frame's ``columns`` that changed
    (``known``: the original's columns and their declared types); returns each column's
    template (the sample that guides how a new cell is written)."""
    kept_rows = out.kept
    identity = len(kept_rows) == len(rows) == n_rows and bool(
        (kept_frame == np.arange(n_rows)).all()
    )  # the frame holds exactly the original rows in their order: no reordering
    samples: dict[str, Any] = {}
    # a few rows: asking cell_changed of every cell (the decision every candidate gets
    # anyway) costs less than building a typed column of the originals to compare with
    small = len(kept_rows) <= CELL_BY_CELL_ROWS
    for label, column in columns:
        name = str(label)  # (the column names are strings: _check_frame saw to it)
        new = column.array
        if not identity:
            new = new.take(kept_frame)
        # None stands for both null and absent here: the two compare alike, and the
        # row copy keeps whichever the original had
        originals = list(map(dict.get, kept_rows, repeat(name, len(kept_rows))))
        if name in known:
            samples[name] = _sample(rows, name) if templates is None else templates[name]
            if same_json_column(originals, new):
                continue  # a JSON column left as it was: no cell to compare one by one
            if small:  # cell_changed below decides each cell not plainly its original
                candidates = not_plainly_equal(originals, new)
            else:
                old = column_array(originals, known[name], name=name)
                candidates = _candidate_changes(old, new, originals)
        else:
            samples[name] = ABSENT if templates is None else templates.get(name, ABSENT)
            candidates = np.flatnonzero(~np.asarray(pd.isna(new), dtype=bool))
        for i in candidates.tolist():
            changed, value = cell_changed(originals[i], new[i], samples[name])
            if changed:
                out.writable(i)[name] = value
    return samples


#: Python types whose equal values of one type are one JSON value (a float: but a zero).
_PLAIN_TYPES = frozenset({str, int, bool, float})


def not_plainly_equal(originals: list[Any], new: Any) -> np.ndarray:
    """Positions of the cells that may differ from their original: every cell but those
    whose Python value (``tolist``) has the original's type and equals it.

    Those are cells :func:`~mddframes.codec.values.cell_changed` finds unchanged too: the
    value goes back as itself; a float zero is left to it (``-0.0 == 0.0``, the sign is
    content), as is a NaN (never equal).
    """
    values = new.tolist() if hasattr(new, "tolist") else list(new)
    return np.asarray(
        [
            i
            for i, (original, value) in enumerate(zip(originals, values, strict=True))
            if not (
                type(original) is type(value)
                and type(value) in _PLAIN_TYPES
                and original == value
                and (original or type(value) is not float)
            )
        ],
        dtype=np.int64,
    )


def _new_rows(
    frame: pd.DataFrame, new_frame: np.ndarray, samples: dict[str, Any]
) -> list[dict[str, Any]]:
    """The rows the frame adds (at frame positions ``new_frame``), keys for their
    non-missing cells in column order."""
    added: list[dict[str, Any]] = [{} for _ in range(len(new_frame))]
    for name in frame.columns:
        values = frame[name].array.take(new_frame)
        template = samples[name]
        for row, value in zip(added, values, strict=True):
            if not is_missing_cell(value):
                row[name] = to_json_value(value, template, where=f"column {name!r}")
    return added


def _replace_rows(
    original: dict[str, Any],
    key: str,
    rows: list[dict[str, Any]],
    kind: Kind,
    columns: Sequence[dict[str, Any]] | None,
) -> dict[str, Any]:
    """The original payload with ``rows`` under ``key`` (and new column metadata)."""
    payload: dict[str, Any] = {k: (rows if k == key else v) for k, v in original.items()}
    if columns is not None:
        if kind != "table":
            raise DataShapeError("columns= applies to tables only (a mapping has no metadata)")
        metadata = original.get("metadata")
        payload["metadata"] = {**(metadata if isinstance(metadata, dict) else {})}
        payload["metadata"]["columns"] = list(columns)
    return payload


def to_payload(
    frame: pd.DataFrame,
    original: JsonObject,
    *,
    kind: Kind = "table",
    columns: Sequence[JsonObject] | None = None,
) -> JsonObject:
    """The full payload to send for an edited frame (see :func:`~mddframes.codec.frame_overlay.overlay` for the rules).

    ``to_payload(from_payload(p), p)`` is deep-equal to ``p`` with the same Python
    types and key order, for any table or mapping payload ``p``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The edited frame (read by :func:`from_payload` or built by hand).
    original : JsonObject
        The document the frame was read from: everything it keeps
        besides the rows.
    kind : {'table', 'mapping'}, default 'table'
        Which kind of document ``original`` is.
    columns : list of JsonObject, optional
        The declared columns, if they are not those of ``original``.

    Returns
    -------
    JsonObject
        The full payload, ready for a PUT.
    """
    return overlay(frame, original, kind=kind, columns=columns).payload
