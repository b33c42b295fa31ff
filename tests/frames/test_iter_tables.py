"""iter_tables / iter_mappings: read_tables in chunks, equal to it once concatenated,
with few reads in flight past the chunk being filled."""

from __future__ import annotations

import pandas as pd
import pytest

from mddframes import InvalidArgumentError, NotFoundError, PartialFailureWarning
from mddframes.emulator.state import sample_dataset
from mddframes.frames.stacking import concat_union


@pytest.fixture(scope="module")
def ids():
    data = sample_dataset()
    return [t["id"] for t in data.tables], [m["id"] for m in data.mappings]


def assert_same_cells(stacked: pd.DataFrame, whole: pd.DataFrame) -> None:
    """The chunks stacked hold ``whole``'s cells; a column typed in the chunks before its
    tables disagreed (codec/dtypes.py DTYPE_RULES, the long frame's row) is ``object`` in
    ``whole`` and may differ in how it writes a missing value (NA or None)."""
    assert list(stacked.columns) == list(whole.columns)
    pd.testing.assert_index_equal(stacked.index, whole.index)
    for name in whole.columns:
        left, right = stacked[name], whole[name]
        if left.dtype == right.dtype != object:
            pd.testing.assert_series_equal(left, right)
        else:
            assert right.dtype == object, name
            missing = [bool(v) for v in left.isna()]
            assert missing == [bool(v) for v in right.isna()], name
            assert [v for v, m in zip(left, missing, strict=True) if not m] == [
                v for v, m in zip(right, missing, strict=True) if not m
            ], name


@pytest.mark.parametrize("chunksize", [1, 3, 1000])
def test_the_chunks_concatenated_are_read_tables(client, ids, chunksize):
    tables = ids[0][:14]
    whole = client.read_tables(tables, progress=False)
    chunks = list(client.iter_tables(tables, chunksize=chunksize, progress=False))
    assert len(chunks) == -(-len(tables) // chunksize)
    assert all(chunk["table_id"].nunique() <= chunksize for chunk in chunks)
    assert_same_cells(concat_union(chunks), whole)
    if all(list(chunk.columns) == list(whole.columns) for chunk in chunks):
        pd.testing.assert_frame_equal(pd.concat(chunks), whole)


def test_the_mapping_chunks_concatenated_are_read_mappings(client, ids):
    mappings = ids[1]
    whole = client.read_mappings(mappings, progress=False)
    chunks = list(client.iter_mappings(mappings, chunksize=2, progress=False))
    # pd.concat turns a string column absent from a chunk to object; the union keeps it
    assert_same_cells(concat_union(chunks), whole)


def test_a_chunk_lists_its_own_failures_and_the_warning_comes_at_the_end(client, ids):
    tables = [ids[0][0], "tbl-missing", ids[0][1], ids[0][2]]
    chunks = client.iter_tables(tables, chunksize=2, errors="skip", progress=False)
    first = next(chunks)
    assert [f["id"] for f in first.attrs["failures"]] == ["tbl-missing"]
    assert first.attrs["failures"][0]["status"] == 404
    assert first["table_id"].unique().tolist() == [ids[0][0]]
    with pytest.warns(PartialFailureWarning, match="1 of 4 failed"):
        rest = list(chunks)
    assert rest[0].attrs["failures"] == []
    assert rest[0].index[0] == len(first)


def test_errors_raise_stops_at_the_failure(client, ids):
    chunks = client.iter_tables(["tbl-missing", *ids[0][:3]], chunksize=2, progress=False)
    with pytest.raises(NotFoundError):
        list(chunks)


def test_a_bad_chunksize_is_refused_at_the_call(client, ids):
    with pytest.raises(InvalidArgumentError, match="chunksize must be a positive integer"):
        client.iter_tables(ids[0], chunksize=0)


def test_reads_do_not_run_ahead_of_the_consumer(client, ids, emu):
    # Paused after its first chunk, the generator has asked for the chunk and at most
    # workers tables past it, however many ids there are; closing it stops the reads.
    # (Before it, each table's declarations were read, up to its rows: one getTable
    # each, frames/declared_scan.py.)
    tables = ids[0]
    assert len(tables) > 10
    workers = 2
    emu.reset_counters()
    chunks = client.iter_tables(tables, chunksize=1, max_workers=workers, progress=False)
    next(chunks)
    chunks.close()
    assert len(tables) + 1 <= emu.counters().get("getTable", 0) <= len(tables) + 1 + workers


def test_many_reads_leave_no_per_call_state_behind(client, ids):
    """The deadline watchdog's queue follows the calls in flight, not the calls made:
    a finished call's guard waited there for its deadline (minutes), so iterating
    thousands of tables kept thousands of them."""
    from mddframes.http import guard

    tables = (ids[0] * 20)[:400]
    for table_id in tables:
        client.read_table(table_id)
    queued = len(guard._watchdog._heap)
    assert queued <= 2 * guard._COMPACT_FLOOR, queued
