"""A frame as an Arrow table and back, exactly: the one frame <-> Arrow conversion of snapshots.

Every column keeps its pandas dtype, recorded in the Arrow field's metadata
(``b"mddframes.dtype"``), so :func:`arrow_to_frame` gives back a frame
``assert_frame_equal`` to the one written (``string`` storage and NA flavour, masked
``Int64``/``Float64``/``boolean``, ``datetime64`` unit and zone). Columns whose values
have no exact Arrow type, the ``object`` columns (JSON objects and lists, integers beyond
64 bits, mixed types), are stored as text, one canonical JSON document per cell
(:func:`~mddframes.codec.values.canonical_json`: keys sorted, no spaces, ``1`` and ``1.0``
kept apart), a missing cell as a Parquet null; the field's metadata says
``b"mddframes.encoding": b"json"``, so an engine reading the file knows to parse it
(DuckDB: ``col::JSON``; polars: ``pl.col(c).str.json_decode()``).

pyarrow is a dependency of mddframes; importing this module where it cannot be imported
raises a :class:`~mddframes.errors.MissingDependencyError` naming the extra that installs it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

from mddframes.codec import depth
from mddframes.codec.dtypes import UNBUILT_DTYPES, UnbuiltColumn
from mddframes.codec.values import canonical_cells
from mddframes.errors import DataShapeError
from mddframes.frames.backends import require_module

# without pyarrow: the MissingDependencyError naming the extra, as dtype_backend="pyarrow"
require_module("pyarrow", extra="arrow")
import pyarrow as pa  # noqa: E402

#: The field metadata keys of a column's pandas dtype and of its cells' encoding.
DTYPE_KEY = b"mddframes.dtype"
ENCODING_KEY = b"mddframes.encoding"
#: The schema metadata key of the index (a ``RangeIndex``: its name).
INDEX_KEY = b"mddframes.index"
#: The encoding of an ``object`` column: one canonical JSON text per cell.
JSON_ENCODING = "json"
#: The Arrow type of each kind of unbuilt column but ``object``
#: (:data:`~mddframes.codec.dtypes.UNBUILT_DTYPES`): what its pandas array converts to.
_UNBUILT_ARROW = {"string": pa.string(), "int": pa.int64(), "float": pa.float64(),
                  "bool": pa.bool_()}  # fmt: skip


def frame_to_arrow(frame: pd.DataFrame) -> pa.Table:
    """A frame as an Arrow table, each column's dtype and encoding in its field metadata.

    Parameters
    ----------
    frame : pandas.DataFrame
        String-named columns (unique), a ``RangeIndex`` from 0 (its name is kept).

    Returns
    -------
    pyarrow.Table
        One field per column; ``object`` columns as canonical JSON text.

    Raises
    ------
    DataShapeError
        Columns not unique strings, or another index than ``RangeIndex(n)``.

    Examples
    --------
    >>> table = frame_to_arrow(pd.DataFrame({"a": pd.array([1, None], dtype="Int64")}))
    >>> arrow_to_frame(table)["a"].dtype
    Int64Dtype()
    """
    names = list(frame.columns)
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise DataShapeError(f"a snapshot frame needs unique string column names, got {names[:10]}")
    index = frame.index
    if not (isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1):
        raise DataShapeError(
            f"a snapshot frame needs a RangeIndex from 0, got {type(index).__name__}"
        )
    columns = {str(name): column.array for name, column in frame.items()}
    return arrays_to_arrow(columns, index.name, rows=len(frame))


def arrays_to_arrow(
    columns: Mapping[str, Any],
    index_name: Any = None,
    *,
    leading: Mapping[str, Any] | None = None,
    rows: int | None = None,
) -> pa.Table:
    """:func:`frame_to_arrow` of the frame these column arrays make, without the frame.

    Parameters
    ----------
    columns : mapping of str to array
        The column arrays (as ``Series.array`` gives them), of equal length; a
        :class:`~mddframes.codec.dtypes.UnbuiltColumn` stands for its array.
    index_name : hashable, optional
        The name of the frame's ``RangeIndex``.
    leading : mapping of str to pyarrow.Array, optional
        Columns put first as they are (Arrow strings read back as ``string``, Arrow
        integers as ``Int64``): the id and position columns of a snapshot's files.
    rows : int, optional
        The number of rows, kept in the metadata for a frame without columns (an Arrow
        table without columns has none).

    Returns
    -------
    pyarrow.Table
        As :func:`frame_to_arrow` returns it.

    Examples
    --------
    >>> arrays_to_arrow({"a": pd.array(["x", None], dtype="string")}).column("a").to_pylist()
    ['x', None]
    """
    fields, arrays = [], []
    for name, array in (leading or {}).items():
        spec = _dtype_spec(pd.StringDtype() if pa.types.is_string(array.type) else pd.Int64Dtype())
        fields.append(pa.field(name, array.type, metadata={DTYPE_KEY: json.dumps(spec).encode()}))
        arrays.append(array)
    for name, values in columns.items():
        array, encoding = _column_to_arrow(values)
        metadata = {DTYPE_KEY: column_metadata(values)}
        if encoding is not None:
            metadata[ENCODING_KEY] = encoding.encode()
        fields.append(pa.field(name, array.type, nullable=True, metadata=metadata))
        arrays.append(array)
    index = {"name": index_name, "rows": rows}
    schema = pa.schema(fields, metadata={INDEX_KEY: json.dumps(index).encode()})
    return pa.Table.from_arrays(arrays, schema=schema)


def arrow_to_frame(table: pa.Table) -> pd.DataFrame:
    """The frame :func:`frame_to_arrow` was given, from its Arrow table.

    Parameters
    ----------
    table : pyarrow.Table
        As :func:`frame_to_arrow` wrote it (read back with ``pyarrow.parquet``).

    Returns
    -------
    pandas.DataFrame
        The columns with their recorded dtypes, JSON cells parsed, the ``RangeIndex``
        with its name.

    Examples
    --------
    >>> frame = pd.DataFrame({"v": pd.array([{"a": 1}, None], dtype=object)})
    >>> arrow_to_frame(frame_to_arrow(frame)).equals(frame)
    True
    """
    data: dict[str, Any] = {}
    for field, column in zip(table.schema, table.columns, strict=True):
        metadata = field.metadata or {}
        spec = json.loads(metadata[DTYPE_KEY]) if DTYPE_KEY in metadata else None
        encoding = metadata.get(ENCODING_KEY, b"").decode() or None
        data[field.name] = _column_from_arrow(column, spec, encoding)
    index_info = json.loads((table.schema.metadata or {}).get(INDEX_KEY, b"{}"))
    rows = table.num_rows if table.num_columns else index_info.get("rows") or 0
    index = pd.RangeIndex(rows, name=index_info.get("name"))
    if not data:  # no columns: pandas' own empty columns (a RangeIndex), as a read gives
        return pd.DataFrame(index=index)
    return pd.DataFrame(data, index=index, columns=list(data), copy=False)


def joined_column(arrays: list[Any]) -> Any:
    """One column of several frames, joined: :class:`~mddframes.codec.dtypes.UnbuiltColumn`
    of all their values when each is one, else the array of their arrays.

    Parameters
    ----------
    arrays : list
        The column's arrays (as ``Series.array`` gives them) or ``UnbuiltColumn``, of
        one dtype.

    Returns
    -------
    UnbuiltColumn or pandas array
        What :func:`arrays_to_arrow` takes for the joined column.

    Examples
    --------
    >>> joined_column([UnbuiltColumn(["a"], "string"), UnbuiltColumn([None], "string")]).values
    ['a', None]
    """
    if all(type(a) is UnbuiltColumn for a in arrays):
        return UnbuiltColumn(list(chain.from_iterable(a.values for a in arrays)), arrays[0].kind)
    built = [_series_array(a.array()) if type(a) is UnbuiltColumn else a for a in arrays]
    return type(built[0])._concat_same_type(built)


def _series_array(array: Any) -> Any:
    # an object column as a frame holds it (Series.array), as the other arrays are
    return pd.arrays.NumpyExtensionArray(array) if isinstance(array, np.ndarray) else array


def _column_to_arrow(values: Any) -> tuple[pa.Array, str | None]:
    if type(values) is UnbuiltColumn:
        if values.kind == "object":
            return _json_column(values.values)
        # as each pandas array converts itself (NaN is missing in a Float64 column)
        return pa.array(values.values, _UNBUILT_ARROW[values.kind], from_pandas=True), None
    dtype = _numpy_or_own(values.dtype)
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return _json_column(values)
    if isinstance(dtype, np.dtype):
        return pa.array(np.asarray(values)), None
    # pandas' extension arrays (string, Int64, boolean, datetimes) convert themselves
    return pa.array(values, from_pandas=True), None


def _json_column(cells: Any) -> tuple[pa.Array, str]:
    return pa.array(canonical_cells(cells), type=pa.string()), JSON_ENCODING


def _numpy_or_own(dtype: Any) -> Any:
    """The numpy dtype a ``NumpyExtensionArray`` wraps, else the dtype itself."""
    if type(dtype).__name__ == "NumpyEADtype":  # not public API to isinstance against
        return getattr(dtype, "numpy_dtype", dtype)
    return dtype


def dtype_metadata(dtype: Any) -> bytes:
    """A column dtype's field metadata value (``mddframes.dtype``), kept per dtype.

    Parameters
    ----------
    dtype : numpy or pandas dtype
        A column's dtype.

    Returns
    -------
    bytes
        The JSON that :func:`arrow_to_frame` turns back into the dtype; equal bytes,
        equal Arrow column type.
    """
    try:
        return _DTYPE_METADATA[dtype]
    except KeyError:
        pass
    except TypeError:  # pragma: no cover - an unhashable dtype: not kept
        return json.dumps(_dtype_spec(dtype)).encode()
    encoded = _DTYPE_METADATA[dtype] = json.dumps(_dtype_spec(dtype)).encode()
    return encoded


_DTYPE_METADATA: dict[Any, bytes] = {}


def column_metadata(array: Any) -> bytes:
    """:func:`dtype_metadata` of a column's dtype, without hashing the dtype of an
    :class:`~mddframes.codec.dtypes.UnbuiltColumn` (a pandas dtype hashes in Python).

    Parameters
    ----------
    array : array or UnbuiltColumn
        A column, as :func:`arrays_to_arrow` takes it.

    Returns
    -------
    bytes
        ``dtype_metadata(array.dtype)``.
    """
    if type(array) is UnbuiltColumn:
        return _UNBUILT_METADATA[array.kind]
    return dtype_metadata(array.dtype)


def _dtype_spec(dtype: Any) -> dict[str, Any]:
    dtype = _numpy_or_own(dtype)
    if isinstance(dtype, pd.StringDtype):
        na = "nan" if dtype.na_value is not pd.NA else "NA"
        return {"kind": "string", "storage": dtype.storage, "na": na}
    return {"kind": "other", "name": str(dtype)}


def _dtype_of(spec: dict[str, Any]) -> Any:
    if spec["kind"] == "string":
        if spec["na"] == "NA" or spec["storage"] == "pyarrow_numpy":
            # pandas 2.2 has no na_value argument: its NaN variant is a storage of its own
            return pd.StringDtype(storage=spec["storage"])
        return pd.StringDtype(storage=spec["storage"], na_value=np.nan)
    return pd.api.types.pandas_dtype(spec["name"])


def _column_from_arrow(
    column: pa.ChunkedArray, spec: dict[str, Any] | None, encoding: str | None
) -> Any:
    if encoding == JSON_ENCODING:
        cells = column.to_pylist()
        out = np.empty(len(cells), dtype=object)
        out[:] = [None if c is None else depth.loads(c, what="a snapshot cell") for c in cells]
        dtype = None if spec is None else _dtype_of(spec)
        if dtype is None or (isinstance(dtype, np.dtype) and dtype.kind == "O"):
            return out
        # a name of several types in a snapshot's files (snapshot/merged.py): JSON text
        # in every file, each field keeping the dtype of its own table's column
        return _typed_from_json(out, dtype)
    if spec is None:  # a file not written by mddframes: Arrow's own conversion
        return column.to_pandas()
    dtype = _dtype_of(spec)
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and hasattr(dtype, "__from_arrow__"):
        return dtype.__from_arrow__(column)
    return column.to_pandas().astype(dtype).array


def _typed_from_json(values: np.ndarray, dtype: Any) -> Any:
    """The array of ``dtype`` that JSON-text cells were written from (ISO text for dates)."""
    if isinstance(dtype, pd.DatetimeTZDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "M"):
        unit = np.datetime_data(dtype.base if isinstance(dtype, np.dtype) else
                                np.dtype(f"datetime64[{dtype.unit}]"))[0]  # fmt: skip
        texts = ["NaT" if v is None else v.removesuffix("Z") for v in values]
        index = pd.DatetimeIndex(np.array(texts, dtype=f"datetime64[{unit}]"))
        tz = getattr(dtype, "tz", None)
        return (index if tz is None else index.tz_localize(tz)).array
    return pd.array(list(values), dtype=dtype)


_UNBUILT_METADATA = {kind: dtype_metadata(dtype) for kind, dtype in UNBUILT_DTYPES.items()}
