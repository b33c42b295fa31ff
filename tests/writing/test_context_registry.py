"""The read-context registry: an explicit attribute of the Api, bounded, and never the
reason a frame that is still held cannot be written."""

from __future__ import annotations

import gc

import pytest

from mddframes import IncompletePayloadError, WriteRefusedError
from mddframes.context import RECENT_CONTEXTS, ContextRegistry


@pytest.fixture
def table_ids(client):
    ids = client.read_tree("DWH")["table_id"].dropna().tolist()
    assert len(ids) > RECENT_CONTEXTS + 10
    return ids


def test_the_registry_is_the_apis_own_attribute(client):
    assert isinstance(client.api.read_contexts, ContextRegistry)
    assert client.contexts is client.api.read_contexts


def test_reads_whose_frames_are_dropped_leave_only_the_latest_contexts(client, table_ids):
    for table_id in table_ids[: RECENT_CONTEXTS + 10]:
        client.read_table(table_id)  # the frame is dropped at once
    gc.collect()
    assert len(client.api.read_contexts) == RECENT_CONTEXTS
    assert client.api.read_contexts.get("table", table_ids[0]) is None
    assert client.api.read_contexts.get("table", table_ids[RECENT_CONTEXTS + 9]) is not None


def test_a_frame_kept_past_the_bound_still_writes_back(client, table_ids, tmp_path):
    kept = client.read_table(table_ids[0])
    for table_id in table_ids[1 : RECENT_CONTEXTS + 10]:
        client.read_table(table_id)
    gc.collect()
    column = next(c for c in kept.columns if str(kept[c].dtype) == "string")
    kept.at[0, column] = "still mine"
    # even through a copy without attrs: the registry finds it while the frame lives
    bare = kept.copy()
    bare.attrs = {}
    result = client.write_table(table_ids[0], bare, backup_dir=tmp_path)
    assert result.status == "written"
    assert client.api.get_table(table_ids[0])["data"][0][column] == "still mine"


def test_a_frame_let_go_cannot_be_written_without_force(client, table_ids, tmp_path):
    frame = client.read_table(table_ids[0])
    bare = frame.copy()
    bare.attrs = {}
    del frame
    for table_id in table_ids[1 : RECENT_CONTEXTS + 2]:
        client.read_table(table_id)
    gc.collect()
    with pytest.raises(WriteRefusedError, match="was not read through this client"):
        client.write_table(table_ids[0], bare, backup_dir=tmp_path)


def test_a_long_frame_of_many_tables_holds_all_their_contexts(client, table_ids, tmp_path):
    ids = table_ids[: RECENT_CONTEXTS + 20]
    long = client.read_tables(ids, progress=False)
    gc.collect()
    # every table of the long frame can be written back, the first ones read included
    first = long["table_id"] == ids[0]
    column = next(
        c for c in long.columns
        if c != "table_id" and str(long[c].dtype) == "string" and long.loc[first, c].notna().all()
    )  # fmt: skip
    long.loc[long.index[first][0], column] = "bulk"
    try:
        results = client.write_tables(long, backup_dir=tmp_path, progress=False)
    except IncompletePayloadError as refused:  # pragma: no cover - the sample is complete
        pytest.fail(str(refused))
    assert results.attrs["results"][ids[0]].status == "written"
