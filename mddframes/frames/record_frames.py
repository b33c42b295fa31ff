"""Frames of JSON objects that keep every field and every integer exact.

:func:`records_frame` builds a frame column by column with the dtypes
:func:`mddframes.codec.dtypes.infer_array` gives (never through
``pd.DataFrame(records)``, which turns an int field with gaps into float64);
:func:`frame_from_objects` adds the loaders' tidying (snake_case names, flattening).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import Any, TypeGuard

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from mddframes.codec.dtypes import STRING_DTYPE, infer_array
from mddframes.codec.frame import frame_of_arrays
from mddframes.errors import DataShapeError
from mddframes.frames.shaping import flatten_dict, snake_columns

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _all_exact_ints(values: Iterable[Any]) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def tidy_column(column: pd.Series) -> pd.Series:
    """Give an inferred column a nullable dtype without losing information.

    Strings become ``string``, booleans ``boolean``, integers ``Int64`` (only when
    every value fits in int64: bigger ones stay Python ints in an ``object``
    column), floats ``Float64``. Mixed or nested values (lists, objects, numbers
    mixed with strings) stay ``object`` exactly as decoded. A float64 column that
    pandas made from integers with gaps becomes ``Int64``.
    """
    dtype = column.dtype
    if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.StringDtype):
        kind = infer_dtype(column, skipna=True)
        if kind == "string":
            return column.astype(STRING_DTYPE)
        if kind == "boolean":
            return column.astype("boolean")
        if kind == "integer":
            values = column.dropna()
            if _all_exact_ints(values) and (
                values.empty or (_INT64_MIN <= min(values) and max(values) <= _INT64_MAX)
            ):
                return column.astype("Int64")
            return column
        if kind == "floating":
            return column.astype("Float64")
        if kind == "empty":
            return column.astype("object")
        return column
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return column.astype("boolean")
    if pd.api.types.is_integer_dtype(dtype) and not isinstance(
        dtype, pd.api.extensions.ExtensionDtype
    ):
        return column.astype("Int64")
    if pd.api.types.is_float_dtype(dtype) and not isinstance(
        dtype, pd.api.extensions.ExtensionDtype
    ):
        return column.astype("Float64")
    return column


def records_frame(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Build a frame from JSON objects, keeping every field and every int exact.

    Built column by column from the values (``dict.get`` per record), each column
    with the dtype :func:`mddframes.codec.dtypes.infer_array` gives it: ``string``,
    ``boolean``, ``Int64`` (``object`` holding Python ints beyond int64), ``Float64``
    (ints and floats together only while every int is exact in a float), ``object``
    for nested or mixed values. Never through ``pd.DataFrame(records)``, which turns an
    int field with gaps into float64 (``9007199254740993`` would become ``...992``)
    and infers every column's type a second time. Columns keep their order of first
    appearance.
    """
    if _all_dicts(records):
        return _dicts_frame(records)
    return _mappings_frame(records)


def _all_dicts(records: Sequence[Any]) -> TypeGuard[Sequence[dict[str, Any]]]:
    # (the keys are not looked at: JSON objects have str keys)
    return set(map(type, records)) == {dict}


def _mappings_frame(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """:func:`records_frame` of records that are not all plain dicts."""
    if not records:
        return pd.DataFrame()
    return _records_frame_via_pandas(records)


def _dicts_frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """:func:`records_frame` of plain dicts (the caller has checked: one check less)."""
    if not records:
        return pd.DataFrame()
    size = len(records)
    names = key_order(records)
    # one field per row, contiguous: the string arrays below keep their row as is
    by_field = _fields_of(records, names)
    arrays = {}
    for position, name in enumerate(names):
        array = _simple_array(by_field[position]) if by_field is not None else None
        if array is None:  # anything but plain strings, ints, booleans: value by value
            array = infer_array(list(map(dict.get, records, repeat(name, size))))
        arrays[name] = array
    return frame_of_arrays(arrays, pd.RangeIndex(size))


def column_array(values: list[Any]) -> Any:
    """One field's values (None where absent) as the array :func:`records_frame` makes.

    Parameters
    ----------
    values : list
        The field's decoded JSON values, one per record.

    Returns
    -------
    pandas.api.extensions.ExtensionArray or numpy.ndarray
        ``string``, ``boolean``, ``Int64``, ``Float64`` or ``object``, by the rules of
        :func:`records_frame`.
    """
    # fromiter: a list value stays one cell (np.array would make a 2-D array of it)
    array = _simple_array(np.fromiter(values, dtype=object, count=len(values)))
    return infer_array(values) if array is None else array


def key_order(records: Sequence[dict[Any, Any]]) -> list[Any]:
    """Every key of the dicts, in order of first appearance.

    The set of keys comes from one C-level union over the dicts (which reuses their
    stored hashes); the order then needs only the records up to the last key's first
    appearance, usually the first one or a few dozen, rather than a walk over every
    key of every record.
    """
    every = set().union(*records)
    if len(records[0]) == len(every):
        return list(records[0])
    names: dict[Any, None] = {}
    start, step = 0, 64
    while len(names) < len(every):
        names.update(dict.fromkeys(chain.from_iterable(records[start : start + step])))
        start, step = start + step, step * 4
    return list(names)


def _fields_of(records: Sequence[dict[str, Any]], names: list[str]) -> np.ndarray | None:
    """The records' values field by field: a 2-D object array, one row per field (NaN
    where a key is absent), or None when pandas will not make it.

    ``pd.DataFrame(records, dtype=object)`` transposes the dicts in C (about twice as
    fast as a ``dict.get`` per record and field) and, with ``dtype=object``, leaves
    every value the very object it was; its one block is already field by field.
    The rows may be read-only (pandas' copy-on-write): a caller that hands a row over
    as an array's storage copies it first.
    """
    try:
        table = pd.DataFrame(records, columns=names, dtype=object).to_numpy(dtype=object).T
    except (TypeError, ValueError):
        return None
    if table.shape != (len(names), len(records)):
        return None
    return np.ascontiguousarray(table)  # a no-op for the one block pandas makes


def _simple_array(column: np.ndarray) -> Any:
    """A column of only strings, only ints within int64 or only booleans (and gaps) as
    the array :func:`~mddframes.codec.dtypes.infer_array` would make; else None."""
    # A column without gaps (the common case) is told apart in the same pass that
    # types it, and is then converted without a missing-value mask pass.
    kind = infer_dtype(column, skipna=False)
    if kind == "string":
        return string_array(_writable(column), checked=True)
    if kind == "integer":
        try:
            data = column.astype(np.int64)
        except OverflowError:
            return None  # beyond int64: Python ints in an object column
        return pd.arrays.IntegerArray(data, np.zeros(len(column), dtype=bool))
    if kind == "boolean":
        return pd.arrays.BooleanArray(column.astype(bool), np.zeros(len(column), dtype=bool))
    kind = infer_dtype(column, skipna=True)
    if kind == "string":
        return string_array(_writable(column))
    if kind not in ("integer", "boolean"):
        return None
    missing = pd.isna(column)
    present = column[~missing]
    # (infer_dtype's "boolean" and "integer" admit only bools and only ints: from
    # decoded JSON, Python bools and ints)
    if kind == "boolean":
        flags = np.zeros(len(column), dtype=bool)
        flags[~missing] = present.astype(bool)
        return pd.arrays.BooleanArray(flags, missing)
    try:
        numbers = np.array(present.tolist(), dtype=np.int64)
    except OverflowError:
        return None  # beyond int64: Python ints in an object column
    data = np.zeros(len(column), dtype=np.int64)
    data[~missing] = numbers
    return pd.arrays.IntegerArray(data, missing)


def _writable(values: np.ndarray) -> np.ndarray:
    """``values``, or a copy where it is read-only (the storage of a frame's column
    must take edits)."""
    return values if values.flags.writeable else values.copy()


def string_array(values: np.ndarray, *, checked: bool = False) -> Any:
    """A ``string`` array (:data:`STRING_DTYPE`) of an object array of strings and gaps.

    ``values`` becomes the array's storage (the caller hands over a row of its own).
    ``checked`` says every value is a ``str`` (no gap): the array is then wrapped
    without the constructor's two checking passes when pandas allows it. Otherwise
    the ``StringArray`` constructor checks the values and turns the gaps (None, NaN)
    into NA in place, in two C passes, where ``pd.array`` converts value by value
    (about twice the time on a column with gaps).
    """
    wrap = getattr(pd.arrays.StringArray, "_simple_new", None)
    if checked and wrap is not None:
        return wrap(values, STRING_DTYPE)
    try:
        # pandas-stubs: StringArray.__init__ leaves out the dtype argument (pandas >= 3)
        return pd.arrays.StringArray(values, dtype=STRING_DTYPE)  # type: ignore[call-arg]
    except TypeError:  # pandas 2.2: no dtype argument, and its default is this dtype
        return pd.arrays.StringArray(values)


def _records_frame_via_pandas(records: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """:func:`records_frame` of mappings other than dicts (rare): through pandas."""
    frame = pd.DataFrame.from_records(records)
    if frame.empty and not len(frame.columns):
        return frame
    for position, name in enumerate(frame.columns):
        column = frame.iloc[:, position]
        tidy = column
        if column.dtype == "float64" and column.isna().any():
            tidy = _rebuild_gapped_float(records, name, column)
        tidy = tidy_column(tidy)
        if tidy is not column:  # replace only what changed: rebuilding the frame copies it all
            frame[name] = tidy
    return frame


def _rebuild_gapped_float(
    records: Sequence[Mapping[str, Any]], name: Any, column: pd.Series
) -> pd.Series:
    """Recover a column that pandas turned to float64 because of gaps.

    Only the non-missing raw values are inspected; when they are all ints the
    column becomes ``Int64`` (or ``object`` beyond int64), built from the raw ints.
    """
    raw = [r.get(name) if isinstance(r, Mapping) else None for r in records]
    present = [v for v in raw if v is not None]
    if not _all_exact_ints(present):
        return column
    if all(_INT64_MIN <= v <= _INT64_MAX for v in present):
        return pd.Series(pd.array(raw, dtype="Int64"), index=column.index, name=column.name)
    return pd.Series(raw, index=column.index, name=column.name, dtype=object)


def frame_from_objects(records: list[Any], *, what: str, flatten: bool = False) -> pd.DataFrame:
    """A tidy frame from a list of JSON objects: snake_case columns, nullable dtypes.

    Parameters
    ----------
    records : list of dict
        The objects; anything else in the list is an error.
    what : str
        What the objects are, for error messages.
    flatten : bool, default False
        Flatten nested objects into dotted columns first (:func:`flatten_dict`).

    Raises
    ------
    DataShapeError
        When an entry is not a JSON object (names its position).
    """
    if _all_dicts(records):  # what json.loads makes: no check value by value
        frame = _dicts_frame([flatten_dict(r) for r in records] if flatten else records)
    else:
        if records:
            _check_objects(records, what)
        frame = (
            _dicts_frame([flatten_dict(r) for r in records])
            if flatten
            else _mappings_frame(records)
        )
    return snake_columns(frame)


def _check_objects(records: list[Any], what: str) -> None:
    for position, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise DataShapeError(
                f"entry {position} of the {what} is a {type(record).__name__}, expected an object"
            )
