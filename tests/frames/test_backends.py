"""``dtype_backend`` on every reader, ``to_polars``, and the writers' one entry (issue 23)."""

from __future__ import annotations

import sys

import pandas as pd
import polars as pl
import pytest

from mddframes import (
    InvalidArgumentError,
    MissingDependencyError,
    read_excel,
    to_excel,
    to_polars,
)
from mddframes.frames.backends import from_user_frame, to_backend


def _ids(client) -> dict[str, str]:
    tree = client.read_tree("DWH")
    return {kind: tree[f"{kind}_id"].dropna().iloc[0] for kind in ("table", "mapping")}


READERS = {
    "read_tree": lambda c, ids, **kw: c.read_tree("DWH", **kw),
    "read_structures": lambda c, ids, **kw: c.read_structures(
        c.read_tree("DWH")["id"][:5], progress=False, **kw
    ),
    "read_table": lambda c, ids, **kw: c.read_table(ids["table"], **kw),
    "read_tables": lambda c, ids, **kw: c.read_tables([ids["table"]], progress=False, **kw),
    "read_mapping": lambda c, ids, **kw: c.read_mapping(ids["mapping"], **kw),
    "read_mappings": lambda c, ids, **kw: c.read_mappings([ids["mapping"]], progress=False, **kw),
    "read_object_types": lambda c, ids, **kw: c.read_object_types(**kw),
    "read_packages": lambda c, ids, **kw: c.read_packages("DWH", **kw),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_gives_arrow_columns_of_the_same_values(client, reader):
    ids = _ids(client)
    default = READERS[reader](client, ids)
    arrow = READERS[reader](client, ids, dtype_backend="pyarrow")

    assert READERS[reader](client, ids, dtype_backend="numpy_nullable").dtypes.equals(
        default.dtypes
    )
    assert not any(isinstance(dtype, pd.ArrowDtype) for dtype in default.dtypes)
    for name, dtype in arrow.dtypes.items():
        # object columns hold values no Arrow type holds exactly: kept as they are
        assert isinstance(dtype, pd.ArrowDtype) or default[name].dtype == object, name
    assert list(arrow.columns) == list(default.columns)
    pd.testing.assert_index_equal(arrow.index, default.index)
    back = from_user_frame(arrow)
    # a "string" column comes back with the codec's storage (python), the same dtype name
    assert [str(d) for d in back.dtypes] == [str(d) for d in default.dtypes]
    pd.testing.assert_frame_equal(back, default, check_dtype=False)


def test_an_arrow_frame_keeps_its_write_back_context(client):
    table_id = _ids(client)["table"]
    frame = client.read_table(table_id, dtype_backend="pyarrow")
    context = frame.attrs["mddframes"]
    assert context.object_id == table_id
    assert client.contexts.get("table", table_id) is context


def test_an_unknown_backend_is_refused_before_any_request(client, emu):
    emu.reset_counters()
    with pytest.raises(InvalidArgumentError, match="dtype_backend must be one of"):
        client.read_table("tbl-0001", dtype_backend="arrow")  # type: ignore[arg-type]
    assert emu.counters().get("getTable", 0) == 0


def test_pyarrow_missing_names_the_extra(client, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    with pytest.raises(MissingDependencyError, match=r"mddframes\[arrow\]"):
        client.read_tree("DWH", dtype_backend="pyarrow")
    assert issubclass(MissingDependencyError, ImportError)


def test_to_polars_puts_the_index_first_and_keeps_every_value(client):
    table_id = _ids(client)["table"]
    frame = client.read_table(table_id)

    polars = to_polars(client.read_table(table_id, dtype_backend="pyarrow"))

    assert isinstance(polars, pl.DataFrame)
    assert polars.columns == ["row", *frame.columns]
    assert polars.get_column("row").to_list() == list(frame.index)
    objects = [name for name in frame.columns if frame[name].dtype == object]
    assert all(polars.schema[name] == pl.Object for name in objects)
    assert not any(
        polars.schema[name] == pl.Object for name in frame.columns if name not in objects
    )
    pd.testing.assert_frame_equal(from_user_frame(polars), frame)


def test_a_polars_row_without_position_is_a_new_row(client, tmp_path):
    table_id = _ids(client)["table"]
    polars = to_polars(client.read_table(table_id, dtype_backend="pyarrow"))
    new = polars.head(1).with_columns(
        pl.lit(None, dtype=pl.Int64).alias("row"), pl.lit("NEW-1").alias("customer_no")
    )

    result = client.write_table(table_id, pl.concat([polars, new]), backup_dir=tmp_path)

    assert len(result.diff.added) == 1 and result.diff.changed.empty
    assert len(client.api.get_table(table_id)["data"]) == len(polars) + 1


def test_a_non_integer_polars_row_column_is_named(client):
    table_id = _ids(client)["table"]
    polars = to_polars(client.read_table(table_id)).with_columns(pl.col("row").cast(pl.String))
    with pytest.raises(Exception, match="'row'.*must be integers"):
        client.write_table(table_id, polars, dry_run=True)


@pytest.mark.parametrize("backend", ["pyarrow", "polars"])
def test_to_excel_takes_either_backend_and_reads_back_under_it(client, tmp_path, backend):
    table_id = _ids(client)["table"]
    frame = client.read_table(table_id)
    arrow = client.read_table(table_id, dtype_backend="pyarrow")
    given = arrow if backend == "pyarrow" else to_polars(arrow)
    client.contexts.record(frame.attrs["mddframes"])  # polars frames find it here

    to_excel(frame, tmp_path / "numpy.xlsx", kind="table", client=client)
    to_excel(given, tmp_path / "arrow.xlsx", kind="table", client=client)

    back = read_excel(tmp_path / "arrow.xlsx", dtype_backend="pyarrow")
    pd.testing.assert_frame_equal(from_user_frame(back), read_excel(tmp_path / "numpy.xlsx"))
    assert any(isinstance(dtype, pd.ArrowDtype) for dtype in back.dtypes)


def test_to_backend_of_numpy_nullable_is_the_frame_itself():
    frame = pd.DataFrame({"n": pd.array([1, None], dtype="Int64")})
    assert to_backend(frame, "numpy_nullable") is frame
    assert from_user_frame(frame) is frame
