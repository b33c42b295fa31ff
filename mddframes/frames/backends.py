"""Frames under pandas' two dtype backends, and polars frames, in and out of mddframes.

Every reader builds its frame once, with the numpy-nullable dtypes the codec works in
(``string``, ``Int64``, ``Float64``, ``boolean``, ``datetime64``, ``object``), and
:func:`to_backend` turns it into ``pd.ArrowDtype`` columns when the caller asks for
``dtype_backend="pyarrow"``. Every writer takes what the user hands it through
:func:`from_user_frame`, which turns Arrow-backed columns and polars frames back into
exactly the frame the numpy-nullable read of the same content gives: the overlay, the
fingerprint and the payload then never see a backend. :func:`to_polars` is the polars
reader path (Arrow buffers handed to polars, no object columns in between).

How values travel (docs/guide/arrow.md has the table):

- integers within int64 -> ``int64``; floats -> ``double`` (``-0.0`` and ``NaN`` kept
  bit for bit, ``NaN`` is a value and null is null); booleans -> ``bool``; strings ->
  ``string`` (UTF-8, exact); date-times -> ``timestamp`` with the read's unit and time
  zone.
- values with no exact Arrow type (integers beyond 64 bits, JSON objects and lists,
  columns of mixed JSON types) stay an ``object`` column holding the exact Python
  values, under either backend (and a polars ``Object`` column): never rounded, never
  re-encoded.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

import numpy as np
import pandas as pd

from mddframes.codec.frame import INDEX_NAME
from mddframes.doc_sections import documented_with
from mddframes.errors import DataShapeError, InvalidArgumentError, MissingDependencyError
from mddframes.frames.record_frames import string_array

if TYPE_CHECKING:
    import polars as pl

#: The dtype backends a reader takes, with pandas' meaning.
DtypeBackend = Literal["numpy_nullable", "pyarrow"]

#: The accepted values of ``dtype_backend``.
DTYPE_BACKENDS: tuple[str, ...] = get_args(DtypeBackend)

_INT64_MAX = 2**63 - 1


def require_module(name: Literal["pyarrow", "polars"], *, extra: str) -> ModuleType:
    """The optional module ``name``, or a clear error naming the extra that installs it.

    Parameters
    ----------
    name : {"pyarrow", "polars"}
        The module to import.
    extra : str
        The mddframes extra that installs it (``arrow``, ``polars``).

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingDependencyError
        The module is not installed.
    """
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise MissingDependencyError(
            f"{name} is not installed: install it with pip install 'mddframes[{extra}]'"
        ) from error


def check_dtype_backend(dtype_backend: object) -> DtypeBackend:
    """``dtype_backend`` checked: one of :data:`DTYPE_BACKENDS`, its library installed.

    Parameters
    ----------
    dtype_backend : {"numpy_nullable", "pyarrow"}
        What a reader was given.

    Returns
    -------
    {"numpy_nullable", "pyarrow"}
        The same value.

    Raises
    ------
    InvalidArgumentError
        Another value.
    MissingDependencyError
        ``"pyarrow"`` without pyarrow importable (a core dependency; the ``arrow`` extra reinstalls it).
    """
    if dtype_backend == "numpy_nullable":
        return "numpy_nullable"
    if dtype_backend == "pyarrow":
        require_module("pyarrow", extra="arrow")
        return "pyarrow"
    raise InvalidArgumentError(
        f"dtype_backend must be one of {', '.join(map(repr, DTYPE_BACKENDS))}, "
        f"not {dtype_backend!r}"
    )


#: The ``dtype_backend`` entry of a reader's parameters, written once: the reader's
#: docstring holds the line ``{dtype_backend}`` and :func:`backend_documented` fills it.
DTYPE_BACKEND_DOC = """\
dtype_backend : {"numpy_nullable", "pyarrow"}, default "numpy_nullable"
    The frame's dtypes, as in pandas' readers: ``"pyarrow"`` gives ``pd.ArrowDtype``
    columns (values no Arrow type holds exactly stay
    ``object``, see :func:`~mddframes.frames.backends.to_backend`)."""

_BACKEND_DOCUMENTED = documented_with({"dtype_backend": DTYPE_BACKEND_DOC}, "dtype_backend")
_Documented = TypeVar("_Documented")


def backend_documented(function: _Documented) -> _Documented:
    """``function``, its docstring's ``{dtype_backend}`` line replaced by
    :data:`DTYPE_BACKEND_DOC` (indented as that line), and its shared ``{api}``,
    ``{max_workers}`` and ``{progress}`` lines filled (:mod:`mddframes.doc_sections`).

    Raises
    ------
    ValueError
        The docstring has no ``{dtype_backend}`` line (a decorator that would do nothing).
    """
    return _BACKEND_DOCUMENTED(function)


def to_backend(
    frame: pd.DataFrame, dtype_backend: DtypeBackend, *, consume: bool = False
) -> pd.DataFrame:
    """``frame`` (as a reader built it) with the dtypes of ``dtype_backend``.

    Parameters
    ----------
    frame : pandas.DataFrame
        A frame with numpy-nullable dtypes.
    dtype_backend : {"numpy_nullable", "pyarrow"}
        ``"numpy_nullable"`` returns ``frame`` itself; ``"pyarrow"`` a frame of
        ``pd.ArrowDtype`` columns with the same index, column names and ``attrs``
        (``object`` columns, which hold values no Arrow type holds exactly, stay
        ``object``).
    consume : bool, default False
        Take the columns out of ``frame`` as they are converted (a reader's own frame),
        so that a column's Python objects are freed before the next one is converted:
        the peak is then about one column above the larger of the two frames, not
        their sum. ``frame`` is left without columns (and without attrs).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    InvalidArgumentError, MissingDependencyError
        As :func:`check_dtype_backend`.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"n": pd.array([1, None], dtype="Int64")})
    >>> to_backend(frame, "pyarrow").dtypes["n"]
    int64[pyarrow]
    """
    if check_dtype_backend(dtype_backend) == "numpy_nullable":
        return frame
    names, attrs = frame.columns, dict(frame.attrs)
    # each column taken out as a Series gets a deep copy of attrs (pandas' __finalize__):
    # a long frame's attrs list every object's columns, so the columns are taken from a
    # frame without them
    if not consume or frame.columns.has_duplicates:
        bare = frame.copy(deep=False) if attrs else frame
        bare.attrs = {}
        arrays = [arrow_array(bare.iloc[:, i].array) for i in range(bare.shape[1])]
        return assemble_frame(arrays, frame.index, names, attrs)
    frame.attrs = {}
    arrays = [arrow_array(frame.pop(name).array) for name in list(names)]
    return assemble_frame(arrays, frame.index, names, attrs)


def assemble_frame(
    arrays: list[Any], index: pd.Index, names: pd.Index, attrs: dict[Any, Any] | None = None
) -> pd.DataFrame:
    """A frame of ``arrays`` with this index, these column names and ``attrs``; object
    arrays stay ``object`` (pandas 3 would make an all-strings one ``str``, and a JSON
    column whose values happen to be strings must still take a dict)."""
    columns = {
        i: pd.Series(array, index=index, dtype=object, copy=False)
        if pd.api.types.is_object_dtype(array.dtype)
        else pd.Series(array, index=index, copy=False)
        for i, array in enumerate(arrays)
    }
    out = pd.DataFrame(columns, index=index, copy=False)
    out.columns = names
    out.attrs = dict(attrs or {})
    return out


def arrow_array(array: Any) -> Any:
    """One column's array as a ``pd.ArrowDtype`` array (the conversion of :func:`to_backend`).

    Parameters
    ----------
    array : pandas.api.extensions.ExtensionArray
        A column's array (``Series.array``).

    Returns
    -------
    pandas.api.extensions.ExtensionArray
        An ``ArrowExtensionArray`` of the same values (``string``, ``int64``, ``double``,
        ``bool``, ``timestamp``), or ``array`` itself when it is Arrow-backed already or
        holds values no Arrow type holds exactly (``object``; a ``string`` column with a
        lone surrogate, which has no UTF-8, stays ``string``).
    """
    pa = require_module("pyarrow", extra="arrow")
    if isinstance(array.dtype, pd.ArrowDtype) or pd.api.types.is_object_dtype(array.dtype):
        return array
    if isinstance(array.dtype, pd.StringDtype):
        # the column's str objects encoded once into one UTF-8 buffer
        try:
            values = pa.array(np.asarray(array, dtype=object), type=pa.string(), from_pandas=True)
        except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON)
            return array
    else:
        try:
            values = pa.array(array)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            return array  # nothing exact to make of it: left as it is
    return pd.arrays.ArrowExtensionArray(values)


def from_user_frame(frame: Any, *, what: str = "frame", keep_arrow: bool = False) -> pd.DataFrame:
    """A frame a user hands a writer, in the numpy-nullable form the codec works in.

    The one place a writer's input is normalised: ``pd.ArrowDtype`` columns become
    the numpy-nullable arrays the read of the
    same content gives, so the payload is exactly that frame's; a polars DataFrame
    becomes a pandas frame whose index is its ``row`` column (the original positions
    :func:`to_polars` put there; a null ``row`` is a new row), or positions
    ``0..n-1`` when it has none. Other frames are returned as they are.

    Parameters
    ----------
    frame : pandas.DataFrame or polars.DataFrame
        What the writer was given.
    what : str, default "frame"
        How an error names it.
    keep_arrow : bool, default False
        Return a pandas frame's Arrow-backed columns as they are (a polars frame's
        columns as ``pd.ArrowDtype`` ones over its Arrow data): for the streamed
        write, which converts only the slices it needs (:func:`default_slice`), so a
        one-cell edit never turns a whole Arrow frame into Python objects; the caller
        calls again without it before any other use.

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself when it holds no Arrow-backed column (or ``keep_arrow``), else
        a new frame with the same index, columns and ``attrs``.

    Raises
    ------
    DataShapeError
        A polars frame whose ``row`` column is not integers.

    Notes
    -----
    Arrow types map back as follows: any integer type -> ``Int64`` (``uint64`` values
    beyond int64 -> ``object`` Python ints); any float type -> ``Float64`` (``NaN``
    stays a value, null becomes NA); ``bool`` -> ``boolean``; ``string``,
    ``large_string``, ``string_view`` -> ``string``; ``timestamp`` -> ``datetime64``
    with its unit and time zone; ``date32``/``date64`` -> ``datetime64[s]``; every other
    type (lists, structs, decimals, ...) -> ``object`` holding ``to_pylist()`` values.
    """
    if _is_polars(frame):
        return _from_polars(frame, what=what, keep_arrow=keep_arrow)
    if not isinstance(frame, pd.DataFrame):
        return frame  # type: ignore[no-any-return]  # the writer names the wrong type
    if keep_arrow:
        return frame
    return numpy_nullable_frame(frame)


def numpy_nullable_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each ``pd.ArrowDtype`` column as the numpy-nullable array the
    default read gives of the same values (:func:`numpy_nullable_array`; the mapping is
    in :func:`from_user_frame`, Notes).

    Parameters
    ----------
    frame : pandas.DataFrame
        A frame, Arrow-backed in some columns or none.

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself when no column is Arrow-backed, else a new frame with the same
        index, columns and ``attrs``.
    """
    positions = [i for i, dtype in enumerate(frame.dtypes) if _arrow_backed(dtype)]
    if not positions:
        return frame
    arrays = [frame.iloc[:, i].array for i in range(frame.shape[1])]
    for i in positions:
        arrays[i] = numpy_nullable_array(arrays[i])
    return assemble_frame(arrays, frame.index, frame.columns, frame.attrs)


def _arrow_backed(dtype: Any) -> bool:
    # pandas' own ``string`` dtypes are left alone, whatever their storage: the readers
    # make some columns ``string`` (pyarrow storage when pyarrow is installed) and the
    # codec takes them as they are
    return isinstance(dtype, pd.ArrowDtype)


def default_slice(array: Any) -> Any:
    """A column's array (or a slice of one) as :func:`from_user_frame` converts it.

    Parameters
    ----------
    array : pandas.api.extensions.ExtensionArray or numpy.ndarray
        ``frame[name].array``, or a slice of it.

    Returns
    -------
    pandas.api.extensions.ExtensionArray or numpy.ndarray
        :func:`numpy_nullable_array` of an Arrow-backed array; any other array as it is.
    """
    return numpy_nullable_array(array) if _arrow_backed(array.dtype) else array


def numpy_nullable_array(array: Any) -> Any:
    """One Arrow-backed column as the numpy-nullable array of the same values.

    Parameters
    ----------
    array : pandas.arrays.ArrowExtensionArray
        A ``pd.ArrowDtype`` column's array.

    Returns
    -------
    pandas.api.extensions.ExtensionArray or numpy.ndarray
        The array the default read of the same values gives (the mapping is in
        :func:`from_user_frame`, Notes); an ``object`` ndarray for types with none.
    """
    pa = require_module("pyarrow", extra="arrow")
    if isinstance(array.dtype, pd.StringDtype):
        chunked = pa.chunked_array([pa.array(array)])
    else:
        chunked = pa.chunked_array(array._pa_array)  # a ChunkedArray already
    return _from_chunked(chunked)


def default_array(chunked: Any) -> Any:
    """A pyarrow ChunkedArray as the numpy-nullable array the default read gives of it.

    Parameters
    ----------
    chunked : pyarrow.ChunkedArray
        Arrow data of one column (or a slice of one).

    Returns
    -------
    pandas.api.extensions.ExtensionArray or numpy.ndarray
        As :func:`numpy_nullable_array` (the mapping is in :func:`from_user_frame`, Notes).
    """
    return _from_chunked(chunked)


def _from_chunked(chunked: Any) -> Any:
    """The numpy-nullable array of one pyarrow ChunkedArray."""
    pa = require_module("pyarrow", extra="arrow")
    types = pa.types
    kind = chunked.type
    if types.is_dictionary(kind):
        return _from_chunked(chunked.cast(kind.value_type))
    if types.is_string(kind) or types.is_large_string(kind) or types.is_string_view(kind):
        values = chunked.to_numpy(zero_copy_only=False)
        return string_array(np.asarray(values, dtype=object))
    mask = chunked.is_null().to_numpy(zero_copy_only=False) if chunked.null_count else None
    if types.is_boolean(kind):
        data = chunked.fill_null(False).to_numpy(zero_copy_only=False)
        return pd.arrays.BooleanArray(data, _mask(mask, len(chunked)))
    if types.is_integer(kind):
        if types.is_uint64(kind) and chunked.null_count < len(chunked):
            if pa.compute.max(chunked).as_py() > _INT64_MAX:
                return _objects(chunked)
        data = chunked.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        return pd.arrays.IntegerArray(data, _mask(mask, len(chunked)))
    if types.is_floating(kind):
        data = chunked.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
        return pd.arrays.FloatingArray(data, _mask(mask, len(chunked)))
    if types.is_timestamp(kind):
        return chunked.to_pandas().array
    if types.is_date(kind):
        return chunked.cast(pa.timestamp("s")).to_pandas().array
    return _objects(chunked)


def _mask(mask: np.ndarray | None, size: int) -> np.ndarray:
    return np.zeros(size, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)


def _objects(chunked: Any) -> np.ndarray:
    values = np.empty(len(chunked), dtype=object)
    values[:] = chunked.to_pylist()
    return values


def _is_polars(frame: Any) -> bool:
    return type(frame).__module__.split(".")[0] == "polars" and hasattr(frame, "to_arrow")


def _from_polars(frame: pl.DataFrame, *, what: str, keep_arrow: bool = False) -> pd.DataFrame:
    """A polars frame as the numpy-nullable pandas frame of the same content (with
    ``keep_arrow``, its columns as ``pd.ArrowDtype`` ones over polars' Arrow data)."""
    polars = require_module("polars", extra="polars")
    names = list(frame.columns)
    index: pd.Index = pd.RangeIndex(frame.height, name=INDEX_NAME)
    if INDEX_NAME in names:
        index = _polars_index(frame.get_column(INDEX_NAME), what=what)
        names.remove(INDEX_NAME)
    arrays: dict[str, Any] = {}
    for name in names:
        column = frame.get_column(name)
        if column.dtype == polars.Object:
            values = np.empty(len(column), dtype=object)
            values[:] = column.to_list()
            arrays[name] = values
        elif keep_arrow:
            arrays[name] = pd.arrays.ArrowExtensionArray(_chunked(column.to_arrow()))
        else:
            arrays[name] = _from_chunked(_chunked(column.to_arrow()))
    columns = {
        name: pd.Series(array, index=index, dtype=object, copy=False)
        if isinstance(array, np.ndarray)
        else pd.Series(array, index=index, copy=False)
        for name, array in arrays.items()
    }
    return pd.DataFrame(columns, index=index, copy=False) if columns else pd.DataFrame(index=index)


def _polars_module() -> ModuleType:
    """polars, or the error naming the ``mddframes[polars]`` extra."""
    return require_module("polars", extra="polars")


def _chunked(array: Any) -> Any:
    pa = require_module("pyarrow", extra="arrow")
    return array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])


def _polars_index(column: pl.Series, *, what: str) -> pd.Index:
    """The index of a polars frame from its ``row`` column; nulls (new rows) get labels
    after the largest one."""
    if not column.dtype.is_integer():
        raise DataShapeError(
            f"{what}: the polars column {INDEX_NAME!r} holds each row's original position "
            f"and must be integers, not {column.dtype}"
        )
    gaps = column.is_null().to_numpy()
    labels: np.ndarray = column.fill_null(0).cast(_polars_module().Int64).to_numpy().copy()
    if gaps.any():
        start = int(labels[~gaps].max()) + 1 if (~gaps).any() else 0
        labels[gaps] = np.arange(start, start + int(gaps.sum()))
    if np.array_equal(labels, np.arange(len(labels))):
        # the rows as read, in order: the RangeIndex a read gives (the fingerprint's)
        return pd.RangeIndex(len(labels), name=INDEX_NAME)
    index: pd.Index = pd.Index(labels.astype(np.int64), name=INDEX_NAME)
    return index


def to_polars(frame: pd.DataFrame) -> pl.DataFrame:
    """A frame mddframes read, as a polars DataFrame (the polars reader path).

    The index becomes the first column, ``row`` (each row's original position: keep it,
    it is how the writers know which row is which; give new rows a null ``row``).
    Columns go through Arrow: an Arrow-backed frame (``dtype_backend="pyarrow"``) hands
    its buffers to polars without a copy where polars' types allow; ``object`` columns
    (values no Arrow type holds exactly) become polars ``Object`` columns of the same
    Python values. Every writer takes the polars frame back (:func:`from_user_frame`).

    Parameters
    ----------
    frame : pandas.DataFrame
        A frame from any reader, of either dtype backend.

    Returns
    -------
    polars.DataFrame

    Raises
    ------
    MissingDependencyError
        polars or pyarrow is not installed (``mddframes[polars]``).
    DataShapeError
        The frame has a column named ``row``, or column names that are not strings.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"n": pd.array([1, None], dtype="Int64")})
    >>> to_polars(frame).columns
    ['row', 'n']
    """
    polars = require_module("polars", extra="polars")
    pa = require_module("pyarrow", extra="polars")
    names = list(frame.columns)
    if INDEX_NAME in names or not all(isinstance(name, str) for name in names):
        raise DataShapeError(
            f"to_polars: the columns must be strings other than {INDEX_NAME!r} "
            f"(the index goes there), got {names[:5]!r}"
        )
    index = frame.index
    series = [polars.Series(INDEX_NAME, pa.array(np.asarray(index), type=pa.int64()))]
    if not pd.api.types.is_integer_dtype(index.dtype):
        series = [polars.Series(INDEX_NAME, index.tolist(), dtype=polars.Object)]
    for i, name in enumerate(names):
        array = arrow_array(frame.iloc[:, i].array)
        if isinstance(array.dtype, pd.ArrowDtype):
            series.append(polars.Series(name, pa.chunked_array(array._pa_array)))
        else:
            series.append(polars.Series(name, list(array), dtype=polars.Object))
    out: pl.DataFrame = polars.DataFrame(series)
    return out
