"""The element tree of a system as a tidy DataFrame.

:func:`tree_frame` does the work on decoded JSON (no HTTP), :func:`read_tree` fetches
the tree through a client first. Depth, path and child counts are computed level by
level with numpy over parent positions (a breadth-first walk on a CSR child index),
so a 100,000-element tree costs a few vectorised passes, not a Python loop per row
with pandas in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from mddframes.codec.dtypes import STRING_DTYPE
from mddframes.codec.fastjson import gc_paused
from mddframes.codec.frame import frame_of_arrays
from mddframes.codec.values import JsonValue
from mddframes.doc_sections import documented
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.errors import TreeIntegrityWarning as TreeIntegrityWarning  # its old import path
from mddframes.frames.backends import (
    DtypeBackend,
    check_dtype_backend,
    numpy_nullable_frame,
    to_backend,
)
from mddframes.frames.record_frames import frame_from_objects, string_array
from mddframes.frames.shaping import snake_case, unwrap_list
from mddframes.frames.tree_shape import (
    CHILDREN_KEYS,
    ID_ALIASES,
    LEADING_COLUMNS,
    NAMED_LIMIT,
    PARENT_ALIASES,
    PATH_SEP,
    STRING_COLUMNS,
    child_index,
    warn_duplicates,
    warn_unreached,
    whole_versions,
)
from mddframes.wire.profile import ENTRY_ID_KEYS

if TYPE_CHECKING:
    from mddframes.api import Api


@documented
def read_tree(
    api: Api,
    system: str,
    *,
    types: str | Iterable[str] | None = None,
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame:
    """Read the element tree of a system as one row per element.

    Parameters
    ----------
    {api}
    system : str
        The system name.
    types : str or iterable of str, optional
        Keep only elements of these types (depth, path and ``n_children`` are still
        computed on the whole tree).
    dtype_backend : {"numpy_nullable", "pyarrow"}, default "numpy_nullable"
        The frame's dtypes, as in pandas' readers: ``"pyarrow"`` gives ``pd.ArrowDtype``
        columns (values no Arrow type holds exactly stay
        ``object``, see :func:`~mddframes.frames.backends.to_backend`). The frame is
        exactly ``to_backend(read_tree(api, system), "pyarrow")``. Either way it is
        built from the streamed answer, a batch of about 1 MiB at a time, straight into
        Arrow columns (:mod:`mddframes.frames.tree_arrow`), which the default backend
        then turns into its arrays; an answer that route cannot vouch for is decoded
        whole (:func:`tree_frame`).

    Returns
    -------
    pandas.DataFrame
        See :func:`tree_frame` for the columns.

    Raises
    ------
    InvalidArgumentError
        ``system`` is not a non-empty string, ``types`` is not strings, or
        ``dtype_backend`` is unknown.
    MissingDependencyError
        ``dtype_backend="pyarrow"`` without pyarrow installed.
    DataShapeError
        As :func:`tree_frame`.

    Warns
    -----
    TreeIntegrityWarning
        As :func:`tree_frame`.

    Notes
    -----
    Memory (``python -m benchmarks big_tree``; the figures are in docs/performance.md):
    a fraction of the default backend's with ``dtype_backend="pyarrow"``, whose
    columns hold no Python ``str`` objects (ids, names, types, parent ids, paths). For
    a large tree, ask for ``"pyarrow"``.

    Examples
    --------
    >>> tree = client.read_tree("DWH", dtype_backend="pyarrow")
    >>> tree.dtypes["path"]
    string[pyarrow]
    """
    if not isinstance(system, str) or not system:
        raise InvalidArgumentError(f"system must be a non-empty string, got {system!r}")
    check_dtype_backend(dtype_backend)
    what = f"tree of system {system!r}"
    # no cyclic GC passes over the element objects while they are decoded and framed
    with gc_paused():
        from mddframes.frames.tree_arrow import read_tree_arrow  # (it imports this module)

        frame = read_tree_arrow(api, system, types=_normalise_types(types), what=what)
        if frame is not None and dtype_backend == "numpy_nullable":
            # 0.83x of the floor against 1.21x for the whole answer's route on 100,000
            # elements (docs/performance.md)
            frame = numpy_nullable_frame(frame)
        if frame is None:
            payload = api.get_tree(system)
            frame = to_backend(tree_frame(payload, types=types, what=what), dtype_backend,
                               consume=True)  # fmt: skip
    api.known_ids.remember_tree(system, frame)  # a later 404's close matches
    return frame


def tree_frame(
    payload: JsonValue,
    *,
    types: str | Iterable[str] | None = None,
    what: str = "tree",
) -> pd.DataFrame:
    """Turn a decoded tree response into a tidy frame, one row per element.

    Accepted shapes: a flat list of elements with parent ids, or nested elements
    with a ``children`` list (each child's parent is the element holding it), bare,
    under an envelope key (``content``, ``items``, ``data``, ``elements``, ...), or a
    single root object. Field names may be camelCase or snake_case.

    Parameters
    ----------
    payload : Any
        The decoded JSON of the tree response.
    types : str or iterable of str, optional
        Keep only elements of these types, after depth and path were computed on
        the whole tree. The row index is then renumbered from 0.
    what : str, default "tree"
        What the payload is, for error and warning messages.

    Returns
    -------
    pandas.DataFrame
        Columns ``id``, ``name``, ``type``, ``parent_id`` (``string``), ``depth``
        (``Int64``, roots 0), ``path`` (``string``: the names from the root joined by
        ``/``; an element without a name contributes its id), ``n_children``
        (``Int64``, direct children in the whole tree), then every other field in
        snake_case, in order of first appearance, with nullable dtypes (``version``
        ``Int64``, ``deployed`` ``boolean``, ids ``string``; nested values stay as
        they are). Rows keep the order of the payload (nested shapes: pre-order).

    Raises
    ------
    DataShapeError
        When the payload holds no list of elements, an entry is not an object, or
        an element has no id.

    Warns
    -----
    TreeIntegrityWarning
        When elements have a parent id that is not in the tree (orphans) or sit in
        or under a parent cycle. They are kept with a missing ``depth`` and
        ``path``; the warning names them.
    """
    wanted = _normalise_types(types)
    entries = _entries(payload, what)
    frame = frame_from_objects(entries, what=what)
    if any(k in frame.columns for k in map(snake_case, CHILDREN_KEYS)):
        # Nested shape: detected from the columns, so a flat tree pays nothing for it.
        frame = frame_from_objects(_flatten_nested(entries, what), what=what)
    frame = _canonical_columns(frame, what)
    walked = dict(
        zip(
            LEADING_COLUMNS[4:],
            _walk(frame["id"], frame["parent_id"], frame["name"], what),
            strict=True,
        )
    )
    # One frame of the columns in their final order: inserting three columns and then
    # reordering would copy every column once more.
    columns = {
        name: walked[name] if name in walked else frame[name].array
        for name in [*LEADING_COLUMNS, *(c for c in frame.columns if c not in LEADING_COLUMNS)]
    }
    frame = frame_of_arrays(columns, frame.index)
    if wanted is not None:
        frame = frame[frame["type"].isin(wanted).fillna(False).to_numpy(dtype=bool)]
        frame = frame.reset_index(drop=True)
    return frame


def _normalise_types(types: str | Iterable[str] | None) -> list[str] | None:
    if types is None:
        return None
    if isinstance(types, str):
        return [types]
    try:
        wanted = list(types)
    except TypeError:
        raise InvalidArgumentError(
            f"types must be a type name or a list of type names, got {type(types).__name__}"
        ) from None
    bad = [t for t in wanted if not isinstance(t, str)]
    if bad:
        raise InvalidArgumentError(
            f"types must hold strings; got {bad[0]!r} ({type(bad[0]).__name__})"
        )
    return wanted


def _entries(payload: Any, what: str) -> list[Any]:
    """The flat list of element objects, whatever the shape of the payload."""
    if isinstance(payload, Mapping) and any(k in payload for k in CHILDREN_KEYS):
        if any(k in payload for k in ENTRY_ID_KEYS):
            payload = [payload]  # a single root object with its children
    return unwrap_list(payload, what=what)


def _children_key(entry: Mapping[str, Any]) -> str | None:
    for key in CHILDREN_KEYS:
        if isinstance(entry.get(key), list):
            return key
    return None


def _entry_id(entry: Mapping[str, Any]) -> Any:
    for key in ENTRY_ID_KEYS:
        if entry.get(key) is not None:
            return entry[key]
    return None


def _flatten_nested(entries: list[Any], what: str) -> list[Any]:
    """Pre-order flattening of nested ``children`` lists; each child gets ``parentId``.

    Iterative (an explicit stack), so a deep tree never hits the recursion limit;
    nested JSON cannot hold a cycle, so the walk always ends.
    """
    flat: list[Any] = []
    stack: list[tuple[Any, Any]] = [(e, None) for e in reversed(entries)]
    while stack:
        entry, parent_id = stack.pop()
        if not isinstance(entry, Mapping):
            flat.append(entry)  # frame_from_objects reports it with its position
            continue
        key = _children_key(entry)
        record = {k: v for k, v in entry.items() if k not in CHILDREN_KEYS or k != key}
        if parent_id is not None and not any(
            record.get(k) is not None for k in ("parentId", "parent_id")
        ):
            record["parentId"] = parent_id
        flat.append(record)
        if key:
            own_id = _entry_id(entry)
            stack.extend((child, own_id) for child in reversed(entry[key]))
    return flat


def _canonical_columns(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """Name the id and parent columns canonically and give the known fields their dtypes."""
    renames = {}
    if frame.empty and "id" not in frame.columns:
        frame = frame.assign(id=pd.Series(dtype=STRING_DTYPE))  # an empty tree is still a tree
    if "id" not in frame.columns:
        alias = next((a for a in ID_ALIASES if a in frame.columns), None)
        if alias is None:
            raise DataShapeError(
                f"the {what} has no element id field (looked for {', '.join(ID_ALIASES)}); "
                f"fields: {', '.join(map(str, frame.columns[:15])) or 'none'}"
            )
        renames[alias] = "id"
    if "parent_id" not in frame.columns:
        alias = next((a for a in PARENT_ALIASES if a in frame.columns), None)
        if alias is not None:
            renames[alias] = "parent_id"
    if renames:
        frame = frame.rename(columns=renames)
    for name in LEADING_COLUMNS[:4]:
        if name not in frame.columns:
            frame[name] = pd.Series(pd.NA, index=frame.index, dtype=STRING_DTYPE)
    for name in STRING_COLUMNS:
        if name in frame.columns and frame[name].dtype != "string":
            frame[name] = _as_string(frame[name])
    missing = _missing(frame["id"])
    if missing.any():
        where = np.flatnonzero(missing)[:NAMED_LIMIT].tolist()
        raise DataShapeError(
            f"{int(missing.sum())} element(s) of the {what} have no id (entries {where})"
        )
    if "version" in frame.columns:
        versions = frame["version"].array
        whole = whole_versions(versions)
        if whole is not versions:
            frame["version"] = whole
    return frame


def _as_string(column: pd.Series) -> pd.Series:
    """Ids and names as ``string``; nested values are refused rather than stringified."""
    if column.dtype == object:
        nested = column.map(lambda v: isinstance(v, (Mapping, list)))
        if nested.any():
            return column  # keep it as sent: a nested value must not become its repr
    return column.astype(STRING_DTYPE)


def _missing(column: pd.Series) -> np.ndarray:
    """``column.isna()`` as a numpy mask, with one cheap pass when nothing is missing."""
    values = column.to_numpy(dtype=object)  # a string column's own storage, no copy
    if infer_dtype(values, skipna=False) == "string":  # every value a str: no gap
        return np.zeros(len(values), dtype=bool)
    return column.isna().to_numpy()


def _walk(ids: pd.Series, parents: pd.Series, names: pd.Series, what: str) -> tuple[Any, Any, Any]:
    """Depth, path and child count of every element (as arrays), breadth-first from the roots."""
    n = len(ids)
    id_values = ids.to_numpy(dtype=object)
    parent_values = parents.to_numpy(dtype=object)
    has_parent = ~_missing(parents)
    # One hash pass over the ids and the non-missing parent ids together: ids come
    # first, so a unique id's code is its own position, a parent's code is its
    # parent's position, and a code >= n is a parent id that is not in the tree.
    # (NA values are left out: they send factorize down a much slower path.)
    codes, _ = pd.factorize(np.concatenate([id_values, parent_values[has_parent]]))
    id_codes = codes[:n]
    parent_codes = np.full(n, -1, dtype=np.int64)
    parent_codes[has_parent] = codes[n:]
    if np.array_equal(id_codes, np.arange(n)):
        parent_pos = np.where(parent_codes < n, parent_codes, -1)
    else:
        warn_duplicates(id_values, what)
        first = np.full(int(np.max(codes)) + 1, -1, dtype=np.int64)
        unique_codes, first_positions = np.unique(id_codes, return_index=True)
        first[unique_codes] = first_positions
        parent_pos = np.where(parent_codes >= 0, first[np.maximum(parent_codes, 0)], -1)
    linked = parent_pos >= 0
    counts, children_of = child_index(parent_pos)

    label = names.to_numpy(dtype=object)
    no_name = _missing(names)
    if no_name.any():
        label = label.copy()
        label[no_name] = id_values[no_name]
    depth = np.full(n, -1, dtype=np.int64)
    path = np.full(n, None, dtype=object)
    frontier = np.flatnonzero(~has_parent)
    path[frontier] = label[frontier]
    suffix = PATH_SEP + label  # one concatenation per element per level instead of two
    level = 0
    while frontier.size:
        depth[frontier] = level
        if level:
            path[frontier] = path[parent_pos[frontier]] + suffix[frontier]
        frontier = children_of(frontier)
        level += 1

    unreached = depth < 0
    reached_all = not unreached.any()
    if not reached_all:
        warn_unreached(
            ids, parents, has_parent & ~linked, unreached, parent_pos, counts, children_of, what
        )
    return (
        pd.arrays.IntegerArray(depth, unreached),
        # every path a str when every element was reached; else the gaps become NA
        string_array(path, checked=reached_all and _all_str(path)),
        pd.arrays.IntegerArray(counts.astype(np.int64, copy=False), np.zeros(n, dtype=bool)),
    )


def _all_str(values: np.ndarray) -> bool:
    return infer_dtype(values, skipna=False) == "string"
