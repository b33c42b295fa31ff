"""read_table / read_table_columns / read_mapping against the emulator's sample data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mddframes import InvalidArgumentError, NotFoundError, ReadContext
from mddframes.codec.values import json_equal, strict_equal

STRING = pd.StringDtype("python")


def object_id(client, name: str, kind: str = "table", system: str = "DWH") -> str:
    """The id of the table or mapping owned by the element called ``name``."""
    tree = client.read_tree(system)
    column = f"{kind}_id"
    found = tree.loc[(tree["name"] == name) & tree[column].notna(), column]
    assert len(found) == 1, f"no single {kind} owned by {name!r} in {system}"
    return found.iloc[0]


def assert_cells_match_payload(frame: pd.DataFrame, rows: list[dict]) -> None:
    """Every frame cell holds its row's JSON value (NA where the key is absent or null)."""
    assert len(frame) == len(rows)
    for position, row in enumerate(rows):
        for name in frame.columns:
            cell = frame[name].iloc[position]
            value = row.get(name)
            where = f"row {position}, column {name!r}"
            if value is None:
                assert cell is None or cell is pd.NA or cell is pd.NaT, where
            elif isinstance(cell, pd.Timestamp):
                assert cell == pd.Timestamp(value), where
            elif isinstance(value, dict | list):
                assert strict_equal(cell, value), where
            else:
                plain = cell.item() if isinstance(cell, np.generic) else cell
                assert json_equal(plain, value) and type(plain) is type(value), (where, cell)


def test_read_table_keeps_every_hard_case_of_the_customer_table(client):
    table_id = object_id(client, "crm_customer")
    payload = client.api.get_table(table_id)

    frame = client.read_table(table_id)

    declared = [c["name"] for c in payload["metadata"]["columns"]]
    undeclared = list(dict.fromkeys(k for r in payload["data"] for k in r if k not in declared))
    assert undeclared, "the sample has undeclared columns (legacy_id, _meta)"
    assert list(frame.columns) == declared + undeclared
    assert isinstance(frame.index, pd.RangeIndex) and frame.index.name == "row"
    assert_cells_match_payload(frame, payload["data"])
    types = {c["name"]: c["dataType"] for c in payload["metadata"]["columns"]}
    expected = {
        "STRING": STRING,
        "DECIMAL": STRING,  # decimals written as strings stay strings: no rounding
        "INTEGER": "Int64",
        "DOUBLE": "Float64",
        "BOOLEAN": "boolean",
        "JSON": object,
        "BIGINT": object,  # the sample holds integers above 2**64
    }
    for name, data_type in types.items():
        if data_type in expected:
            assert frame[name].dtype == expected[data_type], (name, frame[name].dtype)
        elif data_type in ("DATE", "TIMESTAMP"):
            assert frame[name].dtype.kind == "M", (name, frame[name].dtype)
    # codes keep their leading zeros, big integers are exact Python ints
    codes = [r["customer_no"] for r in payload["data"]]
    assert frame["customer_no"].tolist() == codes
    assert any(c.startswith("0") for c in codes)
    big = [r.get("external_ref") for r in payload["data"]]
    assert any(isinstance(v, int) and abs(v) > 2**63 for v in big)
    assert all(a == b or a is b for a, b in zip(frame["external_ref"].tolist(), big, strict=True))
    # an undeclared key of text is string, full or all-null (codec/dtypes.py DTYPE_RULES):
    # an id with leading zeros stays the string it was
    assert frame["legacy_id"].dtype == STRING
    assert "000777" in frame["legacy_id"].dropna().tolist()


def test_read_table_order_dates_and_mixed_offsets(client):
    table_id = object_id(client, "erp_sales_order")
    payload = client.api.get_table(table_id)

    frame = client.read_table(table_id)

    assert_cells_match_payload(frame, payload["data"])
    assert frame["order_date"].dtype.kind == "M"
    assert str(frame["shipped_at"].dtype).startswith("datetime64") and frame["shipped_at"].dt.tz
    ids = [r["order_id"] for r in payload["data"]]
    assert frame["order_id"].dtype == "Int64"  # BIGINT within int64: exact, no float
    assert frame["order_id"].tolist() == ids
    assert any(i > 2**53 for i in ids)
    amounts = frame["amount"].tolist()
    assert amounts == [r["amount"] for r in payload["data"]]
    assert frame["discount"].dtype == "Float64"
    assert 0.1 in frame["discount"].dropna().tolist()


def test_every_sample_table_reads_and_matches_its_payload(client):
    tree = client.read_tree("DWH")
    for table_id in tree["table_id"].dropna():
        payload = client.api.get_table(table_id)
        frame = client.read_table(table_id)
        assert_cells_match_payload(frame, payload["data"])
        for column in payload["metadata"]["columns"]:
            dtype = frame[column["name"]].dtype
            values = [
                r[column["name"]] for r in payload["data"] if r.get(column["name"]) is not None
            ]
            if any(isinstance(v, float) for v in values):
                assert str(dtype) in ("Float64", "object"), (table_id, column["name"])
            if values and all(type(v) is int and abs(v) < 2**63 for v in values):
                assert dtype == "Int64", (table_id, column["name"], dtype)
            if any(isinstance(v, float) and not math.isfinite(v) for v in values):
                pytest.fail("the sample holds a non-finite float")


def test_read_records_the_write_back_context_in_client_and_attrs(client):
    table_id = object_id(client, "crm_customer")
    frame = client.read_table(table_id)

    context = frame.attrs["mddframes"]
    assert isinstance(context, ReadContext)
    assert (context.kind, context.object_id) == ("table", table_id)
    assert context.load_document() == client.api.get_table(table_id)
    # nested cells are the payload's own objects, not copies
    first = context.load_document()["data"][0]
    assert frame["address"].iloc[0] is first["address"]
    assert client.contexts.get("table", table_id) is context
    # pandas deep-copies attrs; the context is shared, never copied
    assert frame.copy().attrs["mddframes"] is context
    combined = pd.concat([frame, frame.iloc[:0]])
    assert client.contexts.get("table", table_id) is context
    assert combined.shape == frame.shape
    assert len(context.digest) == 64


def test_read_table_columns_gives_the_metadata_in_declared_order(client):
    table_id = object_id(client, "crm_customer")
    columns = client.api.get_table(table_id)["metadata"]["columns"]

    frame = client.read_table_columns(table_id)

    assert frame["name"].tolist() == [c["name"] for c in columns]
    assert list(frame.columns[:5]) == [
        "name",
        "data_type",
        "nullable",
        "primary_key",
        "description",
    ]
    assert frame["nullable"].dtype == "boolean"
    assert frame["nullable"].tolist() == [c.get("nullable") for c in columns]
    assert frame["data_type"].tolist() == [c["dataType"] for c in columns]
    assert "precision" in frame.columns and "scale" in frame.columns
    limit = frame.loc[frame["name"] == "credit_limit", "precision"].iloc[0]
    assert limit == next(c["precision"] for c in columns if c["name"] == "credit_limit")
    assert client.contexts.get("table", table_id) is None  # only row reads record one


def test_read_mapping_gives_the_column_mappings(client):
    mapping_id = object_id(client, "stg_crm_customer", kind="mapping")
    payload = client.api.get_mapping(mapping_id)

    frame = client.read_mapping(mapping_id)

    assert list(frame.columns[:3]) == ["source", "target", "transformation"]
    assert_cells_match_payload(frame, payload["columnMappings"])
    assert frame["source"].dtype == STRING
    context = client.contexts.get("mapping", mapping_id)
    assert context is frame.attrs["mddframes"] and context.load_document() == payload


@pytest.mark.parametrize("awkward", ["tbl/with/slash", "..", "a?b#c", "Zürich-Ω", "100%"])
def test_awkward_ids_reach_their_own_table(client, awkward):
    frame = client.read_table(awkward)
    payload = client.api.get_table(awkward)
    assert payload["id"] == awkward
    assert_cells_match_payload(frame, payload["data"])


def test_bad_ids_are_refused_with_a_clear_error(client):
    with pytest.raises(InvalidArgumentError, match="table_id"):
        client.read_table("")
    with pytest.raises(NotFoundError):
        client.read_table("no-such-table")
    with pytest.raises(InvalidArgumentError, match="mapping_id"):
        client.read_mapping(None)
