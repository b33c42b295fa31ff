"""Many tables or mappings at once, as one long frame (``read_tables``, ``read_mappings``)
or as a sequence of them in bounded memory (``iter_tables``, ``iter_mappings``).

The long frame's shape (id and ``row`` columns, the union of columns, ``attrs``) is
described in :mod:`mddframes.frames.long_frames`, which also splits it back
(:func:`iter_groups`); the chunked, bounded reads are :mod:`mddframes.frames.chunked_reads`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

import pandas as pd

from mddframes.bulk import ErrorPolicy
from mddframes.codec.kinds import Kind
from mddframes.doc_sections import documented
from mddframes.frames.backends import (
    DtypeBackend,
    backend_documented,
    check_dtype_backend,
    to_backend,
)
from mddframes.frames.chunked_reads import (
    PartChunk,
    failure_record,
    failure_records,
    iter_many,
)
from mddframes.frames.long_frames import (
    ROW_COLUMN,
    Part,
    iter_groups,
    long_frame,
    row_column,
)

if TYPE_CHECKING:
    from mddframes.api import Api

# what other modules import from here (their home is in the modules above)
__all__ = [
    "ROW_COLUMN",
    "Part",
    "PartChunk",
    "failure_record",
    "failure_records",
    "iter_groups",
    "iter_mappings",
    "iter_parts",
    "iter_tables",
    "long_frame",
    "read_mappings",
    "read_tables",
    "row_column",
]


@backend_documented
def read_tables(
    api: Api,
    ids: Iterable[str],
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame:
    """Read many tables concurrently into one long frame with a ``table_id`` column.

    Parameters
    ----------
    {api}
    ids : iterable of str
        Table ids (a list, or a Series such as ``tree["table_id"].dropna()``);
        repeats are read once.
    {max_workers}
    {progress}
    errors : {"raise", "skip"}, default "raise"
        ``"raise"`` stops at the first failure and raises it; ``"skip"`` reads the
        others and reports the failures (see the module docstring).
    {dtype_backend}

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
    (frame,) = iter_many(api, ids, _table_reader, key="table_id", desc="read_tables",
                          chunksize=None, max_workers=max_workers, progress=progress,
                          errors=errors)  # fmt: skip
    return to_backend(frame, dtype_backend, consume=True)


@backend_documented
def read_mappings(
    api: Api,
    ids: Iterable[str],
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame:
    """Read many mappings' column mappings into one long frame with a ``mapping_id`` column.

    The same shape as :func:`read_tables`, with
    :func:`~mddframes.frames.table.read_mapping` for each id.

    Parameters
    ----------
    {api}
    ids : iterable of str
        Mapping ids (a list, or a Series such as ``tree["mapping_id"].dropna()``);
        repeats are read once.
    {max_workers}
    {progress}
    errors : {"raise", "skip"}, default "raise"
        ``"raise"`` stops at the first failure and raises it; ``"skip"`` reads the
        others and reports the failures.
    {dtype_backend}

    Returns
    -------
    pandas.DataFrame
        One row per column mapping, with ``mapping_id``; each read records its
        write-back context as a single read would.
    """
    check_dtype_backend(dtype_backend)
    frame: pd.DataFrame
    (frame,) = iter_many(api, ids, _mapping_reader, key="mapping_id", desc="read_mappings",
                          chunksize=None, max_workers=max_workers, progress=progress,
                          errors=errors)  # fmt: skip
    return to_backend(frame, dtype_backend, consume=True)


@documented
def iter_tables(
    api: Api,
    ids: Iterable[str],
    *,
    chunksize: int = 100,
    max_workers: int | None = None,
    progress: bool | None = None,
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
    column that one chunk lacks to ``object``). Every chunk gives a column the dtype
    its declared type gives (:data:`~mddframes.codec.dtypes.DTYPE_RULES`); a name the
    tables declare with types of different dtypes (in DWH, ``code``: STRING and INTEGER)
    is ``object`` in every chunk, as in ``read_tables``: when the ids make more than one
    chunk, each table's declarations are read first, up to its rows (one more request
    per table, a few kilobytes; :mod:`mddframes.frames.declared_scan`). Where values
    decide (a value that does not fit its declared type), the column is ``object`` from
    the chunk that shows it on (stacked, the chunks before it hold NA where
    ``read_tables`` holds None). Stopping the iteration early stops
    the reads. Write a chunk back (``write_tables(chunk)``) before taking the next:
    the write-back contexts of a chunk's reads are let go when the next chunk is
    asked for, or the client would keep every table read.

    Parameters
    ----------
    {api}
    ids : iterable of str
        Table ids; repeats are read once.
    chunksize : int, default 100
        Tables per chunk (``1``: one frame per table). A table is never split.
    {max_workers}
    progress : bool, optional
        Show one ``tqdm.auto`` progress bar over all ids: by default only on a terminal or in Jupyter.
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
    chunks = iter_many(api, ids, _table_reader, key="table_id", desc="iter_tables",
                        chunksize=chunksize, max_workers=max_workers, progress=progress,
                        errors=errors, scan_declared=True)  # fmt: skip
    return _in_backend(chunks, dtype_backend)


@documented
def iter_mappings(
    api: Api,
    ids: Iterable[str],
    *,
    chunksize: int = 100,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> Iterator[pd.DataFrame]:
    """Read many mappings as a sequence of long frames of at most ``chunksize`` each.

    :func:`read_mappings` in bounded memory, as :func:`iter_tables` is to
    :func:`read_tables`: ``pd.concat(iter_mappings(api, ids))`` equals
    ``read_mappings(api, ids)``.

    Parameters
    ----------
    {api}
    ids : iterable of str
        Mapping ids; repeats are read once.
    chunksize : int, default 100
        Mappings per chunk (``1``: one frame per mapping).
    {max_workers}
    progress : bool, optional
        Show one ``tqdm.auto`` progress bar over all ids: by default only on a terminal or in Jupyter.
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
    chunks = iter_many(api, ids, _mapping_reader, key="mapping_id", desc="iter_mappings",
                        chunksize=chunksize, max_workers=max_workers, progress=progress,
                        errors=errors)  # fmt: skip
    return _in_backend(chunks, dtype_backend)


@documented
def iter_parts(
    api: Api,
    ids: Iterable[str],
    kind: Kind,
    *,
    chunksize: int = 100,
    max_workers: int | None = None,
    progress: bool | None = None,
    errors: ErrorPolicy = "raise",
    ahead: int | None = None,
    unbuilt: bool = False,
) -> Iterator[PartChunk]:
    """:func:`iter_tables` / :func:`iter_mappings` before the long frames are stacked.

    For writers that take each object apart anyway (snapshots): the same reads, order,
    concurrency, bounded read-ahead and ``errors=`` policy, without stacking a chunk's
    objects into one frame (a column whose dtype two tables disagree on would become
    ``object`` there).

    Parameters
    ----------
    {api}
    ids : iterable of str
        Table or mapping ids; repeats are read once.
    kind : {"table", "mapping"}
        What the ids are.
    chunksize : int, default 100
        Objects per chunk.
    {max_workers}
    {progress}
    errors : {"raise", "skip"}, default "raise"
        As in :func:`iter_tables`.
    ahead : int, optional
        Objects read past the chunk being filled; default the number of workers.
    unbuilt : bool, default False
        Leave a small object's columns but the dates unbuilt, as
        :class:`~mddframes.codec.dtypes.UnbuiltColumn` (``.array()`` is the array).

    Yields
    ------
    (list, list)
        The chunk's objects as ``(id, (arrays by column name, row index))`` (each
        object's column arrays exactly as :func:`~mddframes.frames.table.read_table`'s
        frame holds them, dates parsed, but for ``unbuilt``), and the failure records of
        its ids.

    Examples
    --------
    >>> ids = ["tbl-0001", "tbl-0109"]
    >>> for parts, failures in iter_parts(client.api, ids, "table", progress=False):
    ...     names = [table_id for table_id, (arrays, index) in parts]
    >>> names
    ['tbl-0001', 'tbl-0109']
    """
    readers = {"table": (_table_reader, _unbuilt_table_reader),
               "mapping": (_mapping_reader, _unbuilt_mapping_reader)}  # fmt: skip
    reader = readers[kind][int(unbuilt)]
    key = f"{kind}_id"
    desc = f"iter_{kind}s"
    chunks: Iterator[PartChunk] = iter_many(api, ids, reader, key=key, desc=desc,
                                             chunksize=chunksize, max_workers=max_workers,
                                             progress=progress, errors=errors, parts=True,
                                            ahead=ahead)  # fmt: skip
    return chunks


def _in_backend(
    chunks: Iterator[pd.DataFrame], dtype_backend: DtypeBackend
) -> Iterator[pd.DataFrame]:
    if dtype_backend == "numpy_nullable":
        return chunks  # as read: nothing to convert
    return (to_backend(chunk, dtype_backend, consume=True) for chunk in chunks)


def _table_reader(api: Api, table_id: str) -> Callable[[], Part]:
    from mddframes.frames.table import fetch_table_arrays

    return fetch_table_arrays(api, table_id)


def _unbuilt_table_reader(api: Api, table_id: str) -> Callable[[], Part]:
    from mddframes.frames.table import fetch_table_arrays

    return fetch_table_arrays(api, table_id, unbuilt=True)


def _mapping_reader(api: Api, mapping_id: str) -> Callable[[], Part]:
    from mddframes.frames.table import fetch_mapping_arrays

    return fetch_mapping_arrays(api, mapping_id)


def _unbuilt_mapping_reader(api: Api, mapping_id: str) -> Callable[[], Part]:
    from mddframes.frames.table import fetch_mapping_arrays

    return fetch_mapping_arrays(api, mapping_id, unbuilt=True)
