"""Many tables or mappings at once, as one long frame (``read_tables``, ``read_mappings``)
or as a sequence of them in bounded memory (``iter_tables``, ``iter_mappings``).

The long frame
--------------
- The index is a ``RangeIndex`` (unique), so ordinary pandas assignment works:
  ``long.loc[long["code"].isna(), "code"] = "n/a"``.
- First column ``table_id`` (``mapping_id`` for mappings), ``string``; second column
  ``row``, ``Int64``: each row's original position in its own table (the index
  :func:`mddframes.frames.table.read_table` gives it). :func:`iter_groups` and
  ``write_tables`` align by these two columns, never by the index::

      for table_id, rows in iter_groups(long):      # each group indexed by ``row``
          client.write_table(table_id, rows)

  A new row has ``row`` missing (NA): it gets a fresh label (``"new[0]"``...) in its
  group, as the single writer expects new rows; a row removed from the long frame is a
  deleted row. Two rows of one object with the same ``row`` are refused.
- If an object read has its own column ``row``, the position column is named ``_row``
  instead (``__row``... the first name no object read has); the name is in
  ``frame.attrs["row_column"]``, and without attrs :func:`iter_groups` takes the
  longest of ``row``, ``_row``, ``__row``... present.

- Columns are the outer union over the objects, in order of first appearance; a
  column keeps its dtype where the objects agree (an ``Int64`` column absent from
  another table stays ``Int64``, filled with NA there).
- ``frame.attrs["failures"]``: a list of ``{"id", "error_type", "status",
  "message"}`` records, one per id that failed (empty when none did); with
  ``errors="skip"`` the failed ids are also named in a logged warning and a
  :class:`~mddframes.bulk.PartialFailureWarning`. ``frame.attrs["columns"]``: each
  id's own columns, used by :func:`iter_groups` to drop the other objects' columns.
  (``attrs`` do not survive every pandas operation; the write-back context of each
  object lives in the client, so writing back does not depend on them.)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from mddframes.bulk import ErrorPolicy, iter_bulk, resolve_workers
from mddframes.codec.date_batch import resolve_dates
from mddframes.codec.kinds import Kind
from mddframes.context import ContextRegistry, registry_for
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.frames.backends import DtypeBackend, check_dtype_backend, to_backend
from mddframes.frames.stacking import column_arrays, concat_column_sets
from mddframes.ids import id_list

if TYPE_CHECKING:
    from pandas.arrays import IntegerArray

    from mddframes.api import Api

#: What a reader gives for one id: its column arrays by name and its row index.
Part = tuple[dict[Any, Any], pd.Index]

#: A chunk of objects read: each object's id and part, and the failures among its ids.
PartChunk = tuple[list[tuple[str, Part]], list[dict[str, Any]]]

#: The column of the long frames holding each row's position in its own table or mapping
#: (prefixed with ``_`` until no object read has a column of that name).
ROW_COLUMN = "row"


def read_tables(
    api: Api,
    ids: Iterable[str],
    *,
    max_workers: int | None = None,
    progress: bool = True,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame:
    """Read many tables concurrently into one long frame with a ``table_id`` column.

    Parameters
    ----------
    api : Api
        The raw layer (``client.api``).
    ids : iterable of str
        Table ids (a list, or a Series such as ``tree["table_id"].dropna()``);
        repeats are read once.
    max_workers : int, optional
        Concurrent requests; default ``api.max_workers``.
    progress : bool, default True
        Show a ``tqdm.auto`` progress bar.
    errors : {"raise", "skip"}, default "raise"
        ``"raise"`` stops at the first failure and raises it; ``"skip"`` reads the
        others and reports the failures (see the module docstring).
    dtype_backend : {"numpy_nullable", "pyarrow"}, default "numpy_nullable"
        The frame's dtypes, as in pandas' readers: ``"pyarrow"`` gives ``pd.ArrowDtype``
        columns (needs ``mddframes[arrow]``; values no Arrow type holds exactly stay
        ``object``, see :func:`~mddframes.frames.backends.to_backend`).

    Returns
    -------
    pandas.DataFrame
        The long frame described in the module docstring. Each table's cells have the
        dtypes :func:`~mddframes.frames.table.read_table` gives them, and each read
        records its write-back context in the client as a single read would.

    Examples
    --------
    >>> tree = client.read_tree("DWH")
    >>> sources = tree.loc[tree["type"] == "SOURCE_TABLE", "table_id"]
    >>> long = client.read_tables(sources, progress=False)  # one long frame
    >>> long["table_id"].nunique()
    24
    >>> list(long.columns[:3])  # then the tables' own columns
    ['table_id', 'row', 'customer_no']
    """
    check_dtype_backend(dtype_backend)
    # unpacking runs the generator to its end, where a skipped failure is warned about
    frame: pd.DataFrame
    (frame,) = _iter_many(api, ids, _table_reader, key="table_id", desc="read_tables",
                          chunksize=None, max_workers=max_workers, progress=progress,
                          errors=errors)  # fmt: skip
    return to_backend(frame, dtype_backend, consume=True)


def read_mappings(
    api: Api,
    ids: Iterable[str],
    *,
    max_workers: int | None = None,
    progress: bool = True,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame:
    """Read many mappings' column mappings into one long frame with a ``mapping_id`` column.

    The same shape as :func:`read_tables`, with
    :func:`~mddframes.frames.table.read_mapping` for each id.

    Parameters
    ----------
    api : Api
        The raw layer (``client.api``).
    ids : iterable of str
        Mapping ids (a list, or a Series such as ``tree["mapping_id"].dropna()``);
        repeats are read once.
    max_workers : int, optional
        Concurrent requests; default ``api.max_workers``.
    progress : bool, default True
        Show a ``tqdm.auto`` progress bar.
    errors : {"raise", "skip"}, default "raise"
        ``"raise"`` stops at the first failure and raises it; ``"skip"`` reads the
        others and reports the failures.
    dtype_backend : {"numpy_nullable", "pyarrow"}, default "numpy_nullable"
        The frame's dtypes, as in pandas' readers: ``"pyarrow"`` gives ``pd.ArrowDtype``
        columns (needs ``mddframes[arrow]``; values no Arrow type holds exactly stay
        ``object``, see :func:`~mddframes.frames.backends.to_backend`).

    Returns
    -------
    pandas.DataFrame
        One row per column mapping, with ``mapping_id``; each read records its
        write-back context as a single read would.
    """
    check_dtype_backend(dtype_backend)
    frame: pd.DataFrame
    (frame,) = _iter_many(api, ids, _mapping_reader, key="mapping_id", desc="read_mappings",
                          chunksize=None, max_workers=max_workers, progress=progress,
                          errors=errors)  # fmt: skip
    return to_backend(frame, dtype_backend, consume=True)


def iter_tables(
    api: Api,
    ids: Iterable[str],
    *,
    chunksize: int = 100,
    max_workers: int | None = None,
    progress: bool = True,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> Iterator[pd.DataFrame]:
    """Read many tables as a sequence of long frames of at most ``chunksize`` tables each.

    :func:`read_tables` in bounded memory: the same columns, dtypes, ``errors=`` policy,
    progress bar and concurrency, but only the chunk being filled (and a few tables
    read ahead by the workers, at most ``max_workers``) is held, so the peak
    follows ``chunksize``, not the number of ids. The chunks stacked equal
    ``read_tables(api, ids)``, index included (each chunk's ``RangeIndex`` continues
    the previous one): ``pd.concat`` when the chunks have the same columns, and
    :func:`~mddframes.frames.stacking.concat_union` always (``pd.concat`` turns a
    column that one chunk lacks to ``object``). Stopping the iteration early stops
    the reads. Write a chunk back (``write_tables(chunk)``) before taking the next:
    the write-back contexts of a chunk's reads are let go when the next chunk is
    asked for, or the client would keep every table read.

    Parameters
    ----------
    api : Api
        The raw layer (``client.api``).
    ids : iterable of str
        Table ids; repeats are read once.
    chunksize : int, default 100
        Tables per chunk (``1``: one frame per table). A table is never split.
    max_workers : int, optional
        Concurrent requests; default ``api.max_workers``.
    progress : bool, default True
        Show one ``tqdm.auto`` progress bar over all ids.
    errors : {"raise", "skip"}, default "raise"
        As in :func:`read_tables`; with ``"skip"`` each chunk's ``attrs["failures"]``
        lists the failures among its own ids (a chunk whose ids all failed is an
        empty frame with those failures), and the warning comes after the last chunk.
    dtype_backend : {"numpy_nullable", "pyarrow"}, default "numpy_nullable"
        Each chunk's dtypes, as in :func:`read_tables`.

    Returns
    -------
    Iterator of pandas.DataFrame
        The long frame of :func:`read_tables` for each next ``chunksize`` ids, in the
        order of ``ids`` (an iterator: the arguments are checked at the call, the reads
        run as it is consumed).

    Raises
    ------
    InvalidArgumentError
        ``chunksize`` is not a positive integer.

    Examples
    --------
    >>> ids = client.read_tree("DWH")["table_id"].dropna()
    >>> chunks = client.iter_tables(ids, chunksize=50, progress=False)
    >>> [len(chunk.attrs["columns"]) for chunk in chunks]  # tables per chunk
    [50, 50, 12]
    """
    check_dtype_backend(dtype_backend)
    chunks = _iter_many(api, ids, _table_reader, key="table_id", desc="iter_tables",
                        chunksize=chunksize, max_workers=max_workers, progress=progress,
                        errors=errors)  # fmt: skip
    return _in_backend(chunks, dtype_backend)


def iter_mappings(
    api: Api,
    ids: Iterable[str],
    *,
    chunksize: int = 100,
    max_workers: int | None = None,
    progress: bool = True,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> Iterator[pd.DataFrame]:
    """Read many mappings as a sequence of long frames of at most ``chunksize`` each.

    :func:`read_mappings` in bounded memory, as :func:`iter_tables` is to
    :func:`read_tables`: ``pd.concat(iter_mappings(api, ids))`` equals
    ``read_mappings(api, ids)``.

    Parameters
    ----------
    api : Api
        The raw layer (``client.api``).
    ids : iterable of str
        Mapping ids; repeats are read once.
    chunksize : int, default 100
        Mappings per chunk (``1``: one frame per mapping).
    max_workers : int, optional
        Concurrent requests; default ``api.max_workers``.
    progress : bool, default True
        Show one ``tqdm.auto`` progress bar over all ids.
    errors : {"raise", "skip"}, default "raise"
        As in :func:`iter_tables`.
    dtype_backend : {"numpy_nullable", "pyarrow"}, default "numpy_nullable"
        Each chunk's dtypes, as in :func:`read_mappings`.

    Returns
    -------
    Iterator of pandas.DataFrame
        The long frame of :func:`read_mappings` for each next ``chunksize`` ids.

    Raises
    ------
    InvalidArgumentError
        ``chunksize`` is not a positive integer.

    Examples
    --------
    >>> ids = client.read_tree("DWH")["mapping_id"].dropna()
    >>> rows = sum(len(chunk) for chunk in client.iter_mappings(ids, progress=False))
    """
    check_dtype_backend(dtype_backend)
    chunks = _iter_many(api, ids, _mapping_reader, key="mapping_id", desc="iter_mappings",
                        chunksize=chunksize, max_workers=max_workers, progress=progress,
                        errors=errors)  # fmt: skip
    return _in_backend(chunks, dtype_backend)


def iter_parts(
    api: Api,
    ids: Iterable[str],
    kind: Kind,
    *,
    chunksize: int = 100,
    max_workers: int | None = None,
    progress: bool = True,
    errors: ErrorPolicy = "raise",
) -> Iterator[PartChunk]:
    """:func:`iter_tables` / :func:`iter_mappings` before the long frames are stacked.

    For writers that take each object apart anyway (snapshots): the same reads, order,
    concurrency, bounded read-ahead and ``errors=`` policy, without stacking a chunk's
    objects into one frame (a column whose dtype two tables disagree on would become
    ``object`` there).

    Parameters
    ----------
    api : Api
        The raw layer (``client.api``).
    ids : iterable of str
        Table or mapping ids; repeats are read once.
    kind : {"table", "mapping"}
        What the ids are.
    chunksize : int, default 100
        Objects per chunk.
    max_workers : int, optional
        Concurrent requests; default ``api.max_workers``.
    progress : bool, default True
        Show a progress bar.
    errors : {"raise", "skip"}, default "raise"
        As in :func:`iter_tables`.

    Yields
    ------
    (list, list)
        The chunk's objects as ``(id, (arrays by column name, row index))`` (each
        object's column arrays exactly as :func:`~mddframes.frames.table.read_table`'s
        frame holds them, dates parsed), and the failure records of its ids.

    Examples
    --------
    >>> ids = ["tbl-0001", "tbl-0109"]
    >>> for parts, failures in iter_parts(client.api, ids, "table", progress=False):
    ...     names = [table_id for table_id, (arrays, index) in parts]
    >>> names
    ['tbl-0001', 'tbl-0109']
    """
    reader, key = (
        (_table_reader, "table_id") if kind == "table" else (_mapping_reader, "mapping_id")
    )
    desc = f"iter_{kind}s"
    chunks: Iterator[PartChunk] = _iter_many(api, ids, reader, key=key, desc=desc,
                                             chunksize=chunksize, max_workers=max_workers,
                                             progress=progress, errors=errors, parts=True)  # fmt: skip
    return chunks


def _in_backend(
    chunks: Iterator[pd.DataFrame], dtype_backend: DtypeBackend
) -> Iterator[pd.DataFrame]:
    if dtype_backend == "numpy_nullable":
        return chunks  # as read: nothing to convert
    return (to_backend(chunk, dtype_backend, consume=True) for chunk in chunks)


def _table_reader(api: Api, table_id: str) -> Callable[[], Part]:
    from mddframes.frames.table import fetch_table_arrays

    # date columns parsed once per column for all tables of a chunk (codec/date_batch.py)
    return fetch_table_arrays(api, table_id, defer_dates=True)


def _mapping_reader(api: Api, mapping_id: str) -> Callable[[], Part]:
    from mddframes.frames.table import read_mapping

    part = read_mapping(api, mapping_id)
    built = column_arrays(part), part.index
    return lambda: built


def iter_groups(frame: pd.DataFrame, key: str | None = None) -> Iterator[tuple[str, pd.DataFrame]]:
    """Split a long frame back into one frame per table or mapping.

    Parameters
    ----------
    frame : pandas.DataFrame
        A long frame from :func:`read_tables` / :func:`read_mappings` (possibly
        edited: rows added, removed or changed; its index is not used).
    key : str, optional
        The id column; default ``"table_id"`` or ``"mapping_id"``, whichever is there.

    Yields
    ------
    (str, pandas.DataFrame)
        The id and its rows, in order of first appearance, without the id and position
        columns, indexed by each row's original position (the ``row`` column; a row
        whose ``row`` is missing is a new row and gets a label no position can be,
        ``"new[0]"``, ``"new[1]"``...), and with only that object's own columns in its
        own order, plus any column added to the long frame after the read (from
        ``frame.attrs["columns"]`` when present; otherwise the columns not entirely
        missing in the group).

    Raises
    ------
    InvalidArgumentError
        No id column, a row without an id, or a position column that is not whole
        numbers or repeats a position within one object.
    """
    key = _id_column(frame, key)
    position = row_column(frame)
    if frame[key].isna().any():
        rows = np.flatnonzero(frame[key].isna().to_numpy())[:10].tolist()
        raise InvalidArgumentError(f"iter_groups: the rows at positions {rows} have no {key}")
    # keyed by object id (str); Hashable so that a group key of any type may look it up
    own_columns: dict[Hashable, list[Any]] = frame.attrs.get("columns") or {}
    anyones = {c for columns in own_columns.values() for c in columns}
    for object_id, rows in frame.groupby(key, sort=False, dropna=False):
        labels = _group_labels(rows, position, str(object_id))
        rows = rows.drop(columns=[key] if position is None else [key, position])
        rows = rows.set_axis(labels)
        known = own_columns.get(object_id)
        if known is not None:
            # Its own columns in its own order, then columns the user added to the long frame.
            present = set(rows.columns)
            added = [c for c in rows.columns if c not in anyones]
            rows = rows[[c for c in known if c in present] + added]
        else:
            rows = rows.loc[:, rows.notna().any(axis=0) | (len(rows) == 0)]
        yield str(object_id), rows


def row_column(frame: pd.DataFrame) -> str | None:
    """The name of a long frame's position column (``row``, or ``_row``... see the module
    docstring), or None when it has none."""
    named = frame.attrs.get("row_column")
    if isinstance(named, str) and named in frame.columns:
        return named
    found = None
    name = ROW_COLUMN
    # the longest present: a shorter one is then an object's own column
    while name in frame.columns:
        found, name = name, "_" + name
    return found


def _id_column(frame: pd.DataFrame, key: str | None) -> str:
    if key is None:
        key = next((k for k in ("table_id", "mapping_id") if k in frame.columns), None)
        if key is None:
            raise InvalidArgumentError(
                "iter_groups needs a long frame with a 'table_id' or 'mapping_id' column "
                f"(columns: {', '.join(map(str, frame.columns[:10]))})"
            )
    elif key not in frame.columns:
        raise InvalidArgumentError(f"iter_groups: the frame has no column {key!r}")
    return key


def _group_labels(rows: pd.DataFrame, position: str | None, object_id: str) -> pd.Index:
    """One object's row labels: its positions, and ``new[i]`` for rows without one."""
    if position is None:
        # a long frame built by hand without positions: the index is taken as they are,
        # as the RangeIndex a single read gives when they are 0..n-1
        if rows.index.equals(pd.RangeIndex(len(rows))):
            return pd.RangeIndex(len(rows))
        return rows.index
    try:
        # pandas-stubs: pd.array has no overload for a Series with the dtype "Int64"
        column = rows[position]
        values: IntegerArray = pd.array(column, dtype="Int64")  # type: ignore[call-overload]
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(
            f"iter_groups: the column {position!r} of {object_id!r} must hold each row's "
            f"original position (whole numbers, NA for a new row): {exc}"
        ) from exc
    missing = values.isna()
    known = values[~missing]
    if pd.Series(known).duplicated().any():
        repeated = sorted(set(pd.Series(known)[pd.Series(known).duplicated()].tolist()))
        raise InvalidArgumentError(
            f"iter_groups: {object_id!r} has several rows with {position} {repeated[:5]!r}; "
            f"a copied or added row needs {position} set to NA (a new row)"
        )
    if not missing.any():
        labels = known.to_numpy(dtype=np.int64)
        if np.array_equal(labels, np.arange(len(labels))):
            return pd.RangeIndex(len(labels), name=ROW_COLUMN)
        index: pd.Index = pd.Index(labels, dtype="int64", name=ROW_COLUMN)
        return index
    out = np.empty(len(values), dtype=object)
    out[~missing] = known.to_numpy(dtype=np.int64).tolist()
    out[missing] = [f"new[{i}]" for i in range(int(missing.sum()))]
    return pd.Index(out, dtype=object, name=ROW_COLUMN)


def failure_records(failures: pd.DataFrame) -> list[dict[str, Any]]:
    """The failures frame of a bulk run as plain records, safe to keep in ``attrs``.

    (A DataFrame inside ``attrs`` breaks ``pd.concat``, which compares attrs.)
    """
    return [
        {
            "id": row["id"],
            "error_type": row["error_type"],
            "status": None if pd.isna(row["status"]) else int(row["status"]),
            "message": row["message"],
        }
        for row in failures.to_dict("records")
    ]


def _iter_many(
    api: Api,
    ids: Iterable[str],
    reader: Callable[[Api, str], Callable[[], Part]],
    *,
    key: str,
    desc: str,
    chunksize: int | None,
    max_workers: int | None,
    progress: bool,
    errors: ErrorPolicy,
    parts: bool = False,
) -> Iterator[Any]:
    """Long frames of ``chunksize`` objects each (None: one frame of all, even of none);
    with ``parts``, each chunk as its parts and failures instead (see :func:`iter_parts`).

    ``reader(api, id)`` does the request in a worker and returns a function that builds
    the part (its column arrays and index); the calling thread builds it, so it only
    waits while the workers wait for answers and the building costs a worker no time
    before its next request (built in the worker, under the GIL, it delayed the next
    request by as much). With a chunk size, at most ``workers`` objects are read past
    the chunk being filled: memory follows the chunk, not the number of ids.
    """
    # the arguments are checked now, not at the first next()
    wanted = id_list(ids, what=f"{desc} ids", id_columns=(key,))
    size = len(wanted) if chunksize is None else _check_chunksize(chunksize)
    workers = resolve_workers(max_workers, api.max_workers)
    if errors not in ("raise", "skip"):
        raise InvalidArgumentError(f"errors must be 'raise' or 'skip', got {errors!r}")

    def read_one(object_id: str) -> tuple[str, Callable[[], Part]]:
        return object_id, reader(api, object_id)

    def build(fetched: tuple[str, Callable[[], Part]]) -> Part:
        object_id, make = fetched
        arrays, index = make()
        if key in arrays:
            raise DataShapeError(
                f"{key.split('_')[0]} {object_id!r} has its own column {key!r}, which the long "
                f"frame of {desc} uses for the id; read it alone"
            )
        return arrays, index

    chunks = _part_chunks(
        iter_bulk(
            read_one,
            wanted,
            ahead=None if chunksize is None else workers,
            max_workers=workers,
            progress=progress,
            errors=errors,
            desc=desc,
            then=build,
        ),
        key=key,
        size=size,
        total=len(wanted),
        whole=chunksize is None,
        registry=registry_for(api),
    )
    return chunks if parts else _frames(chunks, key)


def _part_chunks(
    outcomes: Iterator[tuple[int, str, Any, Exception | None]],
    *,
    key: str,
    size: int,
    total: int,
    whole: bool,
    registry: ContextRegistry,
) -> Iterator[PartChunk]:
    """The outcomes, in input order, gathered into chunks of ``size`` ids each.

    Each chunk's date columns are parsed once per column for all its objects
    (codec/date_batch.py). In chunks (not ``whole``), the write-back contexts of a
    chunk's reads are dropped from the client's registry when the next chunk is asked
    for (unless read again since): kept, they would hold every payload read and memory
    would grow with the number of ids. A chunk is written back before the next is taken.
    """
    kind: Kind = "table" if key == "table_id" else "mapping"
    parts: list[tuple[str, Part]] = []
    failures: list[dict[str, Any]] = []
    for position, object_id, part, error in outcomes:
        if error is None:
            parts.append((object_id, part))
        else:
            failures.append(failure_record(object_id, error))
        if (position + 1) % size == 0 or position + 1 == total:
            resolve_dates([arrays for _, (arrays, _) in parts])
            contexts = [registry.get(kind, object_id) for object_id, _ in parts]
            chunk = (parts, failures)
            parts, failures = [], []
            yield chunk
            if not whole:
                for context in contexts:
                    if context is not None:
                        registry.forget_context(context)
                del chunk, contexts
    if total == 0 and whole:
        yield [], []


def _frames(chunks: Iterator[PartChunk], key: str) -> Iterator[pd.DataFrame]:
    """Each chunk as its long frame, the index continuing the chunks before it."""
    offset = 0
    for parts, failures in chunks:
        frame = long_frame(key, parts)
        frame.index = pd.RangeIndex(offset, offset + len(frame))
        frame.attrs["failures"] = failures
        offset += len(frame)
        del parts
        yield frame
        # not held while the next chunk is read: the caller's reference is the only one
        del frame


def _check_chunksize(chunksize: Any) -> int:
    if isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1:
        raise InvalidArgumentError(f"chunksize must be a positive integer, got {chunksize!r}")
    return chunksize


def failure_record(object_id: str, error: Exception) -> dict[str, Any]:
    """One failed id as the plain record of ``frame.attrs["failures"]``.

    Parameters
    ----------
    object_id : str
        The id that failed.
    error : Exception
        Its failure.

    Returns
    -------
    dict
        ``{"id", "error_type", "status", "message"}``, as :func:`failure_records` gives.
    """
    status = getattr(error, "status", None)
    return {
        "id": object_id,
        "error_type": type(error).__name__,
        "status": None if status is None else int(status),
        "message": str(error),
    }


def long_frame(key: str, parts: list[tuple[str, Part]]) -> pd.DataFrame:
    """Stack objects' column arrays into a long frame (see the module docstring).

    Parameters
    ----------
    key : str
        The id column, ``"table_id"`` or ``"mapping_id"``.
    parts : list of (str, (dict, pandas.Index))
        Each object's id, its column arrays by name and its row index (each row's
        original position).

    Returns
    -------
    pandas.DataFrame
        With a ``RangeIndex``, the id column, the position column, then the columns;
        ``attrs["columns"]`` and ``attrs["row_column"]`` set.
    """
    columns = {object_id: list(arrays) for object_id, (arrays, _) in parts}
    taken = {c for names in columns.values() for c in names}
    position = ROW_COLUMN
    while position in taken:
        position = "_" + position
    # built array by array, so the parts need no copy, no id column and no attrs
    # clearing of their own (their contexts stay in the client)
    frame = concat_column_sets(
        [arrays for _, (arrays, _) in parts], [index for _, (_, index) in parts]
    )
    lengths = [len(index) for _, (_, index) in parts]
    key_values = np.repeat(np.array([object_id for object_id, _ in parts], dtype=object), lengths)
    positions = (
        np.concatenate([np.asarray(index, dtype=np.int64) for _, (_, index) in parts])
        if parts
        else np.empty(0, dtype=np.int64)
    )
    frame.index = pd.RangeIndex(len(positions))
    # pandas-stubs: DataFrame.insert's value leaves out ExtensionArray (pandas takes it)
    frame.insert(0, key, pd.array(key_values, dtype="string"))  # type: ignore[arg-type]
    frame.insert(1, position, pd.array(positions, dtype="Int64"))  # type: ignore[arg-type]
    frame.attrs = {"columns": columns, "row_column": position}
    return frame
