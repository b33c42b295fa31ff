"""Payload -> frame, and what a payload holds (its rows, its declared columns).

A table payload holds its rows under ``data`` and its column metadata under
``metadata.columns``; a mapping payload holds its rows under ``columnMappings``. The
frame has one row per payload row, indexed by the row's original position (the index
is named ``row``), declared columns first in declared order, then the other keys in
first-seen order.

Writing back, frame -> payload, is :mod:`mddframes.codec.frame_overlay`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, repeat
from typing import Any

import numpy as np
import pandas as pd

from mddframes.codec.dtypes import UNDECLARED, column_array
from mddframes.codec.kinds import Kind
from mddframes.codec.values import (
    JsonObject,
)
from mddframes.errors import DataShapeError

#: Where each kind keeps its rows; the first key is the one the service uses, the
#: others are tolerated spellings (section 4: read tolerantly).
ROWS_KEYS: dict[str, tuple[str, ...]] = {
    "table": ("data", "rows"),
    "mapping": ("columnMappings", "column_mappings", "mappings"),
}

#: The name of the frame index: each row's position in the payload it was read from.
INDEX_NAME = "row"

#: What :func:`frame_of_columns` calls with each built column (name, array) and keeps
#: the result of.
ColumnFinish = Callable[[str, Any], Any]

#: What :func:`frame_of_columns` asks first for each column (name, declared
#: ``dataType``): the frame's array of it built another way, or None to build it from
#: its values as usual (the Arrow route: :mod:`mddframes.codec.arrow_columns`).
ColumnDirect = Callable[[str, Any], Any]


def describe_payload(payload: Any, kind: str) -> str:
    """A payload in words for a message: its kind and, when it has one, its id."""
    object_id = payload.get("id") if isinstance(payload, dict) else None
    return f"{kind} {object_id!r}" if object_id is not None else kind


def rows_key(payload: Any, kind: Kind = "table") -> str:
    """The key under which ``payload`` keeps its rows (``data`` or ``columnMappings``).

    Raises
    ------
    DataShapeError
        If the payload is not an object or has no list of rows under a known key.
    """
    if kind not in ROWS_KEYS:
        raise DataShapeError(f"kind must be 'table' or 'mapping', not {kind!r}")
    if not isinstance(payload, dict):
        raise DataShapeError(
            f"a {kind} payload must be a JSON object, not {type(payload).__name__}"
        )
    for key in ROWS_KEYS[kind]:
        if key in payload:
            if not isinstance(payload[key], list):
                raise DataShapeError(
                    f"{describe_payload(payload, kind)}: {key!r} must be a list of row objects, "
                    f"not {type(payload[key]).__name__}"
                )
            return key
    raise DataShapeError(
        f"{describe_payload(payload, kind)} has no rows: expected a list under "
        + " or ".join(repr(k) for k in ROWS_KEYS[kind])
        + f"; keys present: {sorted(payload)}"
    )


def payload_rows(payload: Any, kind: Kind = "table") -> list[dict[str, Any]]:
    """The row objects of a payload (not copies), checked to be JSON objects."""
    key = rows_key(payload, kind)
    rows: list[dict[str, Any]] = payload[key]
    if not all(type(row) is dict for row in rows):
        position = next(i for i, row in enumerate(rows) if type(row) is not dict)
        raise DataShapeError(
            f"{describe_payload(payload, kind)}: row {position} of {key!r} is a "
            f"{type(rows[position]).__name__}, expected a JSON object"
        )
    return rows


def declared_columns(payload: Any, kind: Kind = "table") -> list[dict[str, Any]]:
    """The column metadata of a table (``metadata.columns``); empty for a mapping."""
    if kind != "table" or not isinstance(payload, dict):
        return []
    metadata = payload.get("metadata")
    columns = metadata.get("columns") if isinstance(metadata, dict) else None
    if not isinstance(columns, list):
        return []
    return [c for c in columns if isinstance(c, dict) and isinstance(c.get("name"), str)]


def column_order(payload: Any, kind: Kind = "table") -> list[str]:
    """Declared column names in declared order, then other row keys in first-seen order."""
    declared = [c["name"] for c in declared_columns(payload, kind)]
    return list(dict.fromkeys(chain(declared, chain.from_iterable(payload_rows(payload, kind)))))


def declared_type(column: dict[str, Any]) -> Any:
    """A declared column's ``dataType`` (``data_type`` from a snake_case service)."""
    return column.get("dataType", column.get("data_type"))


def from_payload(payload: JsonObject, kind: Kind = "table") -> pd.DataFrame:
    """The rows of a table or mapping payload as a DataFrame.

    Parameters
    ----------
    payload : dict
        The parsed JSON of a table (rows under ``data``) or a mapping (rows under
        ``columnMappings``). It is not modified and the frame shares its string and
        nested objects (no copies).
    kind : {"table", "mapping"}
        Which kind of payload it is.

    Returns
    -------
    pandas.DataFrame
        One row per payload row, index = the row's position (named ``row``); declared
        columns first (dtypes from their ``dataType`` when the values fit), then other
        keys in first-seen order (dtypes inferred without losing information, see
        :mod:`mddframes.codec.dtypes`). Absent keys and nulls are both missing (NA).

    Raises
    ------
    DataShapeError
        If the payload has no list of row objects.
    """
    rows = payload_rows(payload, kind)
    names = dict.fromkeys(chain.from_iterable(rows))  # first-seen order
    size = len(rows)
    # map(dict.get, ...) is about a third faster than a comprehension calling row.get
    columns = {name: list(map(dict.get, rows, repeat(name, size))) for name in names}
    return frame_of_columns(columns, len(rows), declared_columns(payload, kind), kind=kind)


def frame_of_columns(
    columns: dict[str, list[Any]],
    n_rows: int,
    declared: list[dict[str, Any]],
    *,
    finish: ColumnFinish | None = None,
    direct: ColumnDirect | None = None,
    kind: Kind = "table",
) -> pd.DataFrame:
    """The frame of a payload's rows given as per-column value lists.

    The one place where the frame of a table or mapping is built, from parsed JSON
    (:func:`from_payload`) and from a stream (:mod:`mddframes.codec.stream`) alike.

    Parameters
    ----------
    columns : dict of str to list
        Every row key in first-seen order, with one value per row (``None`` for a
        null or an absent key). The lists are consumed: each is dropped from the dict
        once its array is built, so that a large table does not hold both at once.
    n_rows : int
        The number of rows.
    declared : list of dict
        The declared column metadata (:func:`declared_columns`).
    finish : callable, optional
        Called with each column's name and array as soon as it is built; the frame
        holds what it returns (a reader turns each column into its backend's array
        there, so that one column's Python objects are freed before the next is built).
    direct : callable, optional
        Called first with each column's name and declared ``dataType``; when it returns
        an array the frame holds that one (``finish`` is not called) and the column's
        values are dropped unread.
    kind : {"table", "mapping"}, default "table"
        A table's row keys that ``declared`` lacks are ``object``
        (:data:`~mddframes.codec.dtypes.DTYPE_RULES`); a mapping declares nothing and
        its columns' dtypes follow their values.
    """
    arrays = arrays_of_columns(columns, n_rows, declared, finish=finish, direct=direct,
                               kind=kind)  # fmt: skip
    return frame_of_arrays(arrays, pd.RangeIndex(n_rows, name=INDEX_NAME))


def arrays_of_columns(
    columns: dict[str, list[Any]],
    n_rows: int,
    declared: list[dict[str, Any]],
    *,
    unbuilt: bool = False,
    finish: ColumnFinish | None = None,
    direct: ColumnDirect | None = None,
    kind: Kind = "table",
) -> dict[str, Any]:
    """The column arrays :func:`frame_of_columns` makes its frame of, in frame order.

    For callers that take the columns apart anyway (``read_tables`` concatenates the
    columns of many tables): the frame of each table would be built only to be
    taken apart again. With ``unbuilt``, every column but the dates comes back as
    :class:`~mddframes.codec.dtypes.UnbuiltColumn` (see :func:`~mddframes.codec.dtypes.column_array`).
    ``finish``, ``direct``, ``kind``: as :func:`frame_of_columns`.
    """
    data_types = {c["name"]: declared_type(c) for c in declared}
    table = kind == "table"
    # a table's undeclared keys, and declared columns without a dataType: UNDECLARED
    # (object); a mapping's columns: None (the values decide)
    untyped = UNDECLARED if table else None
    order = dict.fromkeys(chain((c["name"] for c in declared), columns))
    arrays = {}
    for name in order:
        data_type = data_types.get(name)
        if data_type is None:
            data_type = untyped
        built = None if direct is None else direct(name, data_type)
        if built is not None:
            dict.pop(columns, name, None)  # the raw batches: never unpacked
            arrays[name] = built
            del built
            continue
        values = columns.pop(name, None)
        if values is None:
            values = [None] * n_rows
        array = column_array(values, data_type, name=name, unbuilt=unbuilt, warn=table)
        del values
        arrays[name] = array if finish is None else finish(name, array)
        del array
    return arrays


def payload_arrays(
    payload: dict[str, Any],
    kind: Kind = "table",
    *,
    unbuilt: bool = False,
) -> tuple[dict[str, Any], int]:
    """The column arrays of :func:`from_payload`'s frame and its number of rows, no frame
    (``unbuilt``: as :func:`arrays_of_columns`)."""
    rows = payload_rows(payload, kind)
    names = dict.fromkeys(chain.from_iterable(rows))
    size = len(rows)
    columns = {name: list(map(dict.get, rows, repeat(name, size))) for name in names}
    declared = declared_columns(payload, kind)
    return arrays_of_columns(columns, size, declared, unbuilt=unbuilt, kind=kind), size


def frame_of_arrays(arrays: dict[str, Any], index: pd.Index) -> pd.DataFrame:
    """A DataFrame of column arrays, keeping object columns ``object``.

    (pandas 3 would turn an object array holding only strings into ``str``, and a
    JSON column whose values happen to be strings must still take a list or a dict.)
    """
    columns = {
        name: pd.Series(array, index=index, dtype=object, copy=False)
        if isinstance(array, np.ndarray) and array.dtype == object
        else array
        for name, array in arrays.items()
    }
    if not columns:
        return pd.DataFrame(index=index)
    return pd.DataFrame(columns, index=index, copy=False)
