"""Stacking frames or column sets with the union of their columns, dtypes kept."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np
import pandas as pd


def stacked_dtype(array: Any) -> Any:
    """The dtype a column array has once stacked (:func:`concat_column_sets`): a numpy
    int/bool/float dtype's nullable twin, any other dtype as it is."""
    return nullable_dtype(getattr(array.dtype, "numpy_dtype", array.dtype))


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


def concat_column_sets(
    parts: list[dict[Any, Any]], indexes: list[pd.Index], *, as_object: Collection[Any] = ()
) -> pd.DataFrame:
    """Stack column sets (``{name: array}``, one per frame) into one frame.

    A column that every part holding it stores with one dtype keeps that dtype (its
    nullable twin for numpy ints/bools/floats); parts that lack it contribute NA of
    that dtype, so an ``Int64`` column stays ``Int64`` rather than drifting to float
    or object. A column whose dtypes disagree becomes ``object`` with every value as
    it was, and so does every column named in ``as_object`` (a name whose dtype an
    earlier chunk of the same run saw differ). Columns keep their order of first
    appearance; row indexes (``indexes``, one per part) are kept as they are (they may
    repeat across parts).

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
        if len(dtypes) == 1 and name not in as_object:
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
    # an object column stays object (pandas 3 would make one holding only strings ``str``)
    series = {
        name: pd.Series(array, index=index, dtype=object, copy=False)
        if pd.api.types.is_object_dtype(array.dtype)
        else array
        for name, array in data.items()
    }
    return pd.DataFrame(series, index=index, columns=columns, copy=False)


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
