"""Frames of both dtype backends, and polars frames, written back losslessly (issue 23).

Each example puts a generated table or mapping on the emulator, reads it under one
backend (``numpy_nullable``, ``pyarrow``, or ``polars`` via ``to_polars``), and writes it
back over loopback HTTP: unedited, nothing is sent and the dry run's payload is the very
document the service held; with one cell edited, the service then holds exactly the
payload the numpy-nullable frame with the same edit gives, which differs from the
original in that cell only.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from codec_strategies import DATETIMES, FLOATS, INT64, JSON, TEXT, payloads, table_payloads
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from mddframes import BadRequestError, IncompletePayloadError, to_polars
from mddframes.codec import diff_payloads, splitter
from mddframes.codec import fingerprint as fingerprint_module
from mddframes.codec.fingerprint import fingerprint
from mddframes.codec.frame import payload_rows
from mddframes.emulator.scale import big_table
from mddframes.frames import backends
from mddframes.writing.changes import prepare_edit
from mddframes.writing.documents import EncodedDocument

BACKENDS = ["numpy_nullable", "pyarrow", "polars"]
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))


def _ids(client) -> dict[str, str]:
    tree = client.read_tree("DWH")
    return {kind: tree[f"{kind}_id"].dropna().iloc[0] for kind in ("table", "mapping")}


def _put(client, kind: str, object_id: str, payload: dict[str, Any]) -> None:
    """Put a generated payload; one the emulator refuses (a mapping's transformation
    must be a string) is not an example."""
    try:
        (client.api.put_table if kind == "table" else client.api.put_mapping)(
            object_id, {**payload, "id": object_id}
        )
    except BadRequestError:
        reject()


def _read(client, kind: str, object_id: str, backend: str) -> Any:
    reader = client.read_table if kind == "table" else client.read_mapping
    if backend == "polars":
        return to_polars(reader(object_id, dtype_backend="pyarrow"))
    return reader(object_id, dtype_backend=backend)


def _write(client, kind: str, object_id: str, frame: Any, **options: Any) -> Any:
    writer = client.write_table if kind == "table" else client.write_mapping
    return writer(object_id, frame, **options)


def _held(client, kind: str, object_id: str) -> dict[str, Any]:
    return client.api.get_table(object_id) if kind == "table" else client.api.get_mapping(object_id)


def new_value(dtype: Any) -> st.SearchStrategy[Any]:
    """A value a user could put in a column of this numpy-nullable dtype (None: missing)."""
    name = str(dtype)
    none = st.none()
    if name == "Int64":
        return st.one_of(none, INT64)
    if name == "Float64":
        return st.one_of(none, FLOATS, st.just(-0.0))
    if name == "boolean":
        return st.one_of(none, st.booleans())
    if name == "string":
        return st.one_of(none, TEXT, st.sampled_from(["007", "", "caf\u00e9 \U0001f600"]))
    if getattr(dtype, "kind", None) == "M":
        tz = getattr(dtype, "tz", None)
        return st.one_of(
            none, DATETIMES.map(lambda t: pd.Timestamp(t, tz=tz) if tz else pd.Timestamp(t))
        )
    return st.one_of(none, JSON.filter(lambda v: v is not None))


def set_cell(frame: Any, position: int, name: str, value: Any) -> Any:
    """``frame`` with one cell set, as a user of its library would set it."""
    if isinstance(frame, pl.DataFrame):
        column = frame.get_column(name)
        values = column.to_list()
        values[position] = value.to_pydatetime() if isinstance(value, pd.Timestamp) else value
        return frame.with_columns(pl.Series(name, values, dtype=column.dtype))
    frame = frame.copy()
    column = frame[name]
    if column.dtype == object:
        values = column.to_numpy(dtype=object, copy=True)
        values[position] = value
        frame[name] = pd.Series(values, index=frame.index, dtype=object)
    else:
        array = column.array.copy()
        array[position] = pd.NA if value is None else value
        frame[name] = array
    return frame


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(kind_and_payload=payloads())
def test_an_unedited_frame_sends_the_bytes_the_service_held(
    client, emu, tmp_path, backend, kind_and_payload
):
    kind, generated = kind_and_payload
    object_id = _ids(client)[kind]
    _put(client, kind, object_id, generated)
    held = _held(client, kind, object_id)
    frame = _read(client, kind, object_id, backend)

    dry = _write(client, kind, object_id, frame, dry_run=True)
    emu.reset_counters()
    result = _write(client, kind, object_id, frame, backup_dir=tmp_path)

    assert json.dumps(dry.payload) == json.dumps(held)
    assert dry.diff.empty and result.status == "unchanged"
    assert emu.counters().get(f"{kind}Update", 0) == 0
    assert json.dumps(_held(client, kind, object_id)) == json.dumps(held)


@pytest.mark.parametrize("backend", BACKENDS)
@SETTINGS
@given(generated=table_payloads(), data=st.data())
def test_one_edited_cell_is_the_only_change_and_the_numpy_frames_payload(
    client, tmp_path, backend, generated, data
):
    kind = "table"
    object_id = _ids(client)[kind]
    _put(client, kind, object_id, generated)
    held = _held(client, kind, object_id)
    reference = _read(client, kind, object_id, "numpy_nullable")
    frame = _read(client, kind, object_id, backend)
    if not len(reference) or not len(reference.columns):
        return
    position = data.draw(st.integers(0, len(reference) - 1))
    name = data.draw(st.sampled_from(list(reference.columns)))
    value = data.draw(new_value(reference[name].dtype))

    edited = set_cell(frame, position, name, value)
    try:
        expected = _write(client, kind, object_id, set_cell(reference, position, name, value),
                          dry_run=True).payload  # fmt: skip
    except IncompletePayloadError as refused:  # e.g. type drift: refused alike, nothing sent
        with pytest.raises(IncompletePayloadError) as also:
            _write(client, kind, object_id, edited, backup_dir=tmp_path)
        pd.testing.assert_frame_equal(also.value.report.frame, refused.report.frame)
        assert json.dumps(_held(client, kind, object_id)) == json.dumps(held)
        return
    _write(client, kind, object_id, edited, backup_dir=tmp_path)

    now = _held(client, kind, object_id)
    assert json.dumps(now) == json.dumps(expected)
    changed = diff_payloads(held, now, kind=kind).changed
    assert set(zip(changed["row"], changed["column"], strict=True)) <= {(position, name)}
    for p, (before, after) in enumerate(
        zip(payload_rows(held, kind), payload_rows(now, kind), strict=True)
    ):
        if p != position:
            assert json.dumps(before) == json.dumps(after)


@pytest.fixture
def large(client):
    """A large table (a streamed read: kept bytes and fingerprint) on the emulator."""
    table_id = _ids(client)["table"]
    payload = big_table(table_id, n_rows=6_000, n_cols=12)
    payload["data"][3]["external_ref"] = 2**64 + 1  # beyond int64: an object column
    payload["data"][5]["note"] = "caf\u00e9 \U0001f600"
    client.api.put_table(table_id, payload)
    return table_id, client.api.get_table(table_id)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_large_tables_one_cell_write_under_each_backend(client, emu, large, tmp_path, backend):
    table_id, held = large
    frame = _read(client, "table", table_id, backend)
    emu.reset_counters()
    assert _write(client, "table", table_id, frame, backup_dir=tmp_path).status == "unchanged"
    assert emu.counters().get("tableUpdate", 0) == 0
    name = "name"  # a declared STRING column

    edited = set_cell(frame, 4321, name, "édité")
    # the streamed strategy: the fingerprint of the read finds the edited block
    assert isinstance(prepare_edit(client.api, "table", table_id, edited).new, EncodedDocument)

    _write(client, "table", table_id, edited, backup_dir=tmp_path)

    now = client.api.get_table(table_id)
    changed = diff_payloads(held, now, kind="table").changed
    assert list(zip(changed["row"], changed["column"], strict=True)) == [(4321, name)]
    assert now["data"][4321][name] == "édité"
    assert now["data"][3]["external_ref"] == 2**64 + 1


@pytest.mark.parametrize("backend", ["pyarrow", "polars"])
def test_an_arrow_frame_writes_again_after_a_write(client, large, tmp_path, backend):
    table_id, _held_payload = large
    frame = _read(client, "table", table_id, backend)
    name = "note"
    frame = set_cell(frame, 10, name, "first")
    _write(client, "table", table_id, frame, backup_dir=tmp_path)
    frame = set_cell(frame, 11, name, "second")

    _write(client, "table", table_id, frame, backup_dir=tmp_path)

    now = client.api.get_table(table_id)
    assert (now["data"][10][name], now["data"][11][name]) == ("first", "second")


@pytest.mark.parametrize("backend", ["pyarrow", "polars"])
def test_a_one_cell_write_of_an_arrow_frame_converts_slices_never_a_whole_column(
    client, large, tmp_path, monkeypatch, backend
):
    table_id, held = large
    frame = _read(client, "table", table_id, backend)
    default = client.read_table(table_id)
    monkeypatch.setattr(fingerprint_module, "CONVERT_SLICE_ROWS", 2 * fingerprint_module.BLOCK_ROWS)
    monkeypatch.setattr(splitter, "BATCH_BYTES", 64 << 10)  # batches of a few hundred rows
    converted: list[int] = []
    real = backends._from_chunked

    def spy(chunked: Any) -> Any:
        converted.append(len(chunked))
        return real(chunked)

    monkeypatch.setattr(backends, "_from_chunked", spy)
    frame = set_cell(frame, 4321, "name", "édité")
    default.at[4321, "name"] = "édité"
    # the streamed strategy takes the Arrow frame as it is (polars: its Arrow data), and
    # sends the bytes of the numpy-nullable frame with the same edit
    change = prepare_edit(client.api, "table", table_id, frame)
    assert isinstance(change.new, EncodedDocument)
    assert change.frame is frame or backend == "polars"
    want = prepare_edit(client.api, "table", table_id, default).new
    assert isinstance(want, EncodedDocument) and change.new.document == want.document
    assert converted and max(converted) < len(frame)
    converted.clear()

    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"

    assert converted and max(converted) < len(frame)  # the write's survey
    now = client.api.get_table(table_id)
    changed = diff_payloads(held, now, kind="table").changed
    assert list(zip(changed["row"], changed["column"], strict=True)) == [(4321, "name")]
    frame = set_cell(frame, 4322, "name", "encore")  # the new context fits: streamed again
    assert isinstance(prepare_edit(client.api, "table", table_id, frame).new, EncodedDocument)
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"
    assert client.api.get_table(table_id)["data"][4322]["name"] == "encore"


@pytest.mark.parametrize("backend", ["numpy_nullable", "pyarrow"])
def test_a_streamed_write_keeps_the_fingerprint_its_survey_took(client, large, tmp_path, backend):
    table_id, _held_payload = large
    frame = client.read_table(table_id, dtype_backend=backend)
    frame.at[17, "note"] = "surveyed"
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"

    kept = frame.attrs["mddframes"].fingerprint
    want = fingerprint(frame, convert=backends.default_slice)
    assert kept is not None and want is not None
    assert (kept.columns, kept.dtypes, kept.n_rows) == (want.columns, want.dtypes, want.n_rows)
    assert kept.first_value == want.first_value
    for name, sums in want.digests.items():
        other = kept.digests[name]
        assert (sums is None and other is None) or (
            sums is not None and other is not None and (sums == other).all()
        ), name
    if backend == "numpy_nullable":  # the default frame's own fingerprint, no conversion
        plain = fingerprint(frame)
        assert plain is not None and plain.dtypes == kept.dtypes


@pytest.mark.parametrize("backend", ["numpy_nullable", "pyarrow"])
def test_a_reads_fingerprint_points_at_the_edited_block_only(client, large, backend):
    # the read digests its columns as a write will digest the same frame: unchanged,
    # no row is a candidate (a text column digested two ways would make every row one)
    table_id, _held = large
    frame = client.read_table(table_id, dtype_backend=backend)
    taken = frame.attrs["mddframes"].fingerprint
    assert taken is not None
    unchanged = taken.candidate_rows(frame, backends.default_slice)
    # (the JSON column too: digested, its integer beyond 64 bits included)
    assert {"name", "external_ref"} <= unchanged.keys()
    assert not any(len(rows) for rows in unchanged.values())
    frame.at[4321, "name"] = "édité"
    found = taken.candidate_rows(frame, backends.default_slice)
    start = 4321 // fingerprint_module.BLOCK_ROWS * fingerprint_module.BLOCK_ROWS
    block = list(range(start, start + fingerprint_module.BLOCK_ROWS))
    assert {name: rows.tolist() for name, rows in found.items() if len(rows)} == {"name": block}


def test_an_arrow_array_a_user_made_is_hashed_on_every_write(client, large, tmp_path):
    # pyarrow wraps a numpy array without copying it: the user may change it in place,
    # so a column given such an array is never taken as unchanged by identity
    table_id, _held = large
    frame = client.read_table(table_id, dtype_backend="pyarrow")
    values = frame["quantity"].fillna(0).to_numpy(dtype="int64").copy()
    values[3] += 1
    frame["quantity"] = pd.arrays.ArrowExtensionArray(pa.array(values))  # no copy
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"
    values[9] += 1  # the same array, changed in place
    assert frame.at[9, "quantity"] == values[9]
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"
    assert client.api.get_table(table_id)["data"][9]["quantity"] == values[9]


def test_a_pickled_arrow_frames_edit_is_written(client, large, tmp_path):
    import pickle

    table_id, _held = large
    frame = pickle.loads(pickle.dumps(client.read_table(table_id, dtype_backend="pyarrow")))
    frame.at[10, "name"] = "unpickled"
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"
    assert client.api.get_table(table_id)["data"][10]["name"] == "unpickled"
