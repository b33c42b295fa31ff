"""Depth, path and child counts of a tree held as Arrow columns (the pyarrow ``read_tree``).

:func:`walk_arrow` gives what ``tree._walk`` gives the default route, from Arrow columns
and with no Python string per element: parent positions from one hash lookup of the
parent ids in the ids, depth from ``tree``'s breadth-first walk on numpy, and each
path joined by Arrow in C from the labels of the element's ancestors, a block of
elements at a time and in element order (:func:`paths`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mddframes.codec.arrow_columns import read_pool
from mddframes.frames.backends import require_module
from mddframes.frames.tree_shape import PATH_SEP, child_index, warn_duplicates, warn_unreached


def as_object_series(array: Any) -> pd.Series:
    """An Arrow string column as ``object`` values (str, None for null): for messages."""
    return pd.Series(np.asarray(array.to_pylist(), dtype=object), dtype=object)


def walk_arrow(columns: dict[str, Any], size: int, what: str) -> tuple[Any, Any, Any]:
    """Depth, path and child count of every element, as ``tree._walk`` computes them.

    Parent positions come from one hash lookup of the parent ids in the ids
    (``index_in`` finds a duplicated id's first occurrence, where the default route
    attaches children too); depth from ``tree``'s breadth-first walk on numpy; the
    paths from :func:`paths`.

    Parameters
    ----------
    columns : dict
        At least ``id`` (no nulls), ``parent_id`` and ``name``: Arrow ``string``
        (chunked) arrays.
    size : int
        The number of elements.
    what : str
        What the tree is, for warnings.

    Returns
    -------
    tuple
        ``depth`` (``int64``, null where unreached), ``path`` (``string``, null where
        unreached) and ``n_children`` (``int64``), Arrow arrays in element order.

    Warns
    -----
    TreeIntegrityWarning
        Duplicated ids; orphans and parent cycles (as ``tree._walk``).
    """
    pa = require_module("pyarrow", extra="arrow")
    import pyarrow.compute as pc

    ids = columns["id"]
    parents = columns["parent_id"]
    pool = read_pool()
    value_set = ids.combine_chunks(memory_pool=pool)
    if pc.count_distinct(value_set, memory_pool=pool).as_py() != size:
        warn_duplicates(value_set.to_numpy(zero_copy_only=False), what)
    found = pc.index_in(parents, value_set=value_set, memory_pool=pool)
    del value_set
    parent_pos = numpy_of(pc.fill_null(found, -1), np.int64)
    has_parent = numpy_of(pc.is_valid(parents), bool)
    del found
    counts, children_of = child_index(parent_pos)
    depth = np.full(size, -1, dtype=np.int64)
    frontier = np.flatnonzero(~has_parent)
    level = 0
    while frontier.size:
        depth[frontier] = level
        frontier = children_of(frontier)
        level += 1
    unreached = depth < 0
    if unreached.any():
        warn_unreached(
            as_object_series(ids),
            as_object_series(parents),
            has_parent & (parent_pos < 0),
            unreached,
            parent_pos,
            counts,
            children_of,
            what,
        )
    del children_of, has_parent  # (the child index: as large as the ids' positions)
    names = columns["name"]
    label = names if names.null_count == 0 else pc.coalesce(names, ids, memory_pool=pool)
    path = paths(_combined(label, pool), parent_pos, depth, pa, pc)
    return (
        pa.array(depth, mask=unreached),
        path,
        pa.array(counts.astype(np.int64, copy=False)),
    )


#: Trees up to this deep get their paths block by block (:func:`_block_paths`).
JOIN_DEPTH = 32
#: Elements per block of :func:`_block_paths`.
PATH_BLOCK = 1 << 16


def paths(label: Any, parent_pos: np.ndarray, depth: np.ndarray, pa: Any, pc: Any) -> Any:
    """Every element's path (labels from the root joined by ``/``), null where unreached.

    Built in element order a block at a time, so that no copy of the whole column is
    ever needed beside it (the breadth-first order of ``tree._walk`` would have to be
    put back in element order: a second copy of every path). A tree deeper than
    :data:`JOIN_DEPTH` is done level by level instead (a join per ancestor would cost
    depth x elements).

    Parameters
    ----------
    label : pyarrow.Array
        Each element's label (its name, or its id when it has none), no nulls.
    parent_pos : numpy.ndarray
        Each element's parent position, -1 for none.
    depth : numpy.ndarray
        Each element's depth, -1 where unreached (from the walk).
    pa, pc : module
        ``pyarrow`` and ``pyarrow.compute``.

    Returns
    -------
    pyarrow.ChunkedArray
        ``string``, in element order.
    """
    size = len(depth)
    deepest = int(depth.max()) if size else -1
    if deepest < 0:
        return pa.chunked_array([pa.nulls(size, pa.string())], pa.string())
    if deepest > JOIN_DEPTH:
        return _level_paths(label, parent_pos, depth, pa, pc)
    blocks = [
        _block_paths(label, parent_pos, depth, start, min(start + PATH_BLOCK, size), pa, pc)
        for start in range(0, size, PATH_BLOCK)
    ]
    return pa.chunked_array(blocks, pa.string())


def _block_paths(
    label: Any, parent_pos: np.ndarray, depth: np.ndarray, start: int, stop: int, pa: Any, pc: Any
) -> Any:
    """The paths of elements ``start:stop``, depth by depth: the labels of an element's
    ancestors (one array per generation) joined root first, then put back in order."""
    # (no null padding joined with null_handling="skip": pyarrow 26 drops a trailing
    # all-null row from such a join's result)
    pool = read_pool()
    order = np.argsort(depth[start:stop], kind="stable")  # unreached (-1) first
    ordered_depth = depth[start:stop][order]
    cuts = np.flatnonzero(np.diff(ordered_depth)) + 1
    pieces = []
    for group in np.split(order, cuts):
        level = int(depth[start + group[0]])
        if level < 0:
            pieces.append(pa.nulls(group.size, pa.string()))
            continue
        ancestor = group + start
        generations = []
        for _ in range(level + 1):
            generations.append(pc.take(label, ancestor, memory_pool=pool))
            ancestor = parent_pos[ancestor]
        if level == 0:
            pieces.append(generations[0])
        else:
            pieces.append(
                pc.binary_join_element_wise(*reversed(generations), PATH_SEP, memory_pool=pool)
            )
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return pc.take(pa.concat_arrays(pieces, memory_pool=pool), inverse, memory_pool=pool)


def _level_paths(label: Any, parent_pos: np.ndarray, depth: np.ndarray, pa: Any, pc: Any) -> Any:
    """:func:`paths` of a deep tree: each level's paths from the level above, then put
    back in element order."""
    pool = read_pool()
    reached = np.flatnonzero(depth >= 0)
    order = reached[np.argsort(depth[reached], kind="stable")]
    bounds = np.searchsorted(depth[order], np.arange(int(depth.max()) + 2))
    rank = np.zeros(len(depth), dtype=np.int64)  # an element's place in its level
    levels: list[Any] = []
    for level in range(len(bounds) - 1):
        frontier = order[bounds[level] : bounds[level + 1]]
        own = pc.take(label, frontier, memory_pool=pool)
        if levels:
            above = pc.take(levels[-1], rank[parent_pos[frontier]], memory_pool=pool)
            own = pc.binary_join_element_wise(above, own, PATH_SEP, memory_pool=pool)
        rank[frontier] = np.arange(frontier.size)
        levels.append(own)
    where = np.full(len(depth), -1, dtype=np.int64)
    where[order] = np.arange(order.size)
    where_array = pa.array(where, mask=where < 0)
    return pc.take(pa.chunked_array(levels, pa.string()), where_array, memory_pool=pool)


def _combined(array: Any, pool: Any) -> Any:
    return array.combine_chunks(memory_pool=pool) if hasattr(array, "combine_chunks") else array


def numpy_of(array: Any, dtype: Any) -> np.ndarray:
    """A (chunked) Arrow array without nulls as one numpy array of ``dtype``.

    Parameters
    ----------
    array : pyarrow.Array or pyarrow.ChunkedArray
        Numbers or booleans, no nulls.
    dtype : numpy dtype
        The result's dtype.

    Returns
    -------
    numpy.ndarray
    """
    chunks = array.chunks if hasattr(array, "chunks") else [array]
    parts = [chunk.to_numpy(zero_copy_only=False) for chunk in chunks]
    if not parts:
        return np.zeros(0, dtype=dtype)
    return np.concatenate(parts).astype(dtype, copy=False)
