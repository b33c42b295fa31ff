"""Arrow pieces of the native route: the read's memory pool, and date columns parsed a
batch at a time.

pyarrow (a core dependency) is imported only when these are used.
"""

from __future__ import annotations

import importlib
from typing import Any

from mddframes.codec.dtypes import conform_datetimes, datetime_array


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


def date_column(parts: list[Any]) -> Any | None:
    """A declared DATE/TIMESTAMP text column's Arrow timestamps, parsed a batch at a time.

    The default read parses the whole column's ``str`` objects at once (about 60 bytes
    each, twice the Arrow column's size for a date column, all alive together); here
    only one batch's exist at a time.

    Parameters
    ----------
    parts : list
        The column's batches: pyarrow ``string`` arrays and ints (that many nulls).

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
        if type(part) is not int:
            array = datetime_array(part.to_pylist())
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
