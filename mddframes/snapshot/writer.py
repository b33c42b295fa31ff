"""snapshot(): a whole system written to a folder of Parquet files, in bounded memory.

The objects are read with the bulk machinery of :mod:`mddframes.frames.bulk_tables`
(one table or mapping per chunk, at most ``2 x max_workers`` read ahead) and each is
written to its file as soon as it is read, so memory follows the largest objects in
flight, not the size of the system. Everything goes into a hidden sibling folder
(``.DIR.partial``) that is renamed to ``DIR`` once ``manifest.json``, written last, is on
disk: a snapshot killed at any moment leaves no ``DIR`` that looks complete, and the next
run starts the interrupted one over and completes it.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from mddframes.bulk import iter_bulk, resolve_workers
from mddframes.codec.fastjson import gc_paused
from mddframes.codec.kinds import Kind
from mddframes.codec.values import digest
from mddframes.context import registry_for
from mddframes.errors import InvalidArgumentError
from mddframes.frames.bulk_tables import failure_record, iter_mappings, iter_tables, row_column
from mddframes.frames.listing import read_object_types, read_packages
from mddframes.frames.tree import tree_frame
from mddframes.snapshot.arrow_columns import frame_to_arrow
from mddframes.snapshot.layout import (
    FORMAT,
    FORMAT_VERSION,
    FRAME_FILES,
    ID_COLUMNS,
    MANIFEST,
    OBJECT_FOLDERS,
    envelope_of,
    object_file,
    partial_folder,
    sync_folder,
    write_json_atomically,
)

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)

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


def write_snapshot(
    api: Api,
    system: str,
    path: str | os.PathLike[str],
    *,
    max_workers: int | None = None,
    progress: bool = True,
    structures: bool = True,
) -> dict[str, Any]:
    """Write a whole system to a folder of Parquet files that DuckDB, polars and Spark read.

    The tree, every element's record, every table and mapping, the object types and
    the open packages, plus ``manifest.json`` (see :mod:`mddframes.snapshot.layout` and
    docs/guide/snapshots.md). An object that cannot be read is listed under
    ``"failures"`` in the manifest, never silently missing.

    Parameters
    ----------
    api : Api
        The raw layer (``client.api``).
    system : str
        The system to snapshot.
    path : str or os.PathLike
        The snapshot folder; it must not exist yet (or be empty). An interrupted
        snapshot into the same path is started over.
    max_workers : int, optional
        Concurrent requests; default ``api.max_workers``.
    progress : bool, default True
        Show progress bars.
    structures : bool, default True
        Read every element's record (one request per element) into structures.parquet;
        ``False`` leaves the file out (the tree still has each element's main fields).

    Returns
    -------
    dict
        The manifest, as written to ``manifest.json``.

    Raises
    ------
    InvalidArgumentError
        ``path`` exists and is not an empty folder, or ``system`` is not a string.
    MddError
        The tree, the object types or the packages could not be read (then nothing is
        left at ``path``).

    Examples
    --------
    >>> manifest = write_snapshot(client.api, "DWH", "snapshots/2026-11-25")
    >>> len(manifest["failures"])
    0
    """
    if not isinstance(system, str) or not system:
        raise InvalidArgumentError(f"system must be a non-empty string, got {system!r}")
    final = Path(path)
    if final.exists():
        if not final.is_dir() or any(final.iterdir()):
            raise InvalidArgumentError(
                f"snapshot: {str(final)!r} exists already; a snapshot goes to a new folder"
            )
        final.rmdir()
    workers = resolve_workers(max_workers, api.max_workers)
    partial = partial_folder(final)
    if partial.exists():
        logger.info("snapshot: starting over the interrupted snapshot in %s", partial)
        shutil.rmtree(partial)
    for folder in (partial, *(partial / name for name in OBJECT_FOLDERS.values())):
        folder.mkdir(parents=True)

    started = _now()
    files: dict[str, Any] = {}
    with gc_paused():  # as read_tree does: no cyclic GC passes over the parsed elements
        tree_payload = api.get_tree(system)
        tree = tree_frame(tree_payload, what=f"tree of system {system!r}")
    files["tree"] = _write_frame(partial, "tree", tree, digest(tree_payload))
    del tree_payload
    objects: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    if structures:
        files["structures"], failed = _write_structures(
            api, partial, tree["id"].tolist(), workers, progress
        )
        failures += failed
    readers: tuple[tuple[Kind, Any], ...] = (("table", iter_tables), ("mapping", iter_mappings))
    for kind, reader in readers:
        ids = tree[ID_COLUMNS[kind]].dropna().drop_duplicates().tolist()
        chunks = reader(api, ids, chunksize=1, max_workers=workers, progress=progress,
                        errors="skip")  # fmt: skip
        written, failed = _write_objects(api, partial, kind, chunks)
        objects += written
        failures += failed
    del tree
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
        "encodings": {
            "json": "object columns: one canonical JSON text per cell (keys sorted, no "
            "spaces, 1 and 1.0 apart), a missing cell null; the field's metadata has "
            "mddframes.encoding=json and mddframes.dtype (the pandas dtype)",
        },
    }
    write_json_atomically(partial / MANIFEST, manifest)
    sync_folder(partial)
    os.replace(partial, final)
    sync_folder(final.parent)
    return manifest


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _write_frame(
    folder: Path, what: str, frame: pd.DataFrame, content_digest: str | None
) -> dict[str, Any]:
    """One whole-frame file, and its entry of the manifest's ``files``."""
    name = FRAME_FILES[what]
    pq.write_table(frame_to_arrow(frame.reset_index(drop=True)), folder / name)
    return {"file": name, "rows": len(frame), "digest": content_digest}


def _write_structures(
    api: Api, folder: Path, ids: list[str], workers: int, progress: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """structures.parquet, one row group per :data:`STRUCTURES_PER_GROUP` elements."""
    failures: list[dict[str, Any]] = []
    rows = 0
    with pq.ParquetWriter(folder / FRAME_FILES["structures"], STRUCTURES_SCHEMA) as writer:
        batch: list[tuple[str, str, str]] = []
        outcomes = iter_bulk(api.get_structure, ids, ahead=2 * workers, max_workers=workers,
                             progress=progress, errors="skip", desc="snapshot structures")  # fmt: skip
        for _position, element_id, payload, error in outcomes:
            if error is not None:
                failures.append({"kind": "structure", **failure_record(element_id, error)})
                continue
            # the text as received (key order kept: it orders read_structures' columns)
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
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
    api: Api, folder: Path, kind: Kind, chunks: Iterator[pd.DataFrame]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One file per table or mapping, as each chunk (one object) comes in."""
    registry = registry_for(api)
    written, failures = [], []
    for chunk in chunks:
        failures += [{"kind": kind, **failure} for failure in chunk.attrs["failures"]]
        if not chunk.attrs["columns"]:
            continue
        ((object_id, columns),) = chunk.attrs["columns"].items()
        position = row_column(chunk)
        context = registry.get(kind, object_id)
        if context is None:  # pragma: no cover - every read records its context
            raise RuntimeError(f"snapshot: the read of {kind} {object_id!r} left no context")
        payload = context.payload
        relative = object_file(kind, object_id)
        frame = chunk.reset_index(drop=True)
        table = frame_to_arrow(frame)
        envelope = envelope_of(payload, kind)
        table = table.replace_schema_metadata(
            {**(table.schema.metadata or {}),
             b"mddframes.envelope": json.dumps(envelope, ensure_ascii=False).encode()}
        )  # fmt: skip
        pq.write_table(table, folder / relative)
        written.append({
            "kind": kind, "id": object_id, "digest": context.digest, "rows": len(frame),
            "file": relative, "row_column": position, "columns": [str(c) for c in columns],
        })  # fmt: skip
        del payload, frame, table, chunk
    return written, failures
