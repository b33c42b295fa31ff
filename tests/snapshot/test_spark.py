"""Spark (pyspark in local mode) reads a snapshot of every sample system: each table's rows
and a sample of its values as the service holds them, file by file and as one
merged-schema dataset; every Parquet type is one the common engines share.

The values compared are text, integers, booleans and JSON, and every timestamp (with and
without a zone, compared as microseconds since the epoch, which does not depend on the
time zone of Spark or of this process) and float (compared by ``repr``: ``-0.0`` is not
``0.0``) of the tables sampled."""

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


def _kind(column: pd.Series) -> str | None:
    """``aware``/``naive`` for a timestamp column, ``float`` for a float one."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return "aware" if getattr(column.dtype, "tz", None) is not None else "naive"
    return "float" if pd.api.types.is_float_dtype(column.dtype) else None


def _timed_or_float(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if _kind(frame[c]) is not None]


def _spark_column(F, name: str, frame: pd.DataFrame, as_json: bool):
    """The column as Spark gives it back: a timestamp as microseconds since the epoch (a
    zone-less one read as UTC, the session's zone)."""
    if _kind(frame[name]) in ("aware", "naive") and not as_json:
        return F.unix_micros(F.col(name).cast("timestamp")).alias(name)
    return F.col(name)


def _cells(column: pd.Series, as_json: bool) -> list:
    """The cells as a file holds them: JSON text in an object column, and in the column
    of a name with several types across the folder's files (snapshot/merged.py); a
    timestamp as microseconds since the epoch; a float as its repr."""
    values = column.astype(object).tolist()
    if as_json:  # the JSON text of each cell, exactly
        return [None if v is None or v is pd.NA else canonical_json(v) for v in values]
    if _kind(column) in ("aware", "naive"):
        micros = column.array.as_unit("us").asi8.tolist()
        return [None if pd.isna(v) else m for v, m in zip(values, micros, strict=True)]
    if _kind(column) == "float":
        return [None if pd.isna(v) else repr(float(v)) for v in values]
    return [None if pd.isna(v) else v for v in values]


def _spark_cells(rows: list, name: str, column: pd.Series, as_json: bool) -> list:
    got = [r[name] for r in rows]
    if _kind(column) == "float" and not as_json:
        return [None if v is None else repr(v) for v in got]
    return got


#: Which kinds of timestamp and float column each sample system's tables hold (written
#: here: the comparisons must not pass by finding none).
TIMED = {"DWH": {"aware", "naive", "float"}, "LAB": set(), "FLOW": {"naive"}}


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
        path = snap.path / relative
        columns = _checkable(expected)[:4] + _timed_or_float(expected)
        selected = [_spark_column(F, c, expected, _is_json(path, c)) for c in columns]
        rows = (data.where(F.col("table_id") == table_id).orderBy("row")
                .select("row", *selected).collect())  # fmt: skip
        assert [r["row"] for r in rows] == list(expected.index), (relative, table_id)
        for column in columns:
            as_json = _is_json(path, column)
            cells = _cells(expected[column], as_json)
            assert _spark_cells(rows, column, expected[column], as_json) == cells, (
                table_id,
                column,
            )


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
    kinds: set[str] = set()
    for table_id, expected in tables.items():
        if not len(expected):
            continue
        path = snap.path / snap.object_entry("table", table_id)["file"]
        columns = _checkable(expected)[:3] + _timed_or_float(expected)
        merged = {c: _is_json(path, c) for c in columns}
        position = snap.object_entry("table", table_id)["row_column"]
        selected = [_spark_column(F, c, expected, merged[c]) for c in columns]
        rows = (data.where(F.col("table_id") == table_id).orderBy(position)
                .select(position, *selected).collect())  # fmt: skip
        assert [r[position] for r in rows] == list(expected.index), table_id
        for column in columns:
            cells = _cells(expected[column], merged[column])
            got = _spark_cells(rows, column, expected[column], merged[column])
            assert got == cells, (table_id, column)
            checked += 1
            if not merged[column]:  # compared as a timestamp or float, not as JSON text
                kinds.add(_kind(expected[column]) or "other")
    assert checked
    assert TIMED[system] <= kinds, kinds


@pytest.mark.parametrize("system", SYSTEMS)
def test_spark_reads_the_mappings_as_one_merged_schema_dataset(spark, taken, system):
    snap, _tables = taken[system]
    mappings = snap.objects.query("kind == 'mapping'")
    data = spark.read.option("mergeSchema", "true").parquet(str(snap.path / "mappings"))
    counts = dict(data.groupBy("mapping_id").count().collect())
    assert {i: counts.get(i, 0) for i in mappings["id"]} == dict(
        zip(mappings["id"], mappings["rows"].astype(int), strict=True)
    )


#: The tables as of a version in Spark SQL (docs/guide/history.md): each one's latest log
#: row at or before the version, unless a tombstone.
AS_OF_SQL = """
    SELECT * FROM (
      SELECT *, row_number() OVER (PARTITION BY kind, id ORDER BY version DESC) AS latest
      FROM log WHERE version <= {version} AND kind = 'table'
    ) WHERE latest = 1 AND NOT removed"""


def test_spark_reads_a_history_version_with_the_guides_sql(spark, emulator, tmp_path_factory):
    """A history of two versions of LAB, one table edited between them: Spark reads each
    version's rows of it from the log's latest row of the table at or before the version
    (the window query of docs/guide/history.md) and the one file it names."""
    from mddframes import Client, read_history
    from mddframes.snapshot.history_store import DIGEST_COLUMN

    emulator.reset()
    store = tmp_path_factory.mktemp("spark-history") / "history"
    with Client.from_emulator(emulator) as client:
        table_id = str(client.read_tree("LAB")["table_id"].dropna().iloc[0])
        client.snapshot("LAB", history=store, progress=False, structures=False)
        frame = client.read_table(table_id)
        column = [c for c in frame.columns if frame[c].dtype == "string"][-1]
        frame.loc[frame.index[0], column] = "edited for Spark"
        client.write_table(table_id, frame)
        client.snapshot("LAB", history=store, progress=False, structures=False)
    spark.read.parquet(f"{store}/log").createOrReplaceTempView("log")
    history = read_history(store)
    for number in (1, 2):
        # the table's latest log row at or before the version (not a tombstone), then its
        # rows in the one file that row names, by id and digest
        (entry,) = spark.sql(AS_OF_SQL.format(version=number) + f" AND id = '{table_id}'").collect()
        stored = spark.read.parquet(f"{store}/{entry['file']}")
        rows = (
            stored.where((stored.table_id == table_id) & (stored[DIGEST_COLUMN] == entry["digest"]))
            .orderBy("row")
            .collect()
        )
        expected = history.as_of(number).read_table(table_id)[column].tolist()
        assert [r[column] for r in rows] == expected
    assert expected[0] == "edited for Spark"
    tables = spark.sql(AS_OF_SQL.format(version=2)).count()
    assert tables == history.list_versions()["tables"].iloc[1]
