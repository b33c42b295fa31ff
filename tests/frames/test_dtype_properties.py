"""The dtype rule as a property: for random tables (declared types, null patterns, empty
tables, undeclared keys), a column's dtype is the same in read_table, read_tables, every
chunk of iter_tables at every chunk size, and in a snapshot's Parquet schema before and
after the table lost all its rows (codec/dtypes.py DTYPE_RULES)."""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Sample tables of the LAB system the examples overwrite (LAB is small: a snapshot is quick).
TABLES = ("lab-source", "name with space", "a+b")

_DATES = st.dates().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}")
_TIMES = st.datetimes(timezones=st.none()).map(lambda t: t.isoformat())
_ZONES = st.sampled_from(["Z", "+02:00", "-05:30", "+00:00"])

#: declared type -> values that fit it (one name per declared type: a name declared with
#: different types is the long frames' own rule, tested apart)
FITTING: dict[str, st.SearchStrategy[Any]] = {
    "VARCHAR": st.text(max_size=5),
    "INTEGER": st.integers(-(2**63), 2**63 - 1),
    "DOUBLE": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53),
    "DECIMAL(12,2)": st.decimals(places=2, allow_nan=False, allow_infinity=False,
                                 min_value=-(10**9), max_value=10**9).map(str),
    "BOOLEAN": st.booleans(),
    "DATE": _DATES,
    "TIMESTAMP": st.tuples(_TIMES, _ZONES).map("".join),
    "TIMESTAMP_NTZ": _TIMES,
    "JSON": st.lists(st.integers(), max_size=2) | st.dictionaries(st.text(max_size=2), st.none()),
    "GEOMETRY": st.text(max_size=5),
}  # fmt: skip


@st.composite
def tables(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Up to three tables: declared columns, an undeclared key each, nulls, maybe no rows."""
    out = []
    for t in range(draw(st.integers(1, len(TABLES)))):
        types = draw(st.lists(st.sampled_from(sorted(FITTING)), min_size=1, max_size=4,
                              unique=True))  # fmt: skip
        names = {f"col_{data_type.split('(')[0].lower()}": data_type for data_type in types}
        n_rows = draw(st.integers(0, 4))
        rows = []
        for _ in range(n_rows):
            row: dict[str, Any] = {}
            for name, data_type in names.items():
                cell = draw(st.sampled_from(["value", "null", "absent"]))
                if cell != "absent":
                    row[name] = draw(FITTING[data_type]) if cell == "value" else None
            if draw(st.booleans()):
                row[f"extra_{t}"] = draw(st.none() | st.text(max_size=3))  # undeclared
            rows.append(row)
        columns = [{"name": n, "dataType": d, "nullable": True} for n, d in names.items()]
        out.append({"columns": columns, "data": rows})
    return out


def _put(client: Any, table_id: str, table: dict[str, Any], rows: list[Any]) -> None:
    base = client.api.get_table(table_id)
    metadata = {**base["metadata"], "columns": table["columns"]}
    client.api.put_table(table_id, {**base, "metadata": metadata, "data": rows})


def _dtypes_of(frame: Any) -> dict[str, str]:
    return {name: str(dtype) for name, dtype in frame.dtypes.items()}


def _parquet_types(snap: Any, table_id: str, names: list[str]) -> dict[str, str]:
    schema = pq.read_schema(snap.path / snap.object_entry("table", table_id)["file"])
    return {name: str(schema.field(name).type) for name in names}


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(drawn=tables())
def test_a_columns_dtype_is_the_same_in_every_read_and_chunk(client, emu, drawn):
    emu.reset()
    ids = list(TABLES[: len(drawn)])
    for table_id, table in zip(ids, drawn, strict=True):
        _put(client, table_id, table, table["data"])
    for backend in ("numpy_nullable", "pyarrow"):
        single = {i: _dtypes_of(client.read_table(i, dtype_backend=backend)) for i in ids}
        reads = [_dtypes_of(client.read_tables(ids, progress=False, dtype_backend=backend))]
        for chunksize in range(1, len(ids) + 1):
            reads += [
                _dtypes_of(chunk)
                for chunk in client.iter_tables(
                    ids, chunksize=chunksize, progress=False, dtype_backend=backend
                )  # fmt: skip
            ]
        for table_id, dtypes in single.items():
            for long in reads:
                for name, dtype in dtypes.items():
                    if name in long:
                        assert long[name] == dtype, (backend, table_id, name)
        # the same table without rows: each declared column keeps its dtype
        for table_id, table in zip(ids, drawn, strict=True):
            _put(client, table_id, table, [])
            empty = _dtypes_of(client.read_table(table_id, dtype_backend=backend))
            _put(client, table_id, table, table["data"])
            for column in table["columns"]:
                name = column["name"]
                assert empty[name] == single[table_id][name], (backend, table_id, name)


@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip
@given(drawn=tables())
def test_a_snapshots_parquet_types_survive_the_table_losing_its_rows(client, emu, tmp_path_factory,
                                                                     drawn):  # fmt: skip
    emu.reset()
    folder = tmp_path_factory.mktemp("snapshots")
    ids = list(TABLES[: len(drawn)])
    for table_id, table in zip(ids, drawn, strict=True):
        _put(client, table_id, table, table["data"])
    before = client.snapshot("LAB", folder / "before", progress=False, structures=False)
    for table_id, table in zip(ids, drawn, strict=True):
        _put(client, table_id, table, [])
    after = client.snapshot("LAB", folder / "after", progress=False, structures=False)
    for table_id, table in zip(ids, drawn, strict=True):
        names = [column["name"] for column in table["columns"]]
        types = _parquet_types(before, table_id, names)
        assert _parquet_types(after, table_id, names) == types, table_id
        assert not any("[ns" in t or t.startswith("uint") for t in types.values()), types
