"""The read-context registry: an explicit attribute of the Api, bounded, and never the
reason a frame that is still held cannot be written."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes import IncompletePayloadError, WriteRefusedError
from mddframes.context import RECENT_CONTEXTS, ContextRegistry, ReadContext


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
    with pytest.raises(WriteRefusedError) as caught:
        client.write_table(table_ids[0], bare, backup_dir=tmp_path)
    # it was read through this client: the message says what was let go, and why
    message = str(caught.value)
    assert "was not read through this client" not in message
    assert "holds no read of it any more" in message and "frame.attrs" in message
    assert "force=True" in message


def test_an_object_never_read_is_said_to_be_so(client, table_ids, tmp_path):
    for table_id in table_ids[1 : RECENT_CONTEXTS + 2]:
        client.read_table(table_id)  # past the bound: the registry has let reads go
    gc.collect()
    frame = client.read_table(table_ids[1])
    with pytest.raises(WriteRefusedError, match="was not read through this client"):
        client.write_table(table_ids[0], _bare(frame), backup_dir=tmp_path)


def _bare(frame):
    frame = frame.copy()
    frame.attrs = {}
    return frame


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


# -- what the registry remembers of the objects it let go (no emulator) -----------------

keys = st.lists(
    st.tuples(st.sampled_from(["table", "mapping"]), st.text(min_size=1, max_size=40)),
    max_size=60,
    unique=True,
)


@settings(max_examples=50)
@given(keys, keys)
def test_the_registry_never_says_a_recorded_object_was_not_read(recorded, others):
    registry = ContextRegistry(recent=2)  # the others let go (nothing else holds them)
    for kind, object_id in recorded:
        registry.record(ReadContext(kind, object_id, {"data": []}))
    assert len(registry) == min(len(recorded), 2)
    assert all(registry.may_have_read(kind, object_id) for kind, object_id in recorded)
    fresh = ContextRegistry()
    assert not any(fresh.may_have_read(kind, object_id) for kind, object_id in others)


def test_the_registry_rarely_says_an_object_never_recorded_may_have_been_read():
    registry = ContextRegistry()
    for number in range(5_000):
        registry.record(ReadContext("table", f"t-{number}", {"data": []}))
    gc.collect()
    assert len(registry) == RECENT_CONTEXTS
    false = sum(registry.may_have_read("table", f"other-{n}") for n in range(20_000))
    assert false <= 2  # about 0.04 expected at 5,000 recorded
