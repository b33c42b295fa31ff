"""A history store: snapshots of a system kept as versions, stored at the cost of what changed.

A store in ``HIST`` (format 2; the layout of its log and frames is in
:mod:`mddframes.snapshot.history_log`)::

    HIST/history.json                      {"format": "mddframes-history", "version": 2}
    HIST/log/v000001.parquet               what version 1 changed (the commit point)
    HIST/checkpoints/c000050.parquet       every object as of version 50 (a reader's shortcut)
    HIST/objects/tables/<sha256>.parquet   the tables that changed in one version
    HIST/objects/mappings/<sha256>.parquet the mappings likewise
    HIST/frames/tree|structures/<sha256>.parquet  the rows of the tree (structures) a
                                           version added, changed or removed
    HIST/frames/order/<sha256>.parquet     their row order, once per distinct order
    HIST/frames/object_types|packages/<sha256>.parquet  once per distinct content
    HIST/.staging/                         the snapshot being added, and the ingest's journal

A version is added in three steps, all under the store's lock (one writer at a time,
across processes: :func:`~mddframes.writing.locks.folder_lock`):

1. a whole snapshot of the system is written to ``.staging/snapshot`` by
   :func:`~mddframes.snapshot.writer.write_snapshot`: crash-safe and resumed as any
   snapshot is;
2. each table and mapping whose digest equals its digest as of the latest version is
   not copied and not listed. The others are copied, the changed objects of a snapshot
   file together, into a new file named by its SHA-256 (each row carries its object's
   digest, ``_object_digest``, so engines join a version to its rows); an object gone
   since gets a tombstone. The tree's and structures' rows that changed are stored
   with tombstones of those removed (:mod:`mddframes.snapshot.history_rows`); object
   types and packages once per distinct content. Each file created is journaled
   (``.staging/ingest.jsonl``) before it is made;
3. ``log/vNNNNNN.parquet`` is written under a temporary name and renamed into place:
   the commit. Its key-value metadata is the snapshot's manifest without the objects.
   Every 50 versions a checkpoint follows (none made, reading is only slower).

An add interrupted before 3 leaves no version: the next add removes the files the
journal lists and resumes the staged snapshot (or takes it anew). Every folder and file
of a store is owner-only (``0700``/``0600``): it holds a tenant's tables. A store of
format 1 (a full listing per version) is upgraded by the next add, or by opening it
(:mod:`mddframes.snapshot.history_upgrade`).
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

from mddframes.disk_modes import PRIVATE_FILE_MODE, private_dir, sync_folder
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.snapshot.bundles import ENVELOPES_KEY
from mddframes.snapshot.history_journal import INGEST_JOURNAL, STAGING, IngestJournal, seal
from mddframes.snapshot.history_log import (
    CHECKPOINT_EVERY,
    CHECKPOINT_FOLDER,
    LOG_FOLDER,
    OBJECT_KINDS,
    ORDER_FOLDER,
    ROW_FRAMES,
    VERSION_KEY,
    checkpoint_file,
    log_file,
    log_numbers,
    log_table,
    objects_as_of,
    read_log,
)
from mddframes.snapshot.layout import (
    FRAME_FILES,
    ID_COLUMNS,
    MANIFEST,
    OBJECT_FOLDERS,
    write_json_atomically,
)

if TYPE_CHECKING:
    pass

#: The store's marker file, and what it says.
STORE_FILE = "history.json"
STORE_FORMAT = "mddframes-history"
STORE_VERSION = 2
#: The column of every stored object row that holds its object's payload digest.
DIGEST_COLUMN = "_object_digest"
#: How long opening a store of format 1 waits for another writer before its upgrade.
UPGRADE_LOCK_TIMEOUT = 60.0
#: Where a store of format 1 kept its version files (each a full listing).
FORMAT1_FOLDER = "versions"


def store_version(root: Path) -> int:
    """The format of the store at ``root`` (1 or 2); raise unless ``root`` holds one."""
    marker = root / STORE_FILE
    if not marker.is_file():
        raise InvalidArgumentError(f"{str(root)!r} holds no history store (no {STORE_FILE})")
    try:
        document = json.loads(marker.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataShapeError(f"{str(marker)!r} does not parse: {exc}") from exc
    if not isinstance(document, dict) or document.get("format") != STORE_FORMAT:
        raise DataShapeError(f"{str(marker)!r} is not the marker of an mddframes history store")
    version = document.get("version")
    if version not in (1, STORE_VERSION):
        raise DataShapeError(f"{str(marker)!r} is a history store of format {version!r}; this "
                             f"mddframes reads formats 1 and {STORE_VERSION}")  # fmt: skip
    return int(version)


def write_marker(root: Path) -> None:
    """Mark ``root`` a store of this format (atomically: an upgrade's commit)."""
    write_json_atomically(root / STORE_FILE, {"format": STORE_FORMAT, "version": STORE_VERSION})
    os.chmod(root / STORE_FILE, PRIVATE_FILE_MODE)


def make_folders(root: Path) -> None:
    """The store's folders, owner-only."""
    folders = (LOG_FOLDER, CHECKPOINT_FOLDER, STAGING, ORDER_FOLDER, *(f"objects/{f}" for f in OBJECT_FOLDERS.values()),
               *(f"frames/{what}" for what in FRAME_FILES))  # fmt: skip
    for folder in folders:
        private_dir(root / folder, root=root)


def open_store(root: Path) -> None:
    """Make ``root`` a store (owner-only) if it is not one; refuse a folder of other things."""
    if root.exists() and not (root / STORE_FILE).exists():
        if not root.is_dir() or any(p.name != ".lock" and not p.name.startswith(".lock")
                                    for p in root.iterdir()):  # fmt: skip
            raise InvalidArgumentError(
                f"{str(root)!r} is neither a history store nor an empty folder; a history "
                "goes to a new folder or to a store made by snapshot(history=...)"
            )
    private_dir(root)
    if not (root / STORE_FILE).exists():
        make_folders(root)
        write_marker(root)
    store_version(root)


def undo_unfinished(store: Path) -> None:
    """Remove the files an interrupted ingest (or upgrade) made: it was never committed."""
    journal = store / STAGING / INGEST_JOURNAL
    if not journal.exists():
        return
    lines = journal.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0]) if lines else {}
    if "upgrade" in header:
        committed = store_version(store) == header["upgrade"]
    else:
        folder = LOG_FOLDER if store_version(store) == STORE_VERSION else FORMAT1_FOLDER
        committed = header.get("version") in log_numbers(store, folder)
    if not committed:
        for text in lines[1:]:
            with contextlib.suppress(ValueError):  # the line a kill tore: its file was not made
                (store / json.loads(text)["file"]).unlink(missing_ok=True)
    journal.unlink()


def latest_state(
    store: Path,
) -> tuple[int, dict[tuple[str, str], dict[str, Any]], dict[str, dict[str, Any]]]:
    """The latest version, its objects by (kind, id) and its frames' log rows by kind."""
    numbers = log_numbers(store)
    if not numbers:
        return 0, {}, {}
    rows = read_log(store, numbers[-1], since=numbers[-1])
    frames = {r["kind"]: r for r in rows if r["kind"] not in OBJECT_KINDS}
    return numbers[-1], objects_as_of(store, numbers[-1]), frames


def write_checkpoint(root: Path, number: int) -> None:
    """The checkpoint of version ``number`` if the latest is :data:`CHECKPOINT_EVERY`
    versions behind (written under a temporary name and renamed: a reader takes a
    checkpoint only whole, and one never made only makes reading slower)."""
    checkpoints = log_numbers(root, CHECKPOINT_FOLDER, "c")
    if number - (checkpoints[-1] if checkpoints else 0) < CHECKPOINT_EVERY:
        return
    final = root / checkpoint_file(number)
    temporary = final.with_name(f".{final.name}.tmp")
    pq.write_table(log_table(list(objects_as_of(root, number).values())), temporary)
    seal(temporary)
    os.replace(temporary, final)


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
    from mddframes.snapshot.history_rows import store_row_frame

    manifest = json.loads((staged / MANIFEST).read_text(encoding="utf-8"))
    latest, previous, previous_frames = latest_state(store)
    number = latest + 1
    journal = IngestJournal(store, {"version": number})
    rows: list[dict[str, Any]] = []
    for what, entry in manifest["files"].items():
        if what in ROW_FRAMES:
            stored = store_row_frame(store, what, pq.read_table(staged / entry["file"]),
                                     number, previous_frames.get(what), journal)  # fmt: skip
        else:
            temporary = store / STAGING / f"{what}.parquet.tmp"
            temporary.unlink(missing_ok=True)
            shutil.copyfile(staged / entry["file"], temporary)
            stored = {"file": journal.place(temporary, f"frames/{what}")}
        rows.append({"kind": what, "digest": entry.get("digest"), "rows": entry["rows"], **stored})
    to_copy: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in manifest["objects"]:
        before = previous.pop((entry["kind"], entry["id"]), None)
        if before is None or before["digest"] != entry["digest"]:
            to_copy.setdefault((entry["kind"], entry["file"]), []).append(entry)
    for (kind, source), entries in to_copy.items():
        rows += _copy_objects(store, staged / source, kind, entries, journal)
    rows += [{"kind": kind, "id": object_id, "removed": True} for kind, object_id in previous]
    document = {k: v for k, v in manifest.items() if k not in ("objects", "files")}
    kinds = [entry["kind"] for entry in manifest["objects"]]
    document["counts"] = {kind: kinds.count(kind) for kind in OBJECT_KINDS}
    commit(store, number, manifest["started_at"], rows, document)
    journal.done()
    write_checkpoint(store, number)
    return number


def _copy_objects(
    store: Path, source: Path, kind: str, entries: list[dict[str, Any]], journal: IngestJournal
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
    relative = journal.write(joined, f"objects/{OBJECT_FOLDERS[kind]}",
                             row_group_size=max(joined.num_rows, 1),
                             write_statistics=[ID_COLUMNS[kind], DIGEST_COLUMN])  # fmt: skip
    for entry in placed:
        entry["file"] = relative
    return placed


def commit(
    store: Path, number: int, taken: str, rows: list[dict[str, Any]], document: dict[str, Any]
) -> None:
    """Write the log file of version ``number`` under a temporary name and rename it into
    place (``rows``: what it changed; ``document``: its manifest without objects)."""
    import pandas as pd

    when = pd.Timestamp(taken)
    when = when.tz_convert("UTC") if when.tzinfo else when.tz_localize("UTC")
    stamped = [{**row, "version": number, "taken_at": when.to_pydatetime()} for row in rows]
    table = log_table(stamped).replace_schema_metadata(
        {VERSION_KEY: json.dumps(document, ensure_ascii=False)}
    )
    final = store / log_file(number)
    temporary = final.with_name(f".{final.name}.tmp")
    pq.write_table(table, temporary)
    seal(temporary)
    os.replace(temporary, final)
    sync_folder(final.parent)
