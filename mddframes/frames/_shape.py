"""Shape helpers shared by the loaders: envelopes, snake_case names, flattening, dtypes.

The service description leaves every response shape "not shown", so the loaders read
tolerantly (DESIGN.md section 4): a bare list or a list under a common envelope key,
camelCase or snake_case field names. These helpers do that on decoded JSON and know
nothing of HTTP.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from itertools import chain, repeat
from typing import Any

import numpy as np
import pandas as pd
from pandas._libs import lib as _pandas_lib
from pandas.api.types import infer_dtype

from mddframes.codec.dtypes import STRING_DTYPE, infer_array
from mddframes.codec.frame import frame_of_arrays
from mddframes.errors import DataShapeError

#: Keys under which a service may wrap a list (Spring pages use ``content``).
ENVELOPE_KEYS: tuple[str, ...] = (
    "content",
    "items",
    "data",
    "elements",
    "result",
    "results",
    "structures",
)

# Integers beyond this lose precision in a float64, so they never go through one.
_FLOAT_EXACT_INT = 2**53
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

_CAMEL_BOUNDARY_1 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_BOUNDARY_2 = re.compile(r"([a-z0-9])([A-Z])")
_NON_WORD = re.compile(r"[^0-9a-zA-Z]+")


def unwrap_list(payload: Any, *, what: str, keys: Iterable[str] = ENVELOPE_KEYS) -> list[Any]:
    """Return the list a response carries, bare or under an envelope key.

    Parameters
    ----------
    payload : Any
        Decoded JSON: a list, or an object holding the list under one of ``keys``
        (one level of nesting such as ``{"data": {"items": [...]}}`` is accepted too).
    what : str
        What the list is (e.g. ``"tree of system 'DWH'"``), used in the error message.
    keys : iterable of str, optional
        The envelope keys to try, in order.

    Returns
    -------
    list
        The list itself (not a copy).

    Raises
    ------
    DataShapeError
        When no list is found; the message names ``what`` and the keys that were there.
    """
    keys = tuple(keys)
    if isinstance(payload, list):
        return payload
    if isinstance(payload, Mapping):
        for key in keys:
            value = payload.get(key)
            if isinstance(value, list):
                return value
        for key in keys:
            value = payload.get(key)
            if isinstance(value, Mapping):
                for inner in keys:
                    if isinstance(value.get(inner), list):
                        return value[inner]
        found = ", ".join(repr(k) for k in list(payload)[:10]) or "none"
        raise DataShapeError(
            f"expected a list for the {what}, bare or under one of the keys "
            f"{', '.join(keys)}; got an object with the keys {found}"
        )
    raise DataShapeError(f"expected a list for the {what}; got {type(payload).__name__}")


def snake_case(name: str) -> str:
    """Convert a field name to snake_case (``parentId`` -> ``parent_id``).

    Already snake_case names are returned unchanged; acronyms stay together
    (``HTTPStatus`` -> ``http_status``); dashes and spaces become underscores
    (``not-before-policy`` -> ``not_before_policy``); dots are kept because they
    separate the levels of a flattened name (``attributes.schemaName`` ->
    ``attributes.schema_name``).
    """
    if not isinstance(name, str):
        return name
    if "." in name:
        return ".".join(snake_case(part) for part in name.split("."))
    out = _CAMEL_BOUNDARY_1.sub(r"\1_\2", name)
    out = _CAMEL_BOUNDARY_2.sub(r"\1_\2", out)
    out = _NON_WORD.sub("_", out).strip("_")
    return out.lower() if out else name


def snake_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Rename a frame's columns to snake_case, merging columns that collide.

    When two source fields map to one name (a payload that mixes ``parentId`` and
    ``parent_id``), the first column's values win and the gaps are filled from the
    others, so no value is dropped.
    """
    new_names = [snake_case(c) for c in frame.columns]
    if new_names == list(frame.columns):
        return frame
    if len(set(new_names)) == len(new_names):
        return frame.set_axis(new_names, axis=1)
    merged: dict[str, pd.Series] = {}
    for position, name in enumerate(new_names):
        column = frame.iloc[:, position]
        if name in merged:
            merged[name] = merged[name].combine_first(column)
        else:
            merged[name] = column
    return pd.DataFrame(merged, index=frame.index)


def flatten_dict(value: Mapping[str, Any], *, sep: str = ".", prefix: str = "") -> dict[str, Any]:
    """Flatten nested objects into one level, joining keys with ``sep``.

    Lists are kept as values (a list of objects has no natural column shape), and
    an empty nested object is kept as ``{}`` so that nothing disappears.

    Examples
    --------
    >>> flatten_dict({"id": "a", "attributes": {"schema": "dwh", "tags": ["x"]}})
    {'id': 'a', 'attributes.schema': 'dwh', 'attributes.tags': ['x']}
    """
    flat: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{sep}{key}" if prefix else str(key)
        if isinstance(item, Mapping) and item:
            flat.update(flatten_dict(item, sep=sep, prefix=name))
        else:
            flat[name] = item
    return flat


def _all_exact_ints(values: pd.Series) -> bool:
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
            return column.astype("string")
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


def records_frame(records: list[Mapping[str, Any]]) -> pd.DataFrame:
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
    return _records_frame(records, plain=_all_dicts(records))


def _all_dicts(records: list[Any]) -> bool:
    return set(map(type, records)) == {dict}


def _records_frame(records: list[Mapping[str, Any]], *, plain: bool) -> pd.DataFrame:
    """:func:`records_frame`, told whether every record is a plain dict (one check less)."""
    if not records:
        return pd.DataFrame()
    if not plain:
        return _records_frame_via_pandas(records)
    size = len(records)
    names = key_order(records)
    table = _dicts_to_array(records, names)
    # one field per row, contiguous: the string arrays below keep their row as is
    by_field = np.ascontiguousarray(table.T) if table is not None else None
    del table
    arrays = {}
    for position, name in enumerate(names):
        array = _simple_array(by_field[position]) if by_field is not None else None
        if array is None:  # anything but plain strings, ints, booleans: value by value
            array = infer_array(list(map(dict.get, records, repeat(name, size))))
        arrays[name] = array
    return frame_of_arrays(arrays, pd.RangeIndex(size))


def key_order(records: list[dict[Any, Any]]) -> list[Any]:
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


def _dicts_to_array(records: list[dict[str, Any]], names: list[str]) -> np.ndarray | None:
    """The records as a 2-D object array (NaN where a key is absent), in C, or None.

    pandas' own transposition of a list of dicts (what ``pd.DataFrame(records)``
    uses), three times faster than a ``dict.get`` per record and column; it is not
    public API, so when it is missing or changed the caller goes value by value.
    """
    convert = getattr(_pandas_lib, "dicts_to_array", None)
    if convert is None:
        return None
    try:
        table = convert(records, names)
    except (TypeError, ValueError):
        return None
    if getattr(table, "shape", None) != (len(records), len(names)):
        return None
    return table


def _simple_array(column: np.ndarray) -> Any:
    """A column of only strings, only ints within int64 or only booleans (and gaps) as
    the array :func:`~mddframes.codec.dtypes.infer_array` would make; else None."""
    # A column without gaps (the common case) is told apart in the same pass that
    # types it, and is then converted without a missing-value mask pass.
    kind = infer_dtype(column, skipna=False)
    if kind == "string":
        return string_array(column, checked=True)
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
        return string_array(column)
    if kind not in ("integer", "boolean"):
        return None
    missing = pd.isna(column)
    present = column[~missing]
    # (infer_dtype's "boolean" and "integer" admit only bools and only ints: from
    # decoded JSON, Python bools and ints)
    if kind == "boolean":
        data = np.zeros(len(column), dtype=bool)
        data[~missing] = present.astype(bool)
        return pd.arrays.BooleanArray(data, missing)
    try:
        numbers = np.array(present.tolist(), dtype=np.int64)
    except OverflowError:
        return None  # beyond int64: Python ints in an object column
    data = np.zeros(len(column), dtype=np.int64)
    data[~missing] = numbers
    return pd.arrays.IntegerArray(data, missing)


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
        return pd.arrays.StringArray(values, dtype=STRING_DTYPE)
    except TypeError:  # pandas 2.2: no dtype argument, and its default is this dtype
        return pd.arrays.StringArray(values)


def _records_frame_via_pandas(records: list[Mapping[str, Any]]) -> pd.DataFrame:
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
    records: list[Mapping[str, Any]], name: Any, column: pd.Series
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
    plain = _all_dicts(records)  # what json.loads makes: no check value by value
    if records and not plain:
        _check_objects(records, what)
    if flatten:
        records = [flatten_dict(r) for r in records]
        plain = True
    return snake_columns(_records_frame(records, plain=plain))


def _check_objects(records: list[Any], what: str) -> None:
    for position, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise DataShapeError(
                f"entry {position} of the {what} is a {type(record).__name__}, expected an object"
            )


def nullable_dtype(dtype: Any) -> Any:
    """The nullable counterpart of a numpy int/bool/float dtype (others unchanged).

    Used before outer-joining frames: a column missing from one frame is filled
    with NA, which an ``int64`` or ``bool`` column cannot hold without turning float
    or object; its nullable twin holds it losslessly.
    """
    dtype = getattr(dtype, "numpy_dtype", dtype)  # the dtype of a Series.array of numpy data
    if isinstance(dtype, np.dtype):
        if dtype.kind in "iu":
            return pd.Int64Dtype() if dtype.kind == "i" or dtype.itemsize < 8 else dtype
        if dtype.kind == "b":
            return pd.BooleanDtype()
        if dtype.kind == "f":
            return pd.Float64Dtype()
    return dtype


def column_arrays(frame: pd.DataFrame) -> dict[Any, Any]:
    """A frame's columns as arrays (``Series.array``), by name, in column order."""
    return {name: column.array for name, column in frame.items()}


def concat_union(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Stack frames with the outer union of their columns, without degrading dtypes.

    The composition of :func:`column_arrays` and :func:`concat_column_sets` (see there);
    bulk readers call the two apart so the first runs in their worker threads.
    """
    if not frames:
        return pd.DataFrame()
    return concat_column_sets([column_arrays(f) for f in frames], [f.index for f in frames])


def concat_column_sets(parts: list[dict[Any, Any]], indexes: list[pd.Index]) -> pd.DataFrame:
    """Stack column sets (``{name: array}``, one per frame) into one frame.

    A column that every part holding it stores with one dtype keeps that dtype (its
    nullable twin for numpy ints/bools/floats); parts that lack it contribute NA of
    that dtype, so an ``Int64`` column stays ``Int64`` rather than drifting to float
    or object. A column whose dtypes disagree becomes ``object`` with every value as
    it was. Columns keep their order of first appearance; row indexes (``indexes``,
    one per part) are kept as they are (they may repeat across parts).

    Built column by column (one array concatenation per column): ``pd.concat`` of
    hundreds of small frames with differing columns costs about a millisecond per
    frame in reindexing alone.
    """
    if not parts:
        return pd.DataFrame()
    lengths = [len(index) for index in indexes]
    columns = list(dict.fromkeys(c for cols in parts for c in cols))
    data: dict[Any, Any] = {}
    for name in columns:
        present = [cols[name] for cols in parts if name in cols]
        dtypes = {getattr(array.dtype, "numpy_dtype", array.dtype) for array in present}
        if len(dtypes) == 1:
            dtype = nullable_dtype(dtypes.pop())
            template = present[0]
            if getattr(template.dtype, "numpy_dtype", template.dtype) != dtype:
                template = pd.array(template.astype(dtype), dtype=dtype)
            pieces = [
                cols[name] if cols[name].dtype == template.dtype else cols[name].astype(dtype)
                for cols in parts
                if name in cols
            ]
            # ExtensionArray._concat_same_type: the documented array-level concat.
            joined = type(template)._concat_same_type(pieces)
            if len(pieces) < len(parts):
                # the parts without the column: NA of its own dtype, all placed by one
                # take (one NA piece per part costs a take each: ~4,000 for 200 tables)
                joined = joined.take(_fill_indexer(name, parts, lengths), allow_fill=True)
            data[name] = joined
        else:
            data[name] = np.concatenate(
                [
                    np.asarray(cols[name], dtype=object)
                    if name in cols
                    else np.full(length, None, dtype=object)
                    for length, cols in zip(lengths, parts, strict=True)
                ]
            )
    index = indexes[0].append(list(indexes[1:]))
    return pd.DataFrame(data, index=index, columns=columns, copy=False)


def _fill_indexer(name: Any, parts: list[dict[Any, Any]], lengths: list[int]) -> np.ndarray:
    """Positions into the concatenation of the parts holding ``name``; -1 for the rows of
    the parts without it."""
    indexer = np.full(sum(lengths), -1, dtype=np.intp)
    offset = taken = 0
    for length, cols in zip(lengths, parts, strict=True):
        if name in cols:
            indexer[offset : offset + length] = np.arange(taken, taken + length)
            taken += length
        offset += length
    return indexer


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``string``, ``integer``, ``object``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def leaf_rows(value: Any) -> list[tuple[str, Any]]:
    """Every leaf of a JSON value as ``(path, value)``, in document order.

    Paths join object keys with ``.`` and write list positions as ``[i]``
    (``table.columns[0].name``); the root itself is ``""``. Empty objects and lists
    are leaves (so they are not lost). Iterative, so deep documents do not hit the
    recursion limit.
    """
    rows: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, Mapping) and item:
            children = [(f"{path}.{k}" if path else str(k), v) for k, v in item.items()]
        elif isinstance(item, list) and item:
            children = [(f"{path}[{i}]", v) for i, v in enumerate(item)]
        else:
            rows.append((path, item))
            continue
        stack.extend(reversed(children))
    return rows
