"""The engine of the bulk readers: ids read concurrently, gathered into chunks of parts.

:func:`iter_many` is what ``read_tables``, ``iter_tables`` and ``iter_parts``
(:mod:`mddframes.frames.bulk_tables`) run: the reads in input order with bounded
read-ahead, each chunk's dates parsed together, its write-back contexts let go when the
next chunk is asked for, and the failures as plain records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import ErrorPolicy, iter_bulk, resolve_workers
from mddframes.codec.kinds import Kind
from mddframes.context import ATTRS_KEY, ContextGroup, ContextRegistry, ReadContext, registry_for
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.frames.long_frames import Part, long_frame
from mddframes.frames.stacking import stacked_dtype
from mddframes.ids import id_list

if TYPE_CHECKING:
    from mddframes.api import Api
    from mddframes.codec.kept import KeptJson

#: A chunk of objects read: each object's id and part, and the failures among its ids.
PartChunk = tuple[list[tuple[str, Part]], list[dict[str, Any]]]


def iter_many(
    api: Api,
    ids: Iterable[str],
    reader: Callable[[Api, str], Callable[[], Part]],
    *,
    key: str,
    desc: str,
    chunksize: int | None,
    max_workers: int | None,
    progress: bool | None,
    errors: ErrorPolicy,
    parts: bool = False,
    ahead: int | None = None,
    scan_declared: bool = False,
) -> Iterator[Any]:
    """Long frames of ``chunksize`` objects each (None: one frame of all, even of none);
    with ``parts``, each chunk as its parts and failures instead (see :func:`iter_parts`);
    ``ahead``: objects read past the chunk being filled (default the workers);
    ``scan_declared``: tables of more than one chunk have their declarations read once
    the first chunk is read (its own documents hold theirs), so that a name declared with types of different dtypes is ``object`` in every chunk
    (:mod:`mddframes.frames.declared_scan`).

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
            ahead=None if chunksize is None else ahead or workers,
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
    if parts:
        return chunks

    def mixed(first_chunk: Iterable[KeptJson]) -> set[str]:
        if not scan_declared or len(wanted) <= size:
            return set()
        from mddframes.frames.declared_scan import mixed_declared_names

        return mixed_declared_names(api, wanted[size:], read=first_chunk, max_workers=workers,
                                    progress=progress, desc=desc)  # fmt: skip

    return _frames(chunks, key, registry_for(api), mixed)


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

    In chunks (not ``whole``), the write-back contexts of a
    chunk's reads are dropped from the client's registry when the next chunk is asked
    for (unless read again since): kept, they would hold every payload read and memory
    would grow with the number of ids. A chunk is written back before the next is taken.
    """
    kind: Kind = "table" if key == "table_id" else "mapping"
    with registry.pinned() as pins:  # held past the registry's bound until chunked
        yield from _pinned_chunks(outcomes, kind, size, total, whole, registry, pins)
    if total == 0 and whole:
        yield [], []


def _pinned_chunks(
    outcomes: Iterator[tuple[int, str, Any, Exception | None]],
    kind: Kind,
    size: int,
    total: int,
    whole: bool,
    registry: ContextRegistry,
    pins: dict[tuple[str, str], ReadContext],
) -> Iterator[PartChunk]:
    parts: list[tuple[str, Part]] = []
    failures: list[dict[str, Any]] = []
    for position, object_id, part, error in outcomes:
        if error is None:
            parts.append((object_id, part))
        else:
            failures.append(failure_record(object_id, error))
        if (position + 1) % size == 0 or position + 1 == total:
            # held while the chunk is out: its frame's ContextGroup takes them over
            contexts = [pins.pop((kind, object_id), None) or registry.get(kind, object_id)
                        for object_id, _ in parts]  # fmt: skip
            chunk = (parts, failures)
            parts, failures = [], []
            yield chunk
            if not whole:
                for context in contexts:
                    if context is not None:
                        registry.forget_context(context)
                del chunk, contexts


def _frames(
    chunks: Iterator[PartChunk],
    key: str,
    registry: ContextRegistry,
    declared_mixed: Callable[[Iterable[KeptJson]], set[str]],
) -> Iterator[pd.DataFrame]:
    """Each chunk as its long frame, the index continuing the chunks before it; the
    frame holds its objects' contexts (a :class:`~mddframes.context.ContextGroup`).

    The names ``declared_mixed(documents)`` gives (called once the first chunk is read,
    with its documents: the names the run's tables declare with types of different
    dtypes) are ``object`` in every chunk, the first included. Any other column whose
    objects give it different dtypes (values that do not fit their declared type, or
    decide it where the rule lets them) is ``object`` in its chunk and in every later
    chunk of the run (:data:`~mddframes.codec.dtypes.DTYPE_RULES`).
    """
    kind: Kind = "table" if key == "table_id" else "mapping"
    offset = 0
    first_seen: dict[Any, Any] = {}
    mixed: set[Any] | None = None
    for parts, failures in chunks:
        held = [c for c in (registry.get(kind, object_id) for object_id, _ in parts)
                if c is not None]  # fmt: skip
        if mixed is None:
            mixed = set(declared_mixed(context.kept for context in held))
        for _, (arrays, _) in parts:
            for name, array in arrays.items():
                dtype = first_seen.setdefault(name, stacked_dtype(array))
                if name not in mixed and dtype != stacked_dtype(array):
                    mixed.add(name)
        frame = long_frame(key, parts, as_object=mixed)
        frame.index = pd.RangeIndex(offset, offset + len(frame))
        frame.attrs["failures"] = failures
        frame.attrs[ATTRS_KEY] = ContextGroup(held)
        offset += len(frame)
        del parts, held
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
