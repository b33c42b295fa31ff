"""Lineage over the emulator's FLOW system: every shape a graph of mappings takes.

FLOW (mddframes/emulator/sample/flow.py): shop_orders (flow-01) and shop_returns
(flow-02) feed stg_sales (flow-04: a fan-in), which feeds sales_by_customer (flow-06)
and sales_by_day (flow-07: a fan-out); sales_by_customer feeds customer_value (flow-08:
three hops from the sources); shop_customers (flow-03) -> stg_customers (flow-05) ->
customer_score (flow-09) -> shop_customers is a cycle.
"""

from __future__ import annotations

import re
import warnings

import pytest

import mddframes
from mddframes import InvalidArgumentError, Lineage, MappingShapeWarning
from mddframes.emulator import serve
from mddframes.lineage import EDGE_COLUMNS, PLACES, edges_frame


@pytest.fixture
def edges(client):
    return client.read_lineage("FLOW", progress=False)


@pytest.fixture
def lineage(edges):
    return Lineage(edges)


def test_edge_frame_has_one_row_per_column_mapping_with_names_and_types(client, edges):
    assert tuple(edges.columns) == EDGE_COLUMNS
    assert all(str(dtype) == "string" for dtype in edges.dtypes)
    mappings = client.read_mappings(edges["mapping_id"].unique().tolist(), progress=False)
    assert len(edges) == len(mappings) == 23
    returns = edges[(edges["mapping_id"] == "flow-map-02") & (edges["source_column"] == "amount")]
    assert returns[
        ["source_name", "source_type", "target_name", "target_type"]
    ].values.tolist() == [["shop_returns", "SOURCE_TABLE", "stg_sales", "STAGE_TABLE"]]
    assert returns["transformation"].tolist() == ["-src.amount"]
    constant = edges[(edges["mapping_id"] == "flow-map-02") & (edges["target_column"] == "kind")]
    assert constant["source_column"].isna().all()
    assert constant["transformation"].tolist() == ["'RETURN'"]


def test_multi_hop_upstream_reaches_both_sources_through_the_fan_in(lineage):
    frame = lineage.upstream("flow-08").to_frame()
    assert dict(zip(frame["element_name"], frame["depth"], strict=True)) == {
        "sales_by_customer": 1,
        "stg_sales": 2,
        "shop_orders": 3,
        "shop_returns": 3,
    }
    orders = frame.set_index("element_name").loc["shop_orders"]
    assert orders["path"] == "flow-01 -> flow-04 -> flow-06 -> flow-08"
    assert orders["mappings"] == "flow-map-01 -> flow-map-03 -> flow-map-05"
    assert lineage.upstream("flow-08", depth=1).to_frame()["element_id"].tolist() == ["flow-06"]


def test_fan_out_downstream_of_the_stage(lineage):
    frame = lineage.downstream("flow-04", depth=1).to_frame()
    assert sorted(frame["element_name"]) == ["sales_by_customer", "sales_by_day"]
    assert set(lineage.downstream("stg_sales").to_frame()["element_name"]) == {
        "sales_by_customer",
        "sales_by_day",
        "customer_value",
    }


def test_impact_of_a_source_column_lists_every_dependent_column_with_its_transformations(
    lineage,
):
    frame = lineage.impact("flow-02.amount").to_frame()
    found = {(row.element_name, row.column): row for row in frame.itertuples()}
    assert set(found) == {
        ("stg_sales", "amount"),
        ("sales_by_customer", "total_amount"),
        ("sales_by_day", "total_amount"),
        ("customer_value", "value_band"),
    }
    band = found[("customer_value", "value_band")]
    assert band.depth == 3
    assert band.path == (
        "flow-02.amount -> flow-04.amount -> flow-06.total_amount -> flow-08.value_band"
    )
    assert band.transformations.split(" -> ")[:2] == ["-src.amount", "SUM(src.amount)"]
    # a copy without a transformation shows as "="
    copied = lineage.impact(("flow-01", "amount")).to_frame().set_index("column")
    assert copied.loc["amount", "transformations"] == "="


def test_a_cycle_is_data_not_a_crash(lineage):
    cycles = lineage.find_cycles()
    assert cycles["element_name"].tolist() == ["shop_customers", "stg_customers", "customer_score"]
    assert cycles["cycle"].tolist() == [0, 0, 0]
    # following the cycle ends where it started: each node once
    around = lineage.downstream("flow-03").to_frame()
    assert around["element_name"].tolist() == ["stg_customers", "customer_score"]
    assert set(lineage.impact("flow-03.segment").to_frame()["column"]) == {"segment", "score"}


def test_path_between_elements_and_between_columns(lineage):
    frame = lineage.path("flow-02.amount", "flow-08.value_band").to_frame()
    assert frame["column"].tolist() == ["amount", "total_amount", "value_band"]
    assert lineage.path("flow-01", "flow-08").to_frame()["element_id"].tolist() == [
        "flow-04",
        "flow-06",
        "flow-08",
    ]
    assert len(lineage.path("flow-08", "flow-01")) == 0  # data never flows back there


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda g: g.upstream("flow-99"), "no element 'flow-99'"),
        (lambda g: g.impact("flow-02.amout"), "no column 'amout' of element 'flow-02'"),
        (lambda g: g.impact("flow-02"), "impact takes a column"),
        (lambda g: g.path("flow-01", "flow-08.value_band"), "two elements or two columns"),
        (lambda g: g.upstream(("flow-02",)), "(element_id, column)"),
        (lambda g: g.upstream("flow-08", depth=0), "depth must be at least 1"),
        (lambda g: g.upstream("shop_returns.amount"), "did you mean the column flow-02.amount"),
    ],
)
def test_unknown_addresses_get_clear_errors(lineage, call, words):
    with pytest.raises(InvalidArgumentError) as caught:
        call(lineage)
    assert words in str(caught.value)


def test_columns_address_by_string_tuple_or_element_name(lineage):
    assert (
        lineage.node("flow-02.amount")
        == lineage.node(("flow-02", "amount"))
        == (
            "flow-02",
            "amount",
        )
    )
    assert lineage.node("shop_returns") == "flow-02"


def test_a_mapping_lacking_an_assumed_field_is_named_once_and_left_out(client):
    client.api.put_mapping(
        "flow-map-04",
        {"id": "flow-map-04", "name": "no ends", "columnMappings": [{"source": "a"}]},
    )
    with pytest.warns(MappingShapeWarning) as caught:
        edges = client.read_lineage("FLOW", progress=False)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "row 17 of docs/wire-format.md" in message and "'flow-map-04'" in message
    assert "flow-map-04" not in set(edges["mapping_id"])
    assert len(edges) == 21


def test_edges_frame_never_guesses_a_missing_end():
    tree = mddframes.tree_frame([{"id": "a", "name": "A", "type": "T", "parentId": None}])
    mappings = [
        {"id": "m1", "sourceId": "a", "columnMappings": []},
        {"id": "m2", "sourceId": "a", "targetId": "b", "columnMappings": "x"},
        {"id": "m3", "sourceId": "a", "targetId": "b", "columnMappings": []},
    ]
    with pytest.warns(MappingShapeWarning, match="2 mapping"):
        frame = edges_frame(tree, mappings)
    assert frame["mapping_id"].tolist() == ["m3"]  # an element-level edge
    assert frame["source_column"].isna().all() and frame["target_name"].isna().all()


def test_the_warehouse_lineage_is_acyclic_and_reaches_sources_from_a_mart(client):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lineage = Lineage(client.read_lineage("DWH", progress=False))
    assert lineage.find_cycles().empty
    tree = client.read_tree("DWH")
    marts = tree[tree["path"].str.startswith("Marts/") & tree["mapping_id"].notna()]
    hops = []
    for mart in marts["id"]:
        found = lineage.upstream(mart).to_frame()
        hops += found.loc[found["element_type"] == "SOURCE_TABLE", "depth"].tolist()
    assert len(marts) >= 5 and min(hops) == 3  # mart <- satellite <- stage <- source


@pytest.mark.parametrize("dialect", ["snake-case", "spring-page"])
def test_dialects_give_the_same_lineage(edges, dialect):
    with serve(dialect=dialect) as emu, mddframes.Client.from_emulator(emu) as other:
        seen = other.read_lineage("FLOW", progress=False)
    key = ["mapping_id", "target_column"]
    assert (
        seen.sort_values(key)
        .reset_index(drop=True)
        .equals(edges.sort_values(key).reset_index(drop=True))
    )


def test_search_finds_names_cells_and_mapping_columns(client):
    hits = client.search("FLOW", "customer", progress=False)
    assert set(hits["where"]) == {"element", "mapping", "table"} - {"table"} | {"element"}
    names = hits[hits["where"] == "element"]
    assert set(names["element_name"]) == {"shop_customers", "stg_customers", "customer_value",
                                          "customer_score", "sales_by_customer"}  # fmt: skip
    used = client.search("FLOW", "customer_no", in_=("mappings",), progress=False)
    assert set(used["column"]) == {"source", "target", "transformation"}
    assert set(used["object_id"]) == {f"flow-map-0{i}" for i in range(1, 9)} - {"flow-map-04"}
    cell = client.search("FLOW", re.compile(r"^user2@"), in_="tables", progress=False)
    assert cell[["where", "element_name", "column", "row", "value"]].values.tolist() == [
        ["table", "shop_customers", "email", 1, "user2@example.com"]
    ]


def test_search_refuses_an_empty_text_and_an_unknown_place(client):
    with pytest.raises(InvalidArgumentError, match="non-empty text"):
        client.search("FLOW", "")
    with pytest.raises(InvalidArgumentError, match="names, tables, mappings"):
        client.search("FLOW", "x", in_=("cells",))
    assert PLACES == ("names", "tables", "mappings")


def test_search_without_hits_is_an_empty_frame_of_the_same_columns(client):
    hits = client.search("FLOW", "no such text anywhere", progress=False)
    assert hits.empty and list(hits.columns)[:3] == ["where", "element_id", "element_name"]
