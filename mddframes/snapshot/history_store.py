"""A history store: snapshots of a system kept as versions, stored at the cost of what changed.

A store in ``HIST``::

    HIST/history.json                      {"format": "mddframes-history", "version": 1}
    HIST/versions/v000001.parquet          one row per object of version 1 (the commit point)
    HIST/objects/tables/<sha256>.parquet   the tables that changed in one version
    HIST/objects/mappings/<sha256>.parquet the mappings likewise
    HIST/frames/<what>/<sha256>.parquet    tree, structures, object types, packages
    HIST/.staging/                         the snapshot being added, and the ingest's journal

A version is added in three steps, all under the store's lock (one writer at a time,
across processes: :func:`~mddframes.writing.locks.folder_lock`):

1. a whole snapshot of the system is written to ``.staging/snapshot`` by
   :func:`~mddframes.snapshot.writer.write_snapshot`: crash-safe and resumed as any
   snapshot is;
2. each table and mapping whose digest equals its digest in the latest version is not
   copied: the new version points at the rows already stored. The others are copied,
   the changed objects of a snapshot file together, into a new file named by its
   SHA-256 (each row carries its object's digest, ``_object_digest``, so engines join
   a version to its rows); tree, structures, object types and packages files are stored
   once per distinct content. Each file created is journaled (``.staging/ingest.jsonl``)
   before it is made;
3. ``versions/vNNNNNN.parquet`` is written under a temporary name and renamed into
   place: the commit. Its rows are the version's objects (kind, id, digest, rows, file,
   row group, offset) and its frames; its key-value metadata the snapshot's manifest
   without the objects.

An add interrupted before 3 leaves no version: the next add removes the files the
journal lists and resumes the staged snapshot (or takes it anew). Every folder and file
of a store is owner-only (``0700``/``0600``): it holds a tenant's tables.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from mddframes.disk_modes import PRIVATE_FILE_MODE, private_dir
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.snapshot.bundles import ENVELOPES_KEY, file_sha256
from mddframes.snapshot.layout import (
    FRAME_FILES,
    ID_COLUMNS,
    MANIFEST,
    OBJECT_FOLDERS,
    sync_folder,
    write_json_atomically,
)

if TYPE_CHECKING:
    from mddframes.api import Api

#: The store's marker file, and what it says.
STORE_FILE = "history.json"
STORE_FORMAT = "mddframes-history"
STORE_VERSION = 1
#: The column of every stored object row that holds its object's payload digest.
DIGEST_COLUMN = "_object_digest"
#: The key-value metadata key of a version file: the snapshot's manifest, objects left out.
VERSION_KEY = b"mddframes.version"
#: The columns of a version file, in order.
VERSION_SCHEMA = pa.schema([
    ("version", pa.int64()),
    ("taken_at", pa.timestamp("ms", tz="UTC")),
    ("kind", pa.string()),
    ("id", pa.string()),
    ("digest", pa.string()),
    ("rows", pa.int64()),
    ("file", pa.string()),
    ("row_group", pa.int64()),
    ("offset", pa.int64()),
    ("row_column", pa.string()),
    ("columns", pa.string()),
])  # fmt: skip
_STAGING = ".staging"
_INGEST_JOURNAL = "ingest.jsonl"


def version_file(number: int) -> str:
    """The path, relative to the store, of version ``number``'s file.

    Parameters
    ----------
    number : int
        The version (1, 2, ...).

    Returns
    -------
    str
        ``"versions/v000001.parquet"``.

    Examples
    --------
    >>> version_file(12)
    'versions/v000012.parquet'
    """
    return f"versions/v{number:06d}.parquet"


def version_numbers(root: Path) -> list[int]:
    """The committed versions of the store at ``root``, in order."""
    folder = root / "versions"
    if not folder.is_dir():
        return []
    names = (p.name for p in folder.iterdir())
    return sorted(int(n[1:7]) for n in names if n.startswith("v") and n.endswith(".parquet"))


def check_store(root: Path) -> None:
    """Raise unless ``root`` holds a history store (its marker file)."""
    marker = root / STORE_FILE
    if not marker.is_file():
        raise InvalidArgumentError(f"{str(root)!r} holds no history store (no {STORE_FILE})")
    try:
        document = json.loads(marker.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataShapeError(f"{str(marker)!r} does not parse: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != STORE_FORMAT:
        raise DataShapeError(f"{str(marker)!r} is not the marker of an mddframes history store")


def _open_store(root: Path) -> None:
    """Make ``root`` a store (owner-only) if it is not one; refuse a folder of other things."""
    if root.exists() and not (root / STORE_FILE).exists():
        if not root.is_dir() or any(p.name != ".lock" and not p.name.startswith(".lock")
                                    for p in root.iterdir()):  # fmt: skip
            raise InvalidArgumentError(
                f"{str(root)!r} is neither a history store nor an empty folder; a history "
                "goes to a new folder or to a store made by snapshot(history=...)"
            )
    private_dir(root)
    folders = ("versions", _STAGING, *(f"objects/{f}" for f in OBJECT_FOLDERS.values()),
               *(f"frames/{what}" for what in FRAME_FILES))  # fmt: skip
    for folder in folders:
        private_dir(root / folder, root=root)
    if not (root / STORE_FILE).exists():
        write_json_atomically(root / STORE_FILE, {"format": STORE_FORMAT, "version": STORE_VERSION})
        os.chmod(root / STORE_FILE, PRIVATE_FILE_MODE)
    check_store(root)


def add_version(
    api: Api,
    system: str,
    root: str | os.PathLike[str],
    *,
    max_workers: int | None,
    progress: bool | None,
    structures: bool,
) -> int:
    """Take a snapshot of ``system`` and add it to the store at ``root`` as a new version.

    The work of ``snapshot(..., history=root)``, documented there.

    Returns
    -------
    int
        The number of the version added.
    """
    from mddframes.snapshot.writer import write_snapshot
    from mddframes.writing.locks import folder_lock

    store = Path(root)
    _open_store(store)
    with folder_lock(store, api.settings.lock_timeout, purpose=f"history of {system!r}"):
        _undo_unfinished(store)
        staged = store / _STAGING / "snapshot"
        if (staged / MANIFEST).is_file():
            manifest = json.loads((staged / MANIFEST).read_text(encoding="utf-8"))
            wanted = (api.settings.base_url, api.tenant, system)
            if (manifest.get("service"), manifest.get("tenant"), manifest.get("system")) != wanted:
                shutil.rmtree(staged)  # another system's: taken anew
        if not (staged / MANIFEST).is_file():
            write_snapshot(api, system, staged, max_workers=max_workers, progress=progress,
                           structures=structures)  # fmt: skip
        number = ingest(store, staged)
        shutil.rmtree(staged)
        return number


def _undo_unfinished(store: Path) -> None:
    """Remove the files an interrupted ingest made (its version was never committed)."""
    journal = store / _STAGING / _INGEST_JOURNAL
    if not journal.exists():
        return
    lines = journal.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0]) if lines else {}
    if header.get("version") not in version_numbers(store):
        for text in lines[1:]:
            with contextlib.suppress(ValueError):  # the line a kill tore: its file was not made
                (store / json.loads(text)["file"]).unlink(missing_ok=True)
    journal.unlink()


def _latest(store: Path) -> tuple[int, dict[tuple[str, str], dict[str, Any]]]:
    """The latest version's number and its objects' entries by (kind, id)."""
    numbers = version_numbers(store)
    if not numbers:
        return 0, {}
    entries = read_version_entries(store, numbers[-1])
    return numbers[-1], {(e["kind"], e["id"]): e for e in entries if e["id"] is not None}


def read_version_entries(
    store: Path, number: int, *, kind: str | None = None, object_id: str | None = None
) -> list[dict[str, Any]]:
    """The rows of one version file as dicts (``columns`` parsed back to a list); with
    ``kind`` and ``object_id``, only that object's (a filtered read)."""
    filters = None if kind is None else [("kind", "=", kind), ("id", "=", object_id)]
    table = pq.read_table(store / version_file(number), filters=filters)
    entries: list[dict[str, Any]] = table.drop(["version", "taken_at"]).to_pylist()
    for entry in entries:
        entry["columns"] = json.loads(entry["columns"]) if entry["columns"] else None
    return entries


def read_version_manifest(store: Path, number: int) -> dict[str, Any]:
    """One version's manifest as the snapshot wrote it (files relative to the store)."""
    metadata = pq.read_schema(store / version_file(number)).metadata or {}
    manifest: dict[str, Any] = json.loads(metadata[VERSION_KEY])
    entries = read_version_entries(store, number)
    manifest["objects"] = [
        {k: e[k] for k in ("kind", "id", "digest", "rows", "row_column", "columns", "file",
                           "row_group", "offset")}
        for e in entries if e["kind"] in ID_COLUMNS
    ]  # fmt: skip
    return manifest


class _IngestJournal:
    """``.staging/ingest.jsonl``: the version being added, then each file about to be made."""

    def __init__(self, store: Path, version: int) -> None:
        self.store = store
        self.path = store / _STAGING / _INGEST_JOURNAL
        self._append({"version": version})

    def _append(self, line: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def place(self, temporary: Path, folder: str) -> str:
        """Move a finished temporary file to its content name under ``folder``; the name."""
        _seal(temporary)
        relative = f"{folder}/{file_sha256(temporary)}.parquet"
        target = self.store / relative
        if target.exists():  # the same bytes are stored already
            temporary.unlink()
            return relative
        self._append({"file": relative})
        os.replace(temporary, target)
        return relative


def _seal(path: Path) -> None:
    """Owner-only and on disk."""
    os.chmod(path, PRIVATE_FILE_MODE)
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def ingest(store: Path, staged: Path) -> int:
    """Add the complete snapshot in ``staged`` to the store as its next version.

    Parameters
    ----------
    store : pathlib.Path
        The store (its lock held by the caller).
    staged : pathlib.Path
        A complete snapshot folder.

    Returns
    -------
    int
        The version added.
    """
    manifest = json.loads((staged / MANIFEST).read_text(encoding="utf-8"))
    latest, previous = _latest(store)
    number = latest + 1
    journal = _IngestJournal(store, number)
    rows: list[dict[str, Any]] = []
    files: dict[str, Any] = {}
    for what, entry in manifest["files"].items():
        temporary = store / _STAGING / f"{what}.parquet.tmp"
        temporary.unlink(missing_ok=True)
        shutil.copyfile(staged / entry["file"], temporary)
        relative = journal.place(temporary, f"frames/{what}")
        files[what] = {**entry, "file": relative}
        rows.append({"kind": what, "id": None, "digest": entry.get("digest"),
                     "rows": entry["rows"], "file": relative})  # fmt: skip
    to_copy: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in manifest["objects"]:
        before = previous.get((entry["kind"], entry["id"]))
        if before is not None and before["digest"] == entry["digest"]:
            rows.append(before)
        else:
            to_copy.setdefault((entry["kind"], entry["file"]), []).append(entry)
    for (kind, source), entries in to_copy.items():
        rows += _copy_objects(store, staged / source, kind, entries, journal)
    taken = manifest["started_at"]
    document = {k: v for k, v in manifest.items() if k != "objects"}
    document["files"] = files
    _commit(store, number, taken, rows, document)
    journal.path.unlink()  # the version is committed: nothing of it to undo
    return number


def _copy_objects(
    store: Path, source: Path, kind: str, entries: list[dict[str, Any]], journal: _IngestJournal
) -> list[dict[str, Any]]:
    """The rows of ``entries`` from one snapshot file into one new stored file, one row group.

    A row group is read once for all the objects it holds; each object's rows carry its
    digest in :data:`DIGEST_COLUMN`.
    """
    parquet = pq.ParquetFile(source)
    envelopes = json.loads((parquet.metadata.metadata or {})[ENVELOPES_KEY])
    pieces: list[pa.Table] = []
    placed: list[dict[str, Any]] = []
    offset = 0
    by_group: dict[int, list[dict[str, Any]]] = {}
    for entry in entries:
        by_group.setdefault(entry["row_group"], []).append(entry)
    for group, members in sorted(by_group.items()):
        table = parquet.read_row_group(group)
        for entry in members:
            piece = table.slice(entry["offset"], entry["rows"])
            digests = pa.array([entry["digest"]] * entry["rows"], pa.string())
            pieces.append(piece.append_column(DIGEST_COLUMN, digests))
            placed.append({**entry, "row_group": 0, "offset": offset})
            offset += entry["rows"]
    joined = pa.concat_tables(pieces)
    kept = {e["id"]: envelopes[e["id"]] for e in entries}
    joined = joined.replace_schema_metadata(
        {**(joined.schema.metadata or {}), ENVELOPES_KEY: json.dumps(kept, ensure_ascii=False)}
    )
    temporary = store / _STAGING / "objects.parquet.tmp"
    temporary.unlink(missing_ok=True)
    pq.write_table(joined, temporary, row_group_size=max(joined.num_rows, 1),
                   write_statistics=[ID_COLUMNS[kind], DIGEST_COLUMN])  # fmt: skip
    relative = journal.place(temporary, f"objects/{OBJECT_FOLDERS[kind]}")
    for entry in placed:
        entry["file"] = relative
    return placed


def _commit(
    store: Path, number: int, taken: str, rows: list[dict[str, Any]], document: dict[str, Any]
) -> None:
    """Write the version file under a temporary name and rename it into place."""
    import pandas as pd

    when = pd.Timestamp(taken)
    when = when.tz_convert("UTC") if when.tzinfo else when.tz_localize("UTC")
    columns: dict[str, list[Any]] = {name: [] for name in VERSION_SCHEMA.names}
    for row in rows:
        columns["version"].append(number)
        columns["taken_at"].append(when.to_pydatetime())
        for name in VERSION_SCHEMA.names[2:]:
            value = row.get(name)
            columns[name].append(json.dumps(value) if name == "columns" and value is not None
                                 else value)  # fmt: skip
    table = pa.Table.from_pydict(columns, schema=VERSION_SCHEMA)
    table = table.replace_schema_metadata({VERSION_KEY: json.dumps(document, ensure_ascii=False)})
    final = store / version_file(number)
    temporary = final.with_name(f".{final.name}.tmp")
    pq.write_table(table, temporary)
    _seal(temporary)
    os.replace(temporary, final)
    sync_folder(final.parent)
