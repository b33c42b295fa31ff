"""The ingest journal of a history store: what an add (or an upgrade) is making, then each
file about to be made, so that an interrupted one is undone by the next
(:mod:`mddframes.snapshot.history_store`).

Its own module: the row store (:mod:`~mddframes.snapshot.history_rows`) writes through
it, and the store calls the row store.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mddframes.disk_modes import PRIVATE_FILE_MODE
from mddframes.snapshot.bundles import file_sha256

#: The store's folder of the add in progress (its snapshot and its journal).
STAGING = ".staging"
#: The journal's file name in :data:`STAGING`.
INGEST_JOURNAL = "ingest.jsonl"


class IngestJournal:
    """``.staging/ingest.jsonl``: what is being made (a version, an upgrade), then each
    file about to be made."""

    def __init__(self, store: Path, header: dict[str, Any]) -> None:
        self.store = store
        self.path = store / STAGING / INGEST_JOURNAL
        self._append(header)

    def _append(self, line: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def place(self, temporary: Path, folder: str) -> str:
        """Move a finished temporary file to its content name under ``folder``; the name."""
        seal(temporary)
        relative = f"{folder}/{file_sha256(temporary)}.parquet"
        target = self.store / relative
        if target.exists():  # the same bytes are stored already
            temporary.unlink()
            return relative
        self._append({"file": relative})
        os.replace(temporary, target)
        return relative

    def write(self, table: pa.Table, folder: str, **options: Any) -> str:
        """Write ``table`` to a new content-named file under ``folder``; its name."""
        temporary = self.store / STAGING / "written.parquet.tmp"
        temporary.unlink(missing_ok=True)
        pq.write_table(table, temporary, **options)
        return self.place(temporary, folder)

    def done(self) -> None:
        """The work is committed: nothing of it to undo."""
        self.path.unlink()


def seal(path: Path) -> None:
    """Owner-only and on disk."""
    os.chmod(path, PRIVATE_FILE_MODE)
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
