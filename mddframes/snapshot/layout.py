"""The files of a snapshot folder: their names, the manifest, and writing them atomically.

A snapshot of system ``S`` in ``DIR``::

    DIR/manifest.json            written last: service, system, time, files, objects, failures
    DIR/tree.parquet             read_tree(S)
    DIR/structures.parquet       one row per element: id, digest, record (its JSON text)
    DIR/object_types.parquet     read_object_types()
    DIR/packages.parquet         read_packages(S) (the open packages)
    DIR/tables/part-NNNNN.parquet    tables of the same columns: table_id, row, their
                                     columns; a row group per chunk read
    DIR/mappings/part-NNNNN.parquet  mappings likewise (mapping_id, row, ...)

The manifest maps each id to its file, row group and offset (see :mod:`mddframes.snapshot.bundles`
for why objects share files, and docs/guide/snapshots.md). While a snapshot is written,
``journal.jsonl`` in the partial folder lists the object files closed so far.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mddframes.codec.frame import rows_key
from mddframes.codec.kinds import Kind

#: The manifest's name, and what its "format" field says.
MANIFEST = "manifest.json"
FORMAT = "mddframes-snapshot"
FORMAT_VERSION = 2

#: The single-frame files: what they hold -> file name.
FRAME_FILES = {
    "tree": "tree.parquet",
    "structures": "structures.parquet",
    "object_types": "object_types.parquet",
    "packages": "packages.parquet",
}
#: The folder of each kind of per-object file, and the id column its files lead with.
OBJECT_FOLDERS = {"table": "tables", "mapping": "mappings"}
ID_COLUMNS = {"table": "table_id", "mapping": "mapping_id"}


def partial_folder(final: Path) -> Path:
    """Where a snapshot into ``final`` is written before it is renamed to ``final``.

    Parameters
    ----------
    final : pathlib.Path
        The snapshot folder.

    Returns
    -------
    pathlib.Path
        Its hidden sibling ``.<name>.partial``.

    Examples
    --------
    >>> partial_folder(Path("snapshots/dwh")).name
    '.dwh.partial'
    """
    return final.parent / f".{final.name}.partial"


def write_json_atomically(path: Path, document: Any) -> None:
    """Write ``document`` as JSON to ``path`` via a temporary name, flushed to disk.

    Parameters
    ----------
    path : pathlib.Path
        The file to write.
    document : object
        Anything ``json.dump`` takes.

    Examples
    --------
    >>> write_json_atomically(Path("manifest.json"), {"format": FORMAT})
    """
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(_readable_json(document))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _readable_json(document: Any) -> str:
    """An object's JSON with a line per key, and a list's items a line each, compact.

    As readable as ``indent`` for a manifest of thousands of objects, and encoded by
    json's C encoder (``indent`` takes the pure-Python one, see docs/performance.md).
    """
    if not isinstance(document, dict):
        return json.dumps(document, ensure_ascii=False)
    lines = []
    for key, value in document.items():
        name = json.dumps(key, ensure_ascii=False)
        if isinstance(value, list) and value:
            items = ",\n  ".join(json.dumps(item, ensure_ascii=False) for item in value)
            lines.append(f" {name}: [\n  {items}\n ]")
        else:
            lines.append(f" {name}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def envelope_of(payload: dict[str, Any], kind: Kind) -> dict[str, Any]:
    """A table's or mapping's payload without its rows (its rows list empty).

    Kept in each object's file (key-value metadata ``mddframes.envelopes``): with the
    frame, it rebuilds the payload for a diff.

    Parameters
    ----------
    payload : dict
        The payload as the service sent it.
    kind : {"table", "mapping"}
        What it is.

    Returns
    -------
    dict
        The payload with an empty rows list.

    Examples
    --------
    >>> envelope_of({"id": "t", "data": [{"a": 1}]}, "table")
    {'id': 't', 'data': []}
    """
    rows = rows_key(payload, kind)
    return {key: ([] if key == rows else value) for key, value in payload.items()}
