"""Spark (pyspark in local mode) reads a snapshot of every sample system: each table's rows
and a sample of its values as the service holds them, file by file and as one
merged-schema dataset; every Parquet type is one the common engines share."""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest

from mddframes.codec.values import canonical_json

# the spark marker requires pyspark and a Java runtime (tests/needs.py): missing, the
# tests skip, and fail under CI; pyspark is imported in the tests
pytestmark = [pytest.mark.spark, pytest.mark.slow]

SYSTEMS = ("DWH", "LAB", "FLOW")


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName("mddframes-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def taken(emulator, tmp_path_factory):
    """Each sample system snapshotted once, and every table as the service held it."""
    from mddframes import Client

    emulator.reset()
    folder = tmp_path_factory.mktemp("spark-snapshots")
    out = {}
    with Client.from_emulator(emulator) as client:
        for system in SYSTEMS:
            snap = client.snapshot(system, folder / system, progress=False, structures=False)
            ids = client.read_tree(system)["table_id"].dropna().unique()
            out[system] = (snap, {i: client.read_table(i) for i in ids})
    return out


def _checkable(frame: pd.DataFrame) -> list[str]:
    """Columns whose cells Spark gives back as plain Python values (text, ints, JSON)."""
    return [c for c in frame.columns
            if frame[c].dtype in ("string", "Int64", "boolean") or frame[c].dtype == object]  # fmt: skip


def _cells(column: pd.Series, as_json: bool) -> list:
    """The cells as a file holds them: JSON text in an object column, and in the column
    of a name with several types across the folder's files (snapshot/merged.py)."""
    values = column.astype(object).tolist()
    if as_json:  # the JSON text of each cell, exactly
        return [None if v is None or v is pd.NA else canonical_json(v) for v in values]
    return [None if pd.isna(v) else v for v in values]


def _is_json(path, column: str) -> bool:
    metadata = pq.read_schema(path).field(column).metadata or {}
    return metadata.get(b"mddframes.encoding") == b"json"


@pytest.mark.parametrize("system", SYSTEMS)
def test_every_parquet_type_is_one_the_engines_share(taken, system):
    snap, _tables = taken[system]
    for path in sorted(snap.path.rglob("*.parquet")):
        for field in pq.read_schema(path):
            text = str(field.type)
            assert "[ns" not in text and not text.startswith("uint"), (path.name, field)


@pytest.mark.parametrize("system", SYSTEMS)
def test_spark_reads_every_table_file_with_the_services_rows_and_values(spark, taken, system):
    from pyspark.sql import functions as F

    snap, tables = taken[system]
    by_file: dict[str, list[str]] = {}
    for table_id in tables:
        by_file.setdefault(snap.object_entry("table", table_id)["file"], []).append(table_id)
    files = [str(snap.path / relative) for relative in by_file]
    # every file's rows counted in one job (each file read for its table_id column)
    ids = spark.read.schema("table_id string").parquet(*files)
    counts = dict(ids.groupBy("table_id").count().collect())
    assert {i: counts.get(i, 0) for i in tables} == {i: len(f) for i, f in tables.items()}
    # each file read whole, with its own schema: a sample of the values of its first table
    for relative, in_file in by_file.items():
        data = spark.read.parquet(str(snap.path / relative))
        table_id = max(in_file, key=lambda i: len(tables[i]))
        expected = tables[table_id]
        columns = _checkable(expected)[:4]
        rows = (data.where(F.col("table_id") == table_id).orderBy("row")
                .select("row", *columns).collect())  # fmt: skip
        assert [r["row"] for r in rows] == list(expected.index), (relative, table_id)
        for column in columns:
            cells = _cells(expected[column], _is_json(snap.path / relative, column))
            assert [r[column] for r in rows] == cells, (table_id, column)


@pytest.mark.parametrize("system", SYSTEMS)
def test_spark_reads_the_tables_as_one_merged_schema_dataset(spark, taken, system):
    from pyspark.sql import functions as F

    snap, tables = taken[system]
    data = spark.read.option("mergeSchema", "true").parquet(str(snap.path / "tables"))
    counts = dict(data.groupBy("table_id").count().collect())
    assert {i: counts.get(i, 0) for i in tables} == {i: len(f) for i, f in tables.items()}
    # a name of several types (DWH: code, lifetime_value, external_ref) is one JSON text
    # column of the dataset; every other column keeps its type
    assert len({(f.name, f.dataType) for f in data.schema.fields}) == len(data.schema.fields)
    checked = 0
    for table_id, expected in tables.items():
        if not len(expected):
            continue
        path = snap.path / snap.object_entry("table", table_id)["file"]
        columns = _checkable(expected)[:3]
        position = snap.object_entry("table", table_id)["row_column"]
        rows = (data.where(F.col("table_id") == table_id).orderBy(position)
                .select(position, *columns).collect())  # fmt: skip
        assert [r[position] for r in rows] == list(expected.index), table_id
        for column in columns:
            cells = _cells(expected[column], _is_json(path, column))
            assert [r[column] for r in rows] == cells, (table_id, column)
            checked += 1
    assert checked


@pytest.mark.parametrize("system", SYSTEMS)
def test_spark_reads_the_mappings_as_one_merged_schema_dataset(spark, taken, system):
    snap, _tables = taken[system]
    mappings = snap.objects.query("kind == 'mapping'")
    data = spark.read.option("mergeSchema", "true").parquet(str(snap.path / "mappings"))
    counts = dict(data.groupBy("mapping_id").count().collect())
    assert {i: counts.get(i, 0) for i in mappings["id"]} == dict(
        zip(mappings["id"], mappings["rows"].astype(int), strict=True)
    )
