"""Snapshots of the sample systems: the frames back exactly, the files as engines read them,
failures listed, what changed since."""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from mddframes import InvalidArgumentError, NotFoundError, diff_snapshots, read_snapshot
from mddframes.cli import EXIT_PARTIAL_FAILURE, main
from mddframes.codec.values import canonical_json, digest
from mddframes.snapshot.layout import partial_folder

SYSTEMS = ("DWH", "LAB")


@pytest.fixture(scope="module")
def taken(emulator, tmp_path_factory):
    """Each sample system snapshotted once, with what the service held at that time."""
    from mddframes import Client

    emulator.reset()
    folder = tmp_path_factory.mktemp("snapshots")
    out = {}
    with Client.from_emulator(emulator) as client:
        for system in SYSTEMS:
            snap = client.snapshot(system, folder / system, progress=False)
            tree = client.read_tree(system)
            tables = {i: client.read_table(i) for i in tree["table_id"].dropna().unique()}
            mappings = {i: client.read_mapping(i) for i in tree["mapping_id"].dropna().unique()}
            out[system] = (snap, tree, tables, mappings)
    return out


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_frames_come_back_as_the_readers_returned_them(client, taken, system):
    snap, tree, _tables, _mappings = taken[system]
    assert snap.failures.empty
    pd.testing.assert_frame_equal(snap.read_tree(), tree)
    pd.testing.assert_frame_equal(
        snap.read_structures(), client.read_structures(tree["id"], progress=False)
    )
    pd.testing.assert_frame_equal(snap.read_object_types(), client.read_object_types())
    pd.testing.assert_frame_equal(snap.read_packages(), client.read_packages(system))
    table_ids, mapping_ids = (
        tree["table_id"].dropna().unique(),
        tree["mapping_id"].dropna().unique(),
    )
    assert sorted(snap.objects.query("kind == 'table'")["id"]) == sorted(table_ids)
    assert sorted(snap.objects.query("kind == 'mapping'")["id"]) == sorted(mapping_ids)
    for table_id in table_ids:
        pd.testing.assert_frame_equal(snap.read_table(table_id), client.read_table(table_id))
    for mapping_id in mapping_ids:
        pd.testing.assert_frame_equal(
            snap.read_mapping(mapping_id), client.read_mapping(mapping_id)
        )


def test_the_manifest_says_what_was_taken(client, taken):
    snap, tree, _tables, _mappings = taken["DWH"]
    manifest = json.loads((snap.path / "manifest.json").read_text())
    assert manifest["system"] == "DWH" and manifest["service"] == client.base_url
    assert manifest["files"]["tree"] == {"file": "tree.parquet", "rows": len(tree),
                                         "digest": manifest["files"]["tree"]["digest"]}  # fmt: skip
    entry = next(o for o in manifest["objects"] if o["id"] == "tbl-0001")
    client.read_table("tbl-0001")
    context = client.contexts.get("table", "tbl-0001")
    # the read's digest is taken the fast way: the same as canonical_json's SHA-256
    assert entry["digest"] == context.digest == digest(client.api.get_table("tbl-0001"))
    assert entry["rows"] == len(client.read_table("tbl-0001"))
    assert entry["file"].startswith("tables/part-") and isinstance(entry["row_group"], int)
    assert not partial_folder(snap.path).exists()


@pytest.mark.parametrize("system", SYSTEMS)
def test_duckdb_reads_every_table_and_mapping_as_the_service_holds_it(taken, system):
    snap, tree, tables, mappings = taken[system]
    db = duckdb.connect()
    assert db.execute(f"SELECT count(*) FROM '{snap.path / 'tree.parquet'}'").fetchone()[0] == len(
        tree
    )
    for kind, long, key in (("table", tables, "table_id"), ("mapping", mappings, "mapping_id")):
        for object_id, expected in long.items():
            path = snap.path / snap.object_entry(kind, object_id)["file"]
            count, ids = db.execute(
                f"SELECT count(*), min({key}) FROM read_parquet(?) WHERE {key} = ?",
                [str(path), object_id],
            ).fetchone()
            assert (count, ids) == (len(expected), object_id if len(expected) else None)
            for column in _checkable(expected)[:4]:
                got = db.execute(f'SELECT "{column}" FROM read_parquet(?) WHERE {key} = ? '
                                 'ORDER BY "row"', [str(path), object_id]).fetchall()  # fmt: skip
                assert [v for (v,) in got] == _cells(expected[column], path), (object_id, column)


@pytest.mark.parametrize("system", SYSTEMS)
def test_polars_reads_every_table_and_mapping_as_the_service_holds_it(taken, system):
    snap, _tree, tables, mappings = taken[system]
    for kind, long, key in (("table", tables, "table_id"), ("mapping", mappings, "mapping_id")):
        for object_id, expected in long.items():
            path = snap.path / snap.object_entry(kind, object_id)["file"]
            whole = pl.read_parquet(path)
            frame = whole.filter(pl.col(key) == object_id)
            assert frame.height == len(expected)
            assert frame[key].unique().to_list() == ([object_id] if len(expected) else [])
            for column in _checkable(expected)[:4]:
                assert frame[column].to_list() == _cells(expected[column], path), (
                    object_id,
                    column,
                )


def _checkable(frame: pd.DataFrame) -> list[str]:
    """Columns whose cells an engine gives back as plain Python values (text, ints, JSON)."""
    return [c for c in frame.columns
            if frame[c].dtype in ("string", "Int64", "boolean") or frame[c].dtype == object]  # fmt: skip


def _cells(column: pd.Series, path=None) -> list:
    """The cells as a file holds them: JSON text in an object column, and in a column of
    a name with several types across the folder's files (snapshot/merged.py)."""
    as_json = column.dtype == object
    if path is not None:
        metadata = pq.read_schema(path).field(column.name).metadata or {}
        as_json = metadata.get(b"mddframes.encoding") == b"json"
    values = column.astype(object).tolist()
    if as_json:  # the JSON text of each cell, exactly
        return [None if v is None or v is pd.NA else canonical_json(v) for v in values]
    return [None if pd.isna(v) else v for v in values]


def test_json_cells_are_canonical_text_with_the_encoding_in_the_metadata(taken):
    snap, _tree, tables, _mappings = taken["DWH"]
    expected = tables["tbl-0001"]
    path = snap.path / snap.object_entry("table", "tbl-0001")["file"]
    schema = pq.read_schema(path)
    json_columns = [c for c in expected.columns if expected[c].dtype == object]
    assert json_columns  # address, tags, external_ref...: objects, lists, big integers
    for column in json_columns:
        assert schema.field(column).metadata[b"mddframes.encoding"] == b"json"
    got = pl.read_parquet(path).filter(pl.col("table_id") == "tbl-0001")
    # a big integer stays exact: its text, parsed, is the same integer
    for column in json_columns:
        parsed = [None if t is None else json.loads(t) for t in got[column].to_list()]
        assert parsed == list(expected[column]), column
    big = [v for c in json_columns for v in expected[c] if isinstance(v, int) and v > 2**53]
    print("big integers checked:", big)


@pytest.mark.parametrize("system", SYSTEMS)
def test_duckdb_reads_each_kinds_folder_as_one_dataset(taken, system):
    snap, _tree, tables, mappings = taken[system]
    db = duckdb.connect()
    for folder, key, long in (("tables", "table_id", tables), ("mappings", "mapping_id", mappings)):
        counts = dict(db.execute(
            f"SELECT {key}, count(*) FROM read_parquet(?, union_by_name = true) GROUP BY {key}",
            [str(snap.path / folder / "*.parquet")],
        ).fetchall())  # fmt: skip
        assert counts == {i: len(rows) for i, rows in long.items() if len(rows)}


def test_duckdb_joins_the_tree_and_a_tables_rows(taken):
    snap, tree, tables, _mappings = taken["DWH"]
    table_id = "tbl-0001"
    owner = tree.loc[tree["table_id"] == table_id, "name"].iloc[0]
    rows = (
        duckdb.connect()
        .execute(f"""
        SELECT tree.name, tree.path, t.row
        FROM '{snap.path / "tree.parquet"}' AS tree
        JOIN read_parquet('{snap.path / "tables" / "*.parquet"}', union_by_name = true) AS t
          ON t.table_id = tree.table_id
        WHERE t.table_id = '{table_id}'
        ORDER BY t.row
    """)
        .fetchall()
    )
    assert [name for name, _path, _row in rows] == [owner] * len(tables[table_id])
    assert [row for *_, row in rows] == list(range(len(rows)))


def test_a_failed_object_is_in_the_manifest_and_the_exit_code(emu, monkeypatch, tmp_path):
    for name, value in (("MDD_TENANT", emu.tenant), ("MDD_BASE_URL", emu.base_url),
                        ("MDD_REALM", emu.realm), ("MDD_API_PREFIX", emu.api_prefix),
                        ("MDD_CLIENT_ID", emu.client_id), ("MDD_CLIENT_SECRET", emu.client_secret)):  # fmt: skip
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("MDD_MAX_RETRIES", "0")  # the failure at once, not after retries
    emu.inject_faults(error_rate=1.0, error_statuses=[503], operations=["getMapping"])
    code = main(["snapshot", "LAB", str(tmp_path / "snap"), "--no-structures", "--quiet"])
    assert code == EXIT_PARTIAL_FAILURE
    snap = read_snapshot(tmp_path / "snap")
    emu.clear_faults()
    from mddframes import Client

    with Client.from_emulator(emu) as client:
        mapping_ids = set(client.read_tree("LAB")["mapping_id"].dropna())
    assert set(snap.failures["id"]) == mapping_ids
    assert set(snap.failures["kind"]) == {"mapping"} and set(snap.failures["status"]) == {503}
    assert snap.objects.query("kind == 'mapping'").empty
    with pytest.raises(NotFoundError):
        snap.read_structures()


def test_an_existing_folder_is_refused_and_an_interrupted_one_started_over(client, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "something").write_text("x")
    with pytest.raises(InvalidArgumentError, match="exists already"):
        client.snapshot("LAB", tmp_path / "taken", progress=False)
    leftover = partial_folder(tmp_path / "new")
    (leftover / "tables").mkdir(parents=True)
    (leftover / "tables" / "half.parquet").write_bytes(b"PAR1")
    snap = client.snapshot("LAB", tmp_path / "new", progress=False, structures=False)
    assert not leftover.exists() and not (snap.path / "tables" / "half.parquet").exists()
    with pytest.raises(InvalidArgumentError, match="no complete snapshot"):
        read_snapshot(tmp_path / "nothing")


def test_diff_lists_what_changed_since_the_snapshot(client, tmp_path):
    before = client.snapshot("DWH", tmp_path / "before", progress=False, structures=False)
    assert diff_snapshots(before, client.api, progress=False).empty
    rows = client.read_table("tbl-0001")
    column = next(c for c in rows.columns if rows[c].dtype == "string")
    old = rows.at[0, column]
    rows.at[0, column] = "changed by the test"
    client.write_table("tbl-0001", rows)

    for changes in (
        diff_snapshots(before, client.api, progress=False),
        diff_snapshots(
            before, client.snapshot("DWH", tmp_path / "after", progress=False, structures=False)
        ),  # fmt: skip
    ):
        tables = changes.objects.query("kind == 'table'")
        assert tables[["id", "change"]].values.tolist() == [["tbl-0001", "changed"]]
        assert tables["old_digest"].iloc[0] == before.object_entry("table", "tbl-0001")["digest"]
        assert changes.cells[["id", "change", "row", "column", "old", "new"]].values.tolist() == [
            ["tbl-0001", "cell", 0, column, old, "changed by the test"]
        ]
