"""The tree and structures of a history store's version: only the rows that changed.

A table write bumps its element's ``version`` in the tree, so a whole tree a version
would store the tree again every day. Instead each version stores the rows added or
changed since the version before (keyed by element id) and a tombstone row for each
removed, and the row order once per distinct order: a day of ten table edits costs ten
rows. A version whose frame's columns (names, types, dtypes) changed lists the frame
whole (its ``base``), with tombstones for the rows gone, so rows of one schema are
never joined to another's. The files' layout is in :mod:`mddframes.snapshot.history_log`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from mddframes.codec.values import strict_equal
from mddframes.snapshot.history_log import (
    KEY_COLUMN,
    ORDER_FOLDER,
    POSITION_COLUMN,
    REMOVED_COLUMN,
    VERSION_COLUMN,
    read_row_frame,
    row_keys,
)

if TYPE_CHECKING:
    from mddframes.snapshot.history_journal import IngestJournal


def store_row_frame(
    store: Path,
    what: str,
    current: pa.Table,
    number: int,
    previous: dict[str, Any] | None,
    journal: IngestJournal,
) -> dict[str, Any]:
    """Store what version ``number`` changed of a row-stored frame (``current``: the frame
    as the snapshot holds it; ``previous``: the latest version's log row of it).

    Returns
    -------
    dict
        The log row's ``file`` (None when no row changed), ``base`` and ``order``.
    """
    keys = row_keys(current, what)
    old: pa.Table | None = None
    if previous is not None and previous.get("base") is not None:
        old = read_row_frame(store, what, int(previous["version"]), previous)
    if old is None or not old.schema.equals(current.schema, check_metadata=True):
        base = number  # listed whole
        changed = list(range(current.num_rows))
        gone = [] if old is None else sorted(set(row_keys(old, what)) - set(keys))
    else:
        base = int(previous["base"])  # type: ignore[index] # old is read only with previous
        changed, gone = _changed_rows(old, row_keys(old, what), current, keys)
    order = pa.table({KEY_COLUMN: pa.array(keys, pa.string()),
                      POSITION_COLUMN: pa.array(range(len(keys)), pa.int64())})  # fmt: skip
    # positions 0, 1, ... delta-encoded: next to nothing on disk
    written = journal.write(order, ORDER_FOLDER, use_dictionary=[KEY_COLUMN],
                            column_encoding={POSITION_COLUMN: "DELTA_BINARY_PACKED"})  # fmt: skip
    stored: dict[str, Any] = {"base": base, "order": written}
    stored["file"] = None
    if changed or gone or base == number:
        rows = _with_helpers(current.take(pa.array(changed, pa.int64())),
                             [keys[i] for i in changed], number, removed=False)  # fmt: skip
        tombstones = _with_helpers(_nulls(current.schema, len(gone)), gone, number, removed=True)
        delta = pa.concat_tables([rows, tombstones])
        stored["file"] = journal.write(delta, f"frames/{what}")
    return stored


def _changed_rows(
    old: pa.Table, old_keys: list[str], current: pa.Table, keys: list[str]
) -> tuple[list[int], list[str]]:
    """The positions in ``current`` of rows added or changed since ``old``, and the keys
    of ``old``'s rows gone."""
    where = {key: position for position, key in enumerate(old_keys)}
    both = [(i, where[key]) for i, key in enumerate(keys) if key in where]
    added = [i for i, key in enumerate(keys) if key not in where]
    new_side = current.take(pa.array([i for i, _ in both], pa.int64()))
    old_side = old.take(pa.array([j for _, j in both], pa.int64()))
    differs = np.zeros(len(both), dtype=bool)
    for name in current.column_names:
        a, b = new_side.column(name), old_side.column(name)
        if a.equals(b):
            continue  # the usual case: a whole column alike, compared at C speed
        differs |= np.fromiter(
            (not strict_equal(x, y) for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)),
            dtype=bool,
            count=len(both),
        )
    changed = sorted(added + [both[k][0] for k in np.flatnonzero(differs)])
    current_keys = set(keys)
    return changed, [key for key in old_keys if key not in current_keys]


def _nulls(schema: pa.Schema, count: int) -> pa.Table:
    return pa.Table.from_arrays([pa.nulls(count, field.type) for field in schema], schema=schema)


def _with_helpers(table: pa.Table, keys: list[str], number: int, *, removed: bool) -> pa.Table:
    """``table`` led by the row-stored frames' own columns."""
    count = table.num_rows
    helpers = [(VERSION_COLUMN, pa.array([number] * count, pa.int64())),
               (KEY_COLUMN, pa.array(keys, pa.string())),
               (REMOVED_COLUMN, pa.array([removed] * count, pa.bool_()))]  # fmt: skip
    for position, (name, values) in enumerate(helpers):
        table = table.add_column(position, name, values)
    return table
