"""The log of a history store: each version's file lists only what that version changed.

Format 2 of a store (:mod:`mddframes.snapshot.history_store` writes it)::

    HIST/log/v000001.parquet             what version 1 changed (the commit point)
    HIST/checkpoints/c000050.parquet     every table and mapping as of version 50
    HIST/frames/tree/<sha256>.parquet    the tree's rows a version added or changed,
                                         and a tombstone row for each it removed
    HIST/frames/structures/<sha256>...   the structures likewise (when taken)
    HIST/frames/order/<sha256>.parquet   a row-stored frame's row order (``_key``,
                                         ``_position``)
    HIST/frames/object_types|packages/   stored whole, once per distinct content

A log file's rows (:data:`LOG_SCHEMA`):

- a table or mapping the version added or changed: its ``digest``, ``rows`` and where
  its rows are stored (``file``, ``row_group``, ``offset``); one it removed: a
  tombstone (``removed`` true). An object *as of version N* is its latest row with
  ``version <= N``, unless that row is a tombstone;
- each frame of the version, every version (``kind`` = tree, structures, object_types,
  packages; ``id`` null): its ``digest`` and ``rows``; ``file`` its stored file (whole
  frames) or the version's rows of it (row-stored frames: null when no row changed);
  for row-stored frames ``base`` (the version whose rows list the frame whole: the
  first, and any whose columns changed) and ``order``.

A checkpoint (every :data:`CHECKPOINT_EVERY` versions, written after the version's commit)
holds the latest log row of every table and mapping present then: a reader of version N
reads the latest checkpoint at or before N and the log files after it. Engines need not
read checkpoints: the log alone says everything.

A row-stored frame's file has the frame's columns after three of its own: ``_version``,
``_key`` (the row's key: its ``id``, made unique) and ``_removed``. The frame as of N is
the latest row per ``_key`` with ``_version <= N`` that is not removed, in the order
``order`` lists.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from mddframes.snapshot.arrow_columns import arrow_to_frame
from mddframes.snapshot.reader import Snapshot

#: The log's folder.
LOG_FOLDER = "log"
#: The folder of checkpoints: every object as of a version, so that reading a version
#: reads one checkpoint and the log files after it, not the whole log.
CHECKPOINT_FOLDER = "checkpoints"
#: Versions between two checkpoints (a year of daily versions: 7 checkpoints).
CHECKPOINT_EVERY = 50
#: The frames stored by row, and the column their rows are keyed by.
ROW_FRAMES = {"tree": "id", "structures": "id"}
#: The folder of the row-stored frames' order files.
ORDER_FOLDER = "frames/order"
#: The columns a row-stored frame's file leads with.
VERSION_COLUMN, KEY_COLUMN, REMOVED_COLUMN = "_version", "_key", "_removed"
HELPER_COLUMNS = [VERSION_COLUMN, KEY_COLUMN, REMOVED_COLUMN]
#: An order file's columns: each row's key, and its position (0, 1, ...).
POSITION_COLUMN = "_position"
#: The key-value metadata key of a log file: the snapshot's manifest, objects left out.
VERSION_KEY = b"mddframes.version"
#: The columns of a log file, in order.
LOG_SCHEMA = pa.schema([
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
    ("removed", pa.bool_()),
    ("base", pa.int64()),
    ("order", pa.string()),
])  # fmt: skip
#: The kinds of object a log lists by id.
OBJECT_KINDS = ("table", "mapping")


def log_file(number: int) -> str:
    """The path, relative to the store, of version ``number``'s log file.

    Parameters
    ----------
    number : int
        The version (1, 2, ...).

    Returns
    -------
    str
        ``"log/v000001.parquet"``.

    Examples
    --------
    >>> log_file(12)
    'log/v000012.parquet'
    """
    return f"{LOG_FOLDER}/v{number:06d}.parquet"


def checkpoint_file(number: int) -> str:
    """The path, relative to the store, of the checkpoint of version ``number``."""
    return f"{CHECKPOINT_FOLDER}/c{number:06d}.parquet"


def log_numbers(root: Path, folder_name: str = LOG_FOLDER, prefix: str = "v") -> list[int]:
    """The committed versions of the store at ``root``, in order (``folder_name``: where
    its version files are: format 1 had them in ``versions``; checkpoints are ``c``)."""
    folder = root / folder_name
    if not folder.is_dir():
        return []
    names = (p.name for p in folder.iterdir())
    return sorted(int(n[1:7]) for n in names if n.startswith(prefix) and n.endswith(".parquet"))


def read_log(
    root: Path,
    until: int | None = None,
    *,
    kinds: tuple[str, ...] | None = None,
    object_id: str | None = None,
    since: int = 1,
) -> list[dict[str, Any]]:
    """The log rows of versions ``since..until``, in version order (``columns`` parsed).

    ``kinds`` and ``object_id`` filter the read (pushed down to the files' statistics):
    the rows of one object are the versions that touched it.
    """
    numbers = [n for n in log_numbers(root) if since <= n and (until is None or n <= until)]
    if not numbers:
        return []
    dataset = ds.dataset([str(root / log_file(n)) for n in numbers], schema=LOG_SCHEMA,
                         format="parquet")  # fmt: skip
    condition: Any = None
    if kinds is not None:
        condition = pc.field("kind").isin(list(kinds))
    if object_id is not None:
        by_id = pc.field("id") == object_id
        condition = by_id if condition is None else condition & by_id
    table = dataset.to_table(filter=condition)
    rows: list[dict[str, Any]] = table.to_pylist()
    rows.sort(key=lambda row: row["version"])  # stable: a version's rows keep their order
    return [_parsed(row) for row in rows]


def fold_objects(
    state: dict[tuple[str, str], dict[str, Any]], rows: list[dict[str, Any]]
) -> dict[tuple[str, str], dict[str, Any]]:
    """``state`` (tables and mappings by (kind, id)) after the log rows ``rows``."""
    for row in rows:
        if row["kind"] not in OBJECT_KINDS:
            continue
        key = (row["kind"], row["id"])
        if row["removed"]:
            state.pop(key, None)
        else:
            state[key] = row
    return state


def objects_as_of(root: Path, number: int) -> dict[tuple[str, str], dict[str, Any]]:
    """The tables and mappings of version ``number`` by (kind, id): the latest checkpoint
    at or before it, then the log after it."""
    checkpoints = [c for c in log_numbers(root, CHECKPOINT_FOLDER, "c") if c <= number]
    state: dict[tuple[str, str], dict[str, Any]] = {}
    if checkpoints:
        rows = pq.read_table(root / checkpoint_file(checkpoints[-1])).to_pylist()
        fold_objects(state, [_parsed(row) for row in rows])
    since = checkpoints[-1] + 1 if checkpoints else 1
    return fold_objects(state, read_log(root, number, kinds=OBJECT_KINDS, since=since))


def log_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Log rows (``columns`` a list) as an Arrow table of :data:`LOG_SCHEMA`."""
    columns: dict[str, list[Any]] = {name: [] for name in LOG_SCHEMA.names}
    for row in rows:
        for name in LOG_SCHEMA.names:
            value = row.get(name)
            if name == "columns" and value is not None:
                value = json.dumps(value)
            columns[name].append(bool(value) if name == "removed" else value)
    return pa.Table.from_pydict(columns, schema=LOG_SCHEMA)


def _parsed(row: dict[str, Any]) -> dict[str, Any]:
    row["columns"] = json.loads(row["columns"]) if row["columns"] else None
    return row


def version_document(root: Path, number: int) -> dict[str, Any]:
    """One version's manifest as its log file keeps it: without objects and files."""
    metadata = pq.read_schema(root / log_file(number)).metadata or {}
    document: dict[str, Any] = json.loads(metadata[VERSION_KEY])
    return document


def manifest_as_of(root: Path, number: int) -> dict[str, Any]:
    """The manifest of version ``number`` as a snapshot's (files relative to the store)."""
    rows = read_log(root, number, since=number)
    objects = objects_as_of(root, number)
    manifest = version_document(root, number)
    manifest["history_version"] = number
    manifest["objects"] = [
        {k: e[k] for k in ("kind", "id", "digest", "rows", "row_column", "columns", "file",
                           "row_group", "offset")}
        for e in objects.values()
    ]  # fmt: skip
    manifest["files"] = {
        row["kind"]: {k: row[k] for k in ("file", "rows", "digest", "base", "order")}
        for row in rows
        if row["kind"] not in OBJECT_KINDS
    }
    return manifest


def read_row_frame(root: Path, what: str, number: int, entry: dict[str, Any]) -> pa.Table:
    """A row-stored frame as of version ``number`` (``entry``: that version's log row of
    it), as the snapshot's file held it."""
    files = [
        row["file"]
        for row in read_log(root, number, kinds=(what,), since=entry["base"])
        if row["file"] is not None
    ]
    data = pa.concat_tables([pq.read_table(root / relative) for relative in files])
    latest = _latest_rows(data)
    order = pq.read_table(root / entry["order"]).column(KEY_COLUMN)
    positions = pc.index_in(order, value_set=latest.column(KEY_COLUMN))
    frame = latest.take(positions).drop_columns(HELPER_COLUMNS)
    return frame.replace_schema_metadata(data.schema.metadata)


def _latest_rows(data: pa.Table) -> pa.Table:
    """Each key's last row (rows are in version order), tombstones left out."""
    numbered = data.append_column("_at", pa.array(range(data.num_rows), pa.int64()))
    last = numbered.group_by(KEY_COLUMN).aggregate([("_at", "max")]).column("_at_max")
    latest = data.take(last)
    return latest.filter(pc.invert(latest.column(REMOVED_COLUMN)))


def row_keys(table: pa.Table, what: str) -> list[str]:
    """Each row's key: its id (``ROW_FRAMES``), a repeated one made unique by its count."""
    column = ROW_FRAMES[what]
    values = (
        table.column(column).to_pylist()
        if column in table.column_names
        else [None] * table.num_rows
    )
    seen: dict[str, int] = {}
    keys = []
    for value in values:
        text = "\x00" if value is None else str(value)
        count = seen.get(text, 0)
        seen[text] = count + 1
        keys.append(text if count == 0 else f"{text}\x00{count}")
    return keys


class HistorySnapshot(Snapshot):
    """One version of a history store as a :class:`~mddframes.snapshot.reader.Snapshot`:
    its tree and structures rebuilt from the rows the versions stored."""

    def _row_frame(self, what: str) -> pa.Table | None:
        entry = self.manifest["files"].get(what)
        if entry is None or entry.get("base") is None:
            return None
        number = int(self.manifest["history_version"])
        return read_row_frame(self.path, what, number, entry)

    def _frame(self, what: str) -> Any:
        table = self._row_frame(what)
        return super()._frame(what) if table is None else arrow_to_frame(table)

    def iter_structures(self) -> Iterator[tuple[str, Any]]:
        """Each element's id and record, as :meth:`Snapshot.iter_structures`."""
        table = self._row_frame("structures")
        if table is None:
            yield from super().iter_structures()
            return
        from mddframes.codec import depth

        ids, records = table.column("id").to_pylist(), table.column("record").to_pylist()
        for element_id, record in zip(ids, records, strict=True):
            yield element_id, depth.loads(record, what=f"element {element_id!r}")
