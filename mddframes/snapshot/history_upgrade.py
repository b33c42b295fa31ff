"""A history store of format 1 upgraded to format 2, once, crash-safe.

Format 1 (mddframes' first history store) listed every object of a version in
``versions/vNNNNNN.parquet`` and stored each distinct tree whole. The upgrade replays
its versions, oldest first, into format 2's log (:mod:`mddframes.snapshot.history_log`):
each version's changed objects (their stored rows are kept where they are), tombstones
of those gone, and the tree's and structures' changed rows. Then:

1. the marker says format 2 (written atomically): the commit. Interrupted before it,
   the store is still format 1 as it was: the next attempt removes the partial log and
   the files the journal lists, and starts again;
2. ``versions/`` and the stored files no version refers to any more (the whole trees)
   are removed. Interrupted there, the next add (or opening) finishes it.

The next add performs it under the store's lock, as does opening the store with
:class:`~mddframes.snapshot.history.History`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from mddframes.snapshot.history_journal import IngestJournal
from mddframes.snapshot.history_log import (
    CHECKPOINT_FOLDER,
    LOG_FOLDER,
    OBJECT_KINDS,
    ROW_FRAMES,
    VERSION_KEY,
    log_numbers,
    read_log,
)
from mddframes.snapshot.history_rows import store_row_frame
from mddframes.snapshot.history_store import (
    FORMAT1_FOLDER,
    STORE_VERSION,
    UPGRADE_LOCK_TIMEOUT,
    commit,
    make_folders,
    store_version,
    undo_unfinished,
    write_checkpoint,
    write_marker,
)


def upgrade(root: Path) -> None:
    """Upgrade the store at ``root`` to this format if it is older (under its lock)."""
    from mddframes.writing.locks import folder_lock

    with folder_lock(root, UPGRADE_LOCK_TIMEOUT, purpose="the upgrade of a history store"):
        upgrade_unlocked(root)


def upgrade_unlocked(root: Path) -> None:
    """:func:`upgrade`, its lock held by the caller."""
    if store_version(root) == STORE_VERSION:
        if (root / FORMAT1_FOLDER).exists():
            _remove_leftovers(root)  # an upgrade interrupted after its commit
        return
    undo_unfinished(root)
    for folder in (LOG_FOLDER, CHECKPOINT_FOLDER):  # an earlier attempt's
        shutil.rmtree(root / folder, ignore_errors=True)
    make_folders(root)
    journal = IngestJournal(root, {"upgrade": STORE_VERSION})
    objects: dict[tuple[str, str], dict[str, Any]] = {}
    frames: dict[str, dict[str, Any]] = {}
    for number in log_numbers(root, FORMAT1_FOLDER):
        table = pq.read_table(root / FORMAT1_FOLDER / f"v{number:06d}.parquet")
        document: dict[str, Any] = json.loads((table.schema.metadata or {})[VERSION_KEY])
        entries = table.drop_columns(["version", "taken_at"]).to_pylist()
        rows: list[dict[str, Any]] = []
        for entry in (e for e in entries if e["kind"] not in OBJECT_KINDS):
            what = entry["kind"]
            stored = {"file": entry["file"]}
            if what in ROW_FRAMES:
                stored = store_row_frame(root, what, pq.read_table(root / entry["file"]), number,
                                         frames.get(what), journal)  # fmt: skip
            frames[what] = {"kind": what, "version": number, "digest": entry["digest"],
                            "rows": entry["rows"], **stored}  # fmt: skip
            rows.append(frames[what])
        current = {(e["kind"], e["id"]): e for e in entries if e["kind"] in OBJECT_KINDS}
        for key, entry in current.items():
            before = objects.get(key)
            if before is None or before["digest"] != entry["digest"]:
                columns = json.loads(entry["columns"]) if entry["columns"] else None
                rows.append({**entry, "columns": columns})
        rows += [{"kind": k, "id": i, "removed": True} for k, i in objects if (k, i) not in current]
        objects = current
        document.pop("files", None)
        kinds = [kind for kind, _id in current]
        document["counts"] = {kind: kinds.count(kind) for kind in OBJECT_KINDS}
        commit(root, number, document["started_at"], rows, document)
        write_checkpoint(root, number)
    write_marker(root)  # the commit: from here on the store is of format 2
    journal.done()
    _remove_leftovers(root)


def _remove_leftovers(root: Path) -> None:
    """The files of format 1 no version of the log refers to, then ``versions/``."""
    rows = read_log(root)
    referenced = {row[name] for row in rows for name in ("file", "order") if row[name]}
    for folder in ("frames", "objects"):
        for path in (root / folder).rglob("*.parquet"):
            if path.relative_to(root).as_posix() not in referenced:
                path.unlink()
    shutil.rmtree(root / FORMAT1_FOLDER)
