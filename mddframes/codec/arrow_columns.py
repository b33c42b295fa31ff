"""Column batches kept as Arrow arrays, and a column's Arrow array straight from them.

Under ``dtype_backend="pyarrow"`` a streamed read (:mod:`mddframes.codec.stream`) packs
each batch of a text column into a pyarrow ``string`` array while the batch's Python
values exist anyway (:func:`pack_arrow_batch`), instead of one joined ``str`` that the
default read splits into a whole column of ``str`` objects later. :func:`arrow_column`
then makes the column one ``pa.chunked_array`` of its batches: no column of Python
objects ever exists. It does so only where the default read's dtype is the plain image
of the Arrow type (``string``, ``Int64``, ``Float64``, ``boolean``: what
:func:`~mddframes.frames.backends.arrow_array` turns them into), and for declared
DATE/TIMESTAMP text, parsed a batch at a time (:func:`date_column`); for anything else
(ints declared DECIMAL or FLOAT, JSON columns, mixed types, big ints, all-null columns)
it says None and the column takes the default route, from the same batches.

pyarrow (a core dependency) is imported only when this route is taken.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from mddframes.codec.column_batches import pack_batch, packed_numbers
from mddframes.codec.dtypes import conform_datetimes, datetime_array, type_family

_NONE = type(None)

# the declared families whose default array is not the plain image of each kind's
# Arrow type (see mddframes.codec.dtypes.column_array)
_NOT_PLAIN: dict[str, frozenset[str]] = {
    "str": frozenset({"date", "datetime", "json"}),
    "int": frozenset({"float", "decimal", "json"}),
    "float": frozenset({"decimal", "json"}),
    "bool": frozenset({"json"}),
}
_KIND_OF_NUMPY = {"i": "int", "f": "float", "b": "bool"}


def _pyarrow() -> Any:
    return importlib.import_module("pyarrow")


def read_pool() -> Any:
    """The Arrow memory pool of the pyarrow reads (tables and trees): the system allocator.

    pyarrow's default pool (mimalloc or jemalloc in the wheels) keeps the pages of freed
    buffers for reuse, and a read makes many short-lived ones (one array per batch of
    each column, each grown by doubling; a tree's parent lookup and path labels): with
    it the resident peak is what is live plus what was freed (the measured cost is in
    docs/performance.md, "Figures moved out of the code"). The system allocator hands
    large freed blocks back at once.
    """
    return _pyarrow().system_memory_pool()


class ArrowText:
    """One batch of a text column as a pyarrow ``string`` array (nulls for the Nones)."""

    __slots__ = ("array",)

    def __init__(self, array: Any) -> None:
        self.array = array

    def values(self) -> list[Any]:
        """The batch's values as the default read has them (``None`` for a null)."""
        values: list[Any] = self.array.to_pylist()
        return values


def pack_arrow_batch(values: list[Any]) -> Any:
    """A batch of a column's values packed for the Arrow route.

    Strings (and Nones) become an :class:`ArrowText`; anything else is packed as
    :func:`~mddframes.codec.column_batches.pack_batch` packs it.

    Parameters
    ----------
    values : list
        One value per row of the batch (``None`` for a null or an absent key).

    Returns
    -------
    ArrowText or what ``pack_batch`` returns
        Every form gives the values back exactly (``values()``, or ``unpack``).
    """
    types = set(map(type, values))
    types.discard(_NONE)
    if types != {str}:
        return pack_batch(values)
    pa = _pyarrow()
    try:
        return ArrowText(pa.array(values, type=pa.string(), memory_pool=read_pool()))
    except (pa.ArrowException, UnicodeError):  # a lone surrogate has no UTF-8
        return values


def arrow_column(parts: list[Any], data_type: Any) -> Any | None:
    """The pyarrow ChunkedArray of a column's packed batches, or None.

    Parameters
    ----------
    parts : list
        The column's batches as :class:`~mddframes.codec.column_batches.ColumnBatches`
        packed them with :func:`pack_arrow_batch` (an int: that many nulls).
    data_type : str or None
        The column's declared ``dataType``.

    Returns
    -------
    pyarrow.ChunkedArray or None
        The array ``arrow_array(column_array(values, data_type))`` would give (same type,
        same values, nulls where the default array is NA); None when the default array
        is not the plain image of one Arrow type, or may not be: the caller then builds
        the column the default way.
    """
    kinds = {_kind(part) for part in parts}
    kinds.discard("gap")
    if len(kinds) != 1:
        return None  # mixed, lists (nested values, big ints...), or all null
    kind = kinds.pop()
    family = type_family(data_type)
    if family is None and data_type is not None and kind != "str":
        return None  # a table's undeclared key or unknown type: object unless text
    if kind == "str" and family in ("date", "datetime"):
        return date_column(parts)
    if kind is None or family in _NOT_PLAIN[kind]:
        return None
    if kind == "float" and not any(_has_number(part) for part in parts):
        return None  # only NaN and nulls: the default read counts them all missing
    pa = _pyarrow()
    arrow_type = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(),
                  "bool": pa.bool_()}[kind]  # fmt: skip
    chunks = [_chunk(part, arrow_type, pa) for part in parts]
    return pa.chunked_array(chunks, type=arrow_type)


def date_column(parts: list[Any]) -> Any | None:
    """A declared DATE/TIMESTAMP text column's Arrow timestamps, parsed a batch at a time.

    The default read parses the whole column's ``str`` objects at once (about 60 bytes
    each, twice the Arrow column's size for a date column, all alive together); here
    only one batch's exist at a time.

    Parameters
    ----------
    parts : list
        The column's batches: :class:`ArrowText` arrays and ints (that many nulls).

    Returns
    -------
    pyarrow.ChunkedArray or None
        The column the default read's :func:`~mddframes.codec.dtypes.datetime_array`
        of all the values gives, converted to Arrow; None when any batch keeps its
        strings or the batches parse to different dtypes (several zones, naive and
        aware, a finer unit in one batch): only the whole column's parse can say then;
        None too for a zone other than UTC (see the code).
        The concatenation of batches of one dtype is that parse: each batch's values
        are their exact instants, and the whole column takes the same dtype.
    """
    pa = _pyarrow()
    parsed: list[Any] = []
    for part in parts:
        if type(part) is ArrowText:
            array = datetime_array(part.values())
            array = None if array is None else conform_datetimes(array)
            if array is None or (parsed and array.dtype != parsed[0].dtype):
                return None
            parsed.append(array)
    if not parsed:
        return None
    arrow_type = pa.array(parsed[0][:0]).type
    if arrow_type.tz not in (None, "UTC"):
        # a fixed offset comes back from Arrow as another tzinfo than the parse's on
        # pandas 2.x (datetime.timezone, not pytz's FixedOffset): the fingerprint's dtype
        # would differ from the default read's
        return None
    chunks = iter(parsed)
    return pa.chunked_array(
        [
            pa.nulls(part, type=arrow_type, memory_pool=read_pool())
            if type(part) is int
            else pa.array(next(chunks), type=arrow_type, memory_pool=read_pool())
            for part in parts
        ],
        type=arrow_type,
    )


def _kind(part: Any) -> str | None:
    if type(part) is int:
        return "gap"
    if type(part) is ArrowText:
        return "str"
    numbers = packed_numbers(part)
    return None if numbers is None else _KIND_OF_NUMPY.get(numbers[0].dtype.kind)


def _has_number(part: Any) -> bool:
    numbers = packed_numbers(part)
    if numbers is None:
        return False
    data, missing = numbers
    present = ~np.isnan(data)
    if missing is not None:
        present &= ~missing
    return bool(present.any())


def _chunk(part: Any, arrow_type: Any, pa: Any) -> Any:
    if type(part) is int:
        return pa.nulls(part, type=arrow_type, memory_pool=read_pool())
    if type(part) is ArrowText:
        return part.array
    numbers = packed_numbers(part)
    assert numbers is not None  # arrow_column took only these three forms
    data, mask = numbers
    if data.dtype.kind == "f":
        # NaN is missing in the default read's Float64 column, as a null is
        nan = np.isnan(data)
        mask = nan if mask is None else mask | nan
    return pa.array(data, type=arrow_type, mask=mask, memory_pool=read_pool())
