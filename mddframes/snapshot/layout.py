"""The files of a snapshot folder: their names, the manifest, and writing them atomically.

A snapshot of system ``S`` in ``DIR``::

    DIR/manifest.json            written last: service, system, time, files, objects, failures
    DIR/tree.parquet             read_tree(S)
    DIR/structures.parquet       one row per element: id, digest, record (its JSON text)
    DIR/object_types.parquet     read_object_types()
    DIR/packages.parquet         read_packages(S) (the open packages)
    DIR/tables/<name>.parquet    one file per table: table_id, row, then its columns
    DIR/mappings/<name>.parquet  one file per mapping: mapping_id, row, then its columns

``<name>`` is the object id with every character outside ``A-Z a-z 0-9 _ -`` written as
``%XX`` (its UTF-8 bytes), so distinct ids never share a file and no id can climb out
of its folder; the manifest maps each id to its file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from mddframes.codec.frame import rows_key
from mddframes.codec.kinds import Kind

#: The manifest's name, and what its "format" field says.
MANIFEST = "manifest.json"
FORMAT = "mddframes-snapshot"
FORMAT_VERSION = 1

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

#: The Parquet schema metadata key of an object file's envelope (see :func:`envelope_of`).
ENVELOPE_KEY = b"mddframes.envelope"

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_NAME_LIMIT = 150  # bytes of escaped id kept before a hash stands in for the rest


def object_file(kind: str, object_id: str) -> str:
    """The path, relative to the snapshot folder, of one table's or mapping's file.

    Parameters
    ----------
    kind : {"table", "mapping"}
        The kind of object.
    object_id : str
        Its id.

    Returns
    -------
    str
        ``"tables/<name>.parquet"`` or ``"mappings/<name>.parquet"`` (POSIX separators).

    Examples
    --------
    >>> object_file("table", "tbl/with/slash")
    'tables/tbl%2Fwith%2Fslash.parquet'
    """
    name = _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), object_id)
    if len(name) > _NAME_LIMIT:
        # long ids: a prefix to recognise, a hash to keep them apart (file names <= 255 bytes)
        name = name[:_NAME_LIMIT] + "~" + hashlib.sha256(object_id.encode()).hexdigest()[:16]
    return f"{OBJECT_FOLDERS[kind]}/{name}.parquet"


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
        json.dump(document, handle, ensure_ascii=False, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def sync_folder(path: Path) -> None:
    """Flush a folder's entries (renames into it) to disk, where the OS allows it.

    Parameters
    ----------
    path : pathlib.Path
        The folder.

    Examples
    --------
    >>> sync_folder(Path("."))
    """
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows cannot open a folder
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover - some file systems refuse
        pass
    finally:
        os.close(descriptor)


def envelope_of(payload: dict[str, Any], kind: Kind) -> dict[str, Any]:
    """A table's or mapping's payload without its rows (its rows list empty).

    Kept in each object's file (Parquet metadata ``mddframes.envelope``): with the
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
