"""snapshot(): a whole system written to a folder of Parquet files, in bounded memory.

The objects are read with the bulk machinery of :mod:`mddframes.frames.bulk_tables`
(chunks of :data:`OBJECTS_PER_CHUNK`, at most ``READ_AHEAD x max_workers`` read ahead)
and each is written as soon as its chunk is read, as a row group of a file it shares
with the objects of the same columns (:mod:`mddframes.snapshot.bundles`), so memory
follows the largest objects in flight, not the size of the system. Everything goes into
a hidden sibling folder (``.DIR.partial``) that is renamed to ``DIR`` once
``manifest.json``, written last, is on disk: a snapshot killed at any moment leaves no
``DIR`` that looks complete. The next run into the same ``DIR`` keeps the files the
interrupted one closed and journaled (their SHA-256 verified), reads only the objects
not in them, and completes it.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import logging
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from mddframes.bulk import iter_bulk, resolve_workers
from mddframes.codec import depth
from mddframes.codec.fastjson import gc_paused
from mddframes.codec.kinds import Kind
from mddframes.codec.values import digest, has_non_finite
from mddframes.context import registry_for
from mddframes.disk_modes import sync_folder
from mddframes.errors import InvalidArgumentError
from mddframes.frames.bulk_tables import ROW_COLUMN, Part, failure_record, iter_parts
from mddframes.frames.listing import read_object_types, read_packages
from mddframes.frames.tree import tree_frame
from mddframes.snapshot.arrow_columns import (
    arrays_to_arrow,
    column_metadata,
    frame_to_arrow,
    joined_column,
)
from mddframes.snapshot.bundles import BundleWriter, Journal, next_part_number
from mddframes.snapshot.layout import (
    FORMAT,
    FORMAT_VERSION,
    FRAME_FILES,
    ID_COLUMNS,
    MANIFEST,
    OBJECT_FOLDERS,
    envelope_of,
    partial_folder,
    write_json_atomically,
)
from mddframes.snapshot.merged import one_type_per_name

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)

#: Tables or mappings per chunk read (their date columns are parsed together).
OBJECTS_PER_CHUNK = 32
#: Chunks built but not yet written that the writing thread may hold.
WRITES_IN_FLIGHT = 4
#: Objects read past the chunk being filled, per worker (the memory budget counts 3).
READ_AHEAD = 2
#: Chunks between two returns of freed memory to the system (see :func:`release_memory`).
TRIM_EVERY = 4
#: Rows per row group of the whole-frame files (tree, object types, packages).
ROWS_PER_GROUP = 5000
#: Elements per row group of structures.parquet (the records held at once while writing).
STRUCTURES_PER_GROUP = 5000
#: The schema of structures.parquet: the record is the element's JSON text as received.
STRUCTURES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("digest", pa.string(), nullable=False),
        pa.field("record", pa.string(), nullable=False, metadata={b"mddframes.encoding": b"json"}),
    ]
)


#: The manifest's words on how an ``object`` column is written.
JSON_ENCODING = (
    "object columns: one canonical JSON text per cell (keys sorted, no "
    "spaces, 1 and 1.0 apart), a missing cell null; the field's metadata has "
    "mddframes.encoding=json and mddframes.dtype (the pandas dtype); a name with "
    "several types across the files of tables/ (or mappings/) is JSON text in every "
    "one of them (dates as ISO 8601 strings in microseconds), its dtype per file"
)


def _new_folder(final: Path) -> Path:
    """``final``, checked to be new (an empty folder is taken away, to be made again)."""
    if final.exists():
        if not final.is_dir() or any(final.iterdir()):
            raise InvalidArgumentError(
                f"snapshot: {str(final)!r} exists already; a snapshot goes to a new folder"
            )
        final.rmdir()
    return final


def _write_tree(
    api: Api, system: str, partial: Path, kinds: tuple[Kind, ...]
) -> tuple[Any, list[Any], dict[Kind, list[Any]]]:
    """The tree's file entry, its element ids, and each kind's object ids; the tree frame
    is let go before anything else is read."""
    with gc_paused():  # as read_tree does: no cyclic GC passes over the parsed elements
        tree_payload = api.get_tree(system)
        tree = tree_frame(tree_payload, what=f"tree of system {system!r}")
        # decoded JSON: without a NaN, digested the fast way (the same digest)
        tree_digest = digest(tree_payload, finite=not has_non_finite(tree_payload))
    del tree_payload  # before the tree's Arrow copy is made: not both at once
    release_memory()  # the payload's pages back, before Arrow's pool takes its own
    entry = _write_frame(partial, "tree", tree, tree_digest)
    element_ids = tree["id"].tolist()
    object_ids = {
        kind: tree[ID_COLUMNS[kind]].dropna().drop_duplicates().tolist() for kind in kinds
    }
    del tree  # only the ids are needed from here on: the frame is not held while reading
    release_memory()
    return entry, element_ids, object_ids


def write_snapshot(
    api: Api,
    system: str,
    path: str | os.PathLike[str],
    *,
    max_workers: int | None,
    progress: bool | None,
    structures: bool,
) -> dict[str, Any]:
    """The work of :func:`mddframes.snapshot.snapshot`, documented there (same arguments,
    every one given: the defaults are that function's).

    That public function imports this module, and with it pyarrow, only when called.

    Returns
    -------
    dict
        The manifest, as written to ``manifest.json``.
    """
    if not isinstance(system, str) or not system:
        raise InvalidArgumentError(f"system must be a non-empty string, got {system!r}")
    final = _new_folder(Path(path))
    workers = resolve_workers(max_workers, api.max_workers)
    partial, journal, kept = _open_partial(api, system, final)
    started = _now()
    files: dict[str, Any] = {}
    kinds: tuple[Kind, ...] = ("table", "mapping")
    files["tree"], element_ids, object_ids = _write_tree(api, system, partial, kinds)
    # the objects an interrupted run wrote (journaled, verified) are not read again; an
    # id gone from the tree since is left out of the manifest (its rows stay in the file)
    done = {(o["kind"], o["id"]): o for line in kept for o in line["objects"]}
    objects: list[dict[str, Any]] = [
        done[kind, i] for kind in kinds for i in object_ids[kind] if (kind, i) in done
    ]
    resumed = len(objects)
    journal.start(kept)
    failures: list[dict[str, Any]] = []
    if structures:
        files["structures"], failed = _write_structures(
            api, partial, element_ids, workers, progress
        )
        failures += failed
    del element_ids
    number = next_part_number([line["file"] for line in kept])
    for kind in kinds:
        wanted = [i for i in object_ids[kind] if (kind, i) not in done]
        writer = BundleWriter(partial, kind, journal, number)
        written, failed = _write_bundle(api, writer, kind, wanted, workers, progress)
        number = writer.next_number
        objects += written
        failures += failed
    for kind in kinds:  # a name of several types: JSON text in every file of its kind
        one_type_per_name(partial, kind, objects, journal)
    files["object_types"] = _write_frame(partial, "object_types", read_object_types(api), None)
    files["packages"] = _write_frame(partial, "packages", read_packages(api, system), None)

    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "service": api.settings.base_url,
        "tenant": api.tenant,
        "system": system,
        "started_at": started,
        "finished_at": _now(),
        "files": files,
        "objects": objects,
        "failures": failures,
        # objects kept from an interrupted run (read before started_at): see _resume
        "resumed": resumed,
        "encodings": {"json": JSON_ENCODING},
    }
    write_json_atomically(partial / MANIFEST, manifest)
    journal.path.unlink()  # the manifest says it all now
    sync_folder(partial)
    os.replace(partial, final)
    sync_folder(final.parent)
    return manifest


def _write_bundle(
    api: Api, writer: BundleWriter, kind: Kind, wanted: list[Any], workers: int,
    progress: bool | None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """:func:`_write_objects` into ``writer``, which is closed whatever happens."""
    try:
        return _write_objects(api, writer, kind, wanted, workers, progress)
    finally:
        writer.close()
        release_memory()


def _open_partial(api: Api, system: str, final: Path) -> tuple[Path, Journal, list[Any]]:
    """The folder a snapshot is written in until it is whole, its journal, and what an
    interrupted run of the same snapshot kept (:func:`_resume`)."""
    partial = partial_folder(final)
    journal = Journal(partial, {"format": FORMAT, "version": FORMAT_VERSION,
                                "service": api.settings.base_url, "tenant": api.tenant,
                                "system": system})  # fmt: skip
    kept = _resume(partial, journal)
    for folder in (partial, *(partial / name for name in OBJECT_FOLDERS.values())):
        folder.mkdir(parents=True, exist_ok=True)
    return partial, journal, kept


def _resume(partial: Path, journal: Journal) -> list[dict[str, Any]]:
    """The journal lines of an interrupted run's files that a rerun keeps; the rest removed.

    Everything in the partial folder but the verified files of :class:`Journal` (and the
    journal itself, rewritten by the caller) is deleted: a file not journaled may be torn.
    """
    if not partial.exists():
        return []
    kept = journal.reusable()
    keep = {partial / line["file"] for line in kept} | {journal.path}
    for path in sorted(partial.rglob("*"), reverse=True):  # files before their folders
        if path.is_file() and path not in keep:
            path.unlink()
    objects = sum(len(line["objects"]) for line in kept)
    logger.info("snapshot: resuming the interrupted snapshot in %s (%d objects kept)",
                partial, objects)  # fmt: skip
    return kept


def release_memory() -> None:
    """Give the memory Arrow's pool holds unused back to the system."""
    pa.default_memory_pool().release_unused()


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _write_frame(
    folder: Path, what: str, frame: pd.DataFrame, content_digest: str | None
) -> dict[str, Any]:
    """One whole-frame file, and its entry of the manifest's ``files``.

    Converted and written :data:`ROWS_PER_GROUP` rows at a time, so a tree of a million
    elements never has a whole Arrow copy beside its frame (a column's Arrow type follows
    its dtype, so every slice has the same schema).
    """
    name = FRAME_FILES[what]
    frame = frame.reset_index(drop=True)
    writer = None
    try:
        for start in range(0, max(len(frame), 1), ROWS_PER_GROUP):
            piece = frame.iloc[start : start + ROWS_PER_GROUP].reset_index(drop=True)
            table = frame_to_arrow(piece)
            if writer is None:
                writer = pq.ParquetWriter(folder / name, table.schema)
            writer.write_table(table)
            del piece, table
    finally:
        if writer is not None:
            writer.close()
    return {"file": name, "rows": len(frame), "digest": content_digest}


def _write_structures(
    api: Api, folder: Path, ids: list[str], workers: int, progress: bool | None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """structures.parquet, one row group per :data:`STRUCTURES_PER_GROUP` elements."""
    failures: list[dict[str, Any]] = []
    rows = 0
    with pq.ParquetWriter(folder / FRAME_FILES["structures"], STRUCTURES_SCHEMA) as writer:
        batch: list[tuple[str, str, str]] = []
        outcomes = iter_bulk(api.get_structure, ids, ahead=workers, max_workers=workers,
                             progress=progress, errors="skip", desc="snapshot structures")  # fmt: skip
        for _position, element_id, payload, error in outcomes:
            if error is not None:
                failures.append({"kind": "structure", **failure_record(element_id, error)})
                continue
            # the text as received (key order kept: it orders read_structures' columns)
            text = depth.dumps(
                payload, what=f"element {element_id!r}", ensure_ascii=False, separators=(",", ":")
            )
            batch.append((element_id, digest(payload), text))
            if len(batch) >= STRUCTURES_PER_GROUP:
                rows += _write_structure_group(writer, batch)
        rows += _write_structure_group(writer, batch)
    return {"file": FRAME_FILES["structures"], "rows": rows, "digest": None}, failures


def _write_structure_group(writer: pq.ParquetWriter, batch: list[tuple[str, str, str]]) -> int:
    count = len(batch)
    if count:
        columns = [pa.array(list(values), pa.string()) for values in zip(*batch, strict=True)]
        writer.write_table(pa.Table.from_arrays(columns, schema=STRUCTURES_SCHEMA))
        batch.clear()
    return count


def _write_objects(
    api: Api, writer: BundleWriter, kind: Kind, ids: list[str], workers: int, progress: bool | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every table or mapping of ``ids``, each written as its chunk comes in.

    The Arrow tables are built here and written by one background thread (pyarrow lets
    go of the GIL while it encodes and writes; one thread keeps each file's row groups
    in order), at most :data:`WRITES_IN_FLIGHT` chunks behind.
    """
    registry = registry_for(api)
    written: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    chunk_count = itertools.count(1)
    chunks = iter_parts(api, ids, kind, chunksize=OBJECTS_PER_CHUNK, max_workers=workers,
                        progress=progress, errors="skip", ahead=READ_AHEAD * workers,
                        unbuilt=True)  # fmt: skip
    with _BackgroundWrites(writer) as files:
        for parts, failed in chunks:
            failures += [{"kind": kind, **failure} for failure in failed]
            batch = _chunk_tables(kind, parts, registry)
            written += [entry for _table, objects in batch for _envelope, entry in objects]
            files.write(batch)
            del batch, parts
            if next(chunk_count) % TRIM_EVERY == 0:
                release_memory()
    return written, failures


#: A chunk's objects ready to write: per group of the same columns, its Arrow table
#: (the objects' rows one after the other) and each object's envelope and manifest entry.
ChunkTables = list[tuple[pa.Table, list[tuple[dict[str, Any], dict[str, Any]]]]]


def _chunk_tables(kind: Kind, parts: list[tuple[str, Part]], registry: Any) -> ChunkTables:
    """A chunk's objects as Arrow tables, one per group of the same columns and dtypes.

    Converted a group at a time (each column's arrays joined first): converting object
    by object cost a few Arrow calls per column of every small table, more than the
    rows themselves. A small object's columns but the dates come unbuilt
    (:class:`~mddframes.codec.dtypes.UnbuiltColumn`): their values are joined and made
    one Arrow array, no pandas array is built.
    """
    key = ID_COLUMNS[kind]
    groups: dict[tuple[Any, ...], list[tuple[str, dict[Any, Any], pd.Index, str]]] = {}
    for object_id, (arrays, index) in parts:
        position = ROW_COLUMN
        while position in arrays:  # the long frames' rule (frames/long_frames.py)
            position = "_" + position
        signature = (position, *((n, column_metadata(a)) for n, a in arrays.items()))
        groups.setdefault(signature, []).append((object_id, arrays, index, position))
    out: ChunkTables = []
    for members in groups.values():
        first, position = members[0][1], members[0][3]
        columns = (
            first
            if len(members) == 1
            else {name: joined_column([m[1][name] for m in members]) for name in first}
        )
        lengths = [len(m[2]) for m in members]
        ids = np.repeat(np.array([m[0] for m in members], dtype=object), lengths)
        positions = np.concatenate([np.asarray(m[2], dtype=np.int64) for m in members])
        leading = {key: pa.array(ids, pa.string()), position: pa.array(positions, pa.int64())}
        objects = []
        for object_id, arrays, index, _position in members:
            context = registry.get(kind, object_id)
            if context is None:  # pragma: no cover - every read records its context
                raise RuntimeError(f"snapshot: the read of {kind} {object_id!r} left no context")
            entry = {"kind": kind, "id": object_id, "digest": context.digest, "rows": len(index),
                     "row_column": position, "columns": list(arrays)}  # fmt: skip
            objects.append((envelope_of(context.load_document(), kind), entry))
        out.append((arrays_to_arrow(columns, leading=leading), objects))
    return out


class _BackgroundWrites:
    """Batches of objects written by one background thread, the caller a few batches ahead."""

    def __init__(self, writer: BundleWriter) -> None:
        self._writer = writer
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mddframes-snapshot")
        self._pending: deque[Future[None]] = deque()

    def write(self, batch: ChunkTables) -> None:
        self._pending.append(self._pool.submit(self._writer.add, batch))
        while len(self._pending) > WRITES_IN_FLIGHT:
            self._pending.popleft().result()

    def __enter__(self) -> _BackgroundWrites:
        return self

    def __exit__(self, *exc_info: object) -> None:
        try:
            while self._pending:
                self._pending.popleft().result()
        finally:
            self._pool.shutdown(wait=True, cancel_futures=True)
