"""A name of several types across a snapshot's files is JSON text in every file of its kind
(snapshot/merged.py): one schema for the engines, each table still read back exactly."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.snapshot.arrow_columns import ENCODING_KEY, arrow_to_frame, frame_to_arrow
from mddframes.snapshot.merged import json_cells

#: LAB tables overwritten (each in a file of its own: their columns differ).
TABLES = ("lab-source", "name with space", "a+b")
#: name -> (declared type, values) per table: each name has a different type in each table.
DECLARED = {
    "code": [("STRING", ["A1", None, "007"]), ("INTEGER", [7, None, -(2**63)]),
             ("DATE", ["1900-01-01", None, "2024-02-29"])],
    "at": [("TIMESTAMP", ["2024-03-05T00:25:00Z", None, "1970-01-01T00:00:00.000001+02:00"]),
           ("DOUBLE", [1.5, None, 2.0]), ("BOOLEAN", [True, None, False])],
}  # fmt: skip


def _put_mixed(client):
    for position, table_id in enumerate(TABLES):
        base = client.api.get_table(table_id)
        columns = [{"name": n, "dataType": DECLARED[n][position][0]} for n in DECLARED]
        rows = [{n: DECLARED[n][position][1][r] for n in DECLARED} for r in range(3)]
        metadata = {**base["metadata"], "columns": columns}
        client.api.put_table(table_id, {**base, "metadata": metadata, "data": rows})


def test_a_name_of_several_types_is_json_text_in_every_file_and_reads_back_exactly(
    client, emu, tmp_path
):
    _put_mixed(client)
    snap = client.snapshot("LAB", tmp_path / "lab", progress=False, structures=False)
    files = sorted((snap.path / "tables").glob("*.parquet"))
    for name in DECLARED:
        fields = [pq.read_schema(f).field(name) for f in files if name in pq.read_schema(f).names]
        assert len(fields) == len(TABLES)
        assert {(str(f.type), f.metadata[ENCODING_KEY]) for f in fields} == {("string", b"json")}
    # each table keeps the dtype read_table gives it, and its values
    for table_id in TABLES:
        pd.testing.assert_frame_equal(snap.read_table(table_id), client.read_table(table_id))
    # one dataset: each cell the JSON text of the service's value (dates in microseconds)
    db = duckdb.connect()
    got = db.execute("SELECT table_id, code, \"at\" FROM read_parquet(?, union_by_name = true) "
                     "WHERE code IS NOT NULL ORDER BY table_id, row",
                     [str(snap.path / "tables" / "*.parquet")]).fetchall()  # fmt: skip
    assert sorted(got) == sorted([
        ("lab-source", '"A1"', '"2024-03-05T00:25:00.000000Z"'),
        ("lab-source", '"007"', '"1969-12-31T22:00:00.000001Z"'),
        ("name with space", "7", "1.5"),
        ("name with space", str(-(2**63)), "2.0"),
        ("a+b", '"1900-01-01T00:00:00.000000"', "true"),
        ("a+b", '"2024-02-29T00:00:00.000000"', "false"),
    ])  # fmt: skip
    manifest = json.loads((snap.path / "manifest.json").read_text())
    assert "several types" in manifest["encodings"]["json"]


def test_a_snapshot_of_one_type_per_name_is_left_as_written(client, emu, tmp_path):
    snap = client.snapshot("LAB", tmp_path / "lab", progress=False, structures=False)
    for path in (snap.path / "tables").glob("*.parquet"):
        for field in pq.read_schema(path):
            if (field.metadata or {}).get(ENCODING_KEY) == b"json":
                assert field.metadata[b"mddframes.dtype"] == b'{"kind": "other", "name": "object"}'


_INT = st.none() | st.integers(-(2**63), 2**63 - 1)
_FLOAT = st.none() | st.floats(allow_nan=False, allow_infinity=False)
_TEXT = st.none() | st.text(max_size=4)
_BOOL = st.none() | st.booleans()
_STAMP = st.none() | st.datetimes(
    min_value=pd.Timestamp("0001-01-01").to_pydatetime(),
    max_value=pd.Timestamp("9999-12-31").to_pydatetime(),
)


def _stamps(values, tz):
    texts = ["NaT" if v is None else v.isoformat() for v in values]
    index = pd.DatetimeIndex(np.array(texts, dtype="datetime64[us]"))
    return (index if tz is None else index.tz_localize(tz)).array


@settings(max_examples=60, deadline=None)
@given(
    ints=st.lists(_INT, max_size=5),
    floats=st.lists(_FLOAT, max_size=5),
    texts=st.lists(_TEXT, max_size=5),
    bools=st.lists(_BOOL, max_size=5),
    stamps=st.lists(_STAMP, max_size=5),
)
def test_json_cells_give_back_every_dtype_exactly(ints, floats, texts, bools, stamps):
    n = min(map(len, (ints, floats, texts, bools, stamps)))
    frame = pd.DataFrame({
        "i": pd.array(ints[:n], dtype="Int64"),
        "f": pd.array(floats[:n], dtype="Float64"),
        "s": pd.array(texts[:n], dtype=pd.StringDtype("python")),
        "b": pd.array(bools[:n], dtype="boolean"),
        "d": _stamps(stamps[:n], None),
        "t": _stamps(stamps[:n], "UTC"),
    })  # fmt: skip
    table = frame_to_arrow(frame)
    for name in frame.columns:
        index = table.schema.get_field_index(name)
        field = table.schema.field(name)
        metadata = {**field.metadata, ENCODING_KEY: b"json"}
        texts_of = json_cells(table[name])
        table = table.set_column(index, pa.field(name, pa.string(), metadata=metadata), texts_of)
        for text in texts_of.to_pylist():
            assert text is None or json.loads(text) is not None
    pd.testing.assert_frame_equal(arrow_to_frame(table), frame)


def test_a_rerun_after_a_kill_past_the_rewrite_keeps_the_rewritten_files(
    client, emu, tmp_path, monkeypatch
):
    import mddframes.snapshot.writer as writer

    _put_mixed(client)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer, "write_json_atomically", killed)  # the manifest: never written
    try:
        client.snapshot("LAB", tmp_path / "lab", progress=False, structures=False)
    except KeyboardInterrupt:
        pass
    monkeypatch.undo()
    snap = client.snapshot("LAB", tmp_path / "lab", progress=False, structures=False)
    # every file the first run closed and rewrote is vouched for by its new journal line
    assert snap.manifest["resumed"] == len(snap.manifest["objects"])
    for table_id in TABLES:
        pd.testing.assert_frame_equal(snap.read_table(table_id), client.read_table(table_id))
