"""The tables' and mappings' files of a snapshot: objects of the same columns share a file.

A system holds thousands of small tables; one Parquet file each made the snapshot spend
more time opening, encoding and closing files than reading (7,500 files for the
100,000-element scale system: about a third of its time). Here the objects whose Arrow
schemas are equal (same column names, types and recorded pandas dtypes, in the same
order) go into one file, ``tables/part-00000.parquet``..., the objects of one chunk
read together in one row group, so a file stays a valid Parquet file of one schema that DuckDB, polars and Spark read
(alone or as a dataset, ``union_by_name`` across files), and the manifest maps each id
to its file, row group and first row in it (``offset``). A file is closed after :data:`OBJECTS_PER_FILE` objects or
:data:`BYTES_PER_FILE` bytes, and at most :data:`OPEN_FILES` files are open at once (one
per schema being filled: the least recently used is closed first). Each object's
payload without its rows (its envelope) goes into its file's key-value metadata
(``mddframes.envelopes``: a JSON object, id -> envelope).

Every file closed is recorded, with its SHA-256, in ``journal.jsonl`` (see
:class:`Journal`): a snapshot interrupted and run again keeps the files the journal
vouches for and reads only the objects not in them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from mddframes.codec.values import json_text
from mddframes.snapshot.layout import ID_COLUMNS, OBJECT_FOLDERS

#: Objects per file, and the Arrow bytes of their row groups, before the next file.
OBJECTS_PER_FILE = 100
BYTES_PER_FILE = 64 * 1024 * 1024
#: Files being filled at once (one per distinct schema); more closes the oldest used.
OPEN_FILES = 32
#: The key-value metadata key of a file's envelopes (id -> the payload without rows).
ENVELOPES_KEY = b"mddframes.envelopes"
#: The journal of the files closed so far, in the partial folder.
JOURNAL = "journal.jsonl"

_PART = re.compile(r"part-(\d+)\.parquet")


def part_file(kind: str, number: int) -> str:
    """The path, relative to the snapshot folder, of one file of tables or mappings.

    Parameters
    ----------
    kind : {"table", "mapping"}
        What the file holds.
    number : int
        Its number in the snapshot (unique across kinds).

    Returns
    -------
    str
        ``"tables/part-00000.parquet"`` or ``"mappings/part-00001.parquet"``.

    Examples
    --------
    >>> part_file("table", 7)
    'tables/part-00007.parquet'
    """
    return f"{OBJECT_FOLDERS[kind]}/part-{number:05d}.parquet"


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, hex (read into one reused buffer)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class Journal:
    """``journal.jsonl``: the header of a snapshot, then one line per file closed.

    A line is ``{"file", "sha256", "bytes", "objects": [manifest entries]}``, appended
    once the file is closed. A snapshot killed mid-way leaves its journal in the
    partial folder; :meth:`reusable` reads it back, keeps the files whose size and
    SHA-256 still match (a torn last line or a file changed since is ignored) and
    rewrites the journal with only those.

    Parameters
    ----------
    folder : pathlib.Path
        The partial folder.
    header : dict
        What must match for a rerun to reuse the files (service, tenant, system, format).
    """

    def __init__(self, folder: Path, header: dict[str, Any]) -> None:
        self.folder = folder
        self.header = header
        self.path = folder / JOURNAL

    def start(self, kept: list[dict[str, Any]]) -> None:
        """Write the journal afresh: the header, then the lines of the files kept."""
        temporary = self.path.with_name(JOURNAL + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            for line in [{"header": self.header}, *kept]:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        os.replace(temporary, self.path)

    def record(self, relative: str, entries: list[dict[str, Any]]) -> None:
        """Append the line of a file just closed (flushed: a kill keeps it)."""
        path = self.folder / relative
        line = {"file": relative, "sha256": file_sha256(path), "bytes": path.stat().st_size,
                "objects": entries}  # fmt: skip
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")

    def reusable(self) -> list[dict[str, Any]]:
        """The lines of the files a rerun keeps: same header, size and SHA-256 verified.

        Returns
        -------
        list of dict
            The journal lines, in order; empty when there is no journal or another
            snapshot's (a different header).
        """
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        kept: list[dict[str, Any]] = []
        for number, text in enumerate(lines):
            try:
                line = json.loads(text)
            except ValueError:  # the line a kill tore: its file is written again
                break
            if number == 0:
                if line != {"header": self.header}:
                    return []
                continue
            path = self.folder / line["file"]
            if (
                path.is_file()
                and path.stat().st_size == line["bytes"]
                and file_sha256(path) == line["sha256"]
            ):
                kept.append(line)
        return kept


def next_part_number(files: list[str]) -> int:
    """The first part number after those of ``files`` (relative paths)."""
    numbers = [int(m.group(1)) for f in files if (m := _PART.search(f))]
    return max(numbers, default=-1) + 1


@dataclass
class _OpenFile:
    relative: str
    writer: pq.ParquetWriter
    entries: list[dict[str, Any]] = field(default_factory=list)
    # each envelope as its JSON text: parsed, hundreds of them held per open file
    # weighed several times their text
    envelopes: list[str] = field(default_factory=list)
    groups: int = 0
    size: int = 0


class BundleWriter:
    """Objects' Arrow tables into shared files, a row group per chunk and schema.

    Not thread safe: one thread calls :meth:`add` and :meth:`close`.

    Parameters
    ----------
    folder : pathlib.Path
        The partial folder.
    kind : {"table", "mapping"}
        What is written.
    journal : Journal
        Where each file closed is recorded.
    first_number : int
        The number of the first file (numbers go on across kinds and reruns).
    """

    def __init__(self, folder: Path, kind: str, journal: Journal, first_number: int) -> None:
        self.folder = folder
        self.kind = kind
        self.journal = journal
        self.next_number = first_number
        self._open: OrderedDict[bytes, _OpenFile] = OrderedDict()

    def add(
        self, batch: list[tuple[pa.Table, list[tuple[dict[str, Any], dict[str, Any]]]]]
    ) -> None:
        """Write a chunk's objects: those of one schema together, as one row group.

        Fills each entry's ``"file"``, ``"row_group"`` and ``"offset"`` (its first row
        in the row group). One row group per object cost more than the rows of a small
        table (pyarrow's per-call work and each row group's footer entry): a row group
        per chunk and schema keeps the files few and their footers small.

        Parameters
        ----------
        batch : list of (pyarrow.Table, list of (dict, dict))
            Tables of objects' rows one after the other (id and position columns
            first), each with its objects' payloads without the rows and manifest
            entries (``"id"`` and ``"rows"`` set), in the order of their rows.
        """
        groups: dict[bytes, list[tuple[pa.Table, list[tuple[dict[str, Any], dict[str, Any]]]]]] = {}
        for item in batch:
            # the schema's own metadata (the index) differs between tables: not in the key
            key = item[0].schema.remove_metadata().serialize().to_pybytes()
            groups.setdefault(key, []).append(item)
        for key, items in groups.items():
            self._add_group(key, items)

    def _add_group(
        self, key: bytes, items: list[tuple[pa.Table, list[tuple[dict[str, Any], dict[str, Any]]]]]
    ) -> None:
        target = self._open.get(key)
        if target is None:
            relative = part_file(self.kind, self.next_number)
            self.next_number += 1
            # statistics for the id column only (an engine skips row groups by id): each
            # column's would be kept for every row group in the footer, held in memory
            # until the file is closed, and most are of no use in a file of many objects
            parquet = pq.ParquetWriter(self.folder / relative, items[0][0].schema,
                                       write_statistics=[ID_COLUMNS[self.kind]])  # fmt: skip
            target = _OpenFile(relative, parquet)
            self._open[key] = target
        self._open.move_to_end(key)
        tables = [table for table, _ in items]
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        offset = 0
        for envelope, entry in (o for _, objects in items for o in objects):
            entry["file"], entry["row_group"], entry["offset"] = (
                target.relative,
                target.groups,
                offset,
            )
            offset += entry["rows"]
            target.entries.append(entry)
            target.envelopes.append(f"{json_text(entry['id'])}:{json_text(envelope)}")
        target.writer.write_table(table, row_group_size=max(table.num_rows, 1))
        target.groups += 1
        target.size += table.nbytes
        if len(target.entries) >= OBJECTS_PER_FILE or target.size >= BYTES_PER_FILE:
            self._close(key)
        while len(self._open) > OPEN_FILES:
            self._close(next(iter(self._open)))

    def close(self) -> None:
        """Close every file still open (each recorded in the journal)."""
        while self._open:
            self._close(next(iter(self._open)))

    def _close(self, key: bytes) -> None:
        target = self._open.pop(key)
        envelopes = ("{" + ",".join(target.envelopes) + "}").encode()
        target.writer.add_key_value_metadata({ENVELOPES_KEY: envelopes})
        target.writer.close()
        self.journal.record(target.relative, target.entries)
