"""The lineage graph as DOT, Mermaid and a matplotlib drawing laid out by depth."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from mddframes import Lineage, to_dot, to_mermaid
from mddframes.lineage import draw, layers


@pytest.fixture
def lineage(client):
    return Lineage(client.read_lineage("FLOW", progress=False))


def test_layers_put_sources_first_and_a_cycle_on_one_depth(lineage):
    depth = layers(lineage.elements)
    assert depth["flow-01"] == depth["flow-02"] == 0
    assert depth["flow-04"] == 1 and depth["flow-06"] == 2 and depth["flow-08"] == 3
    assert depth["flow-03"] == depth["flow-05"] == depth["flow-09"]  # the cycle


def test_dot_and_mermaid_of_a_whole_lineage_name_every_element_and_edge(lineage):
    dot = to_dot(lineage, name='the "flow"')
    assert dot.startswith('digraph "the \\"flow\\"" {')
    assert dot.count(" -> ") == lineage.elements.number_of_edges() == 8
    mermaid = to_mermaid(lineage)
    assert mermaid.count(" --> ") == 8
    for name in lineage.names.values():
        assert f'"{name}"' in dot and f'["{name}"]' in mermaid


def test_mermaid_keeps_quotes_in_labels_inside_the_label():
    edges = pd.DataFrame(
        [["m", "a", 'a"b', "T", "x", "b", "B", "T", "y", 'CONCAT("x", src.x)']],
        columns=[
            "mapping_id", "source_id", "source_name", "source_type", "source_column",
            "target_id", "target_name", "target_type", "target_column", "transformation",
        ],
    ).astype("string")  # fmt: skip
    text = to_mermaid(Lineage(edges).impact("a.x"))
    assert "#quot;x#quot;" in text and "a#quot;b.x" in text


def test_draw_lays_the_warehouse_out_by_depth_with_a_highlight(client):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    warehouse = Lineage(client.read_lineage("DWH", progress=False))
    mart = "dwh-0133"
    ax = draw(warehouse, highlight=warehouse.upstream(mart))
    labels = {t.get_text(): t for t in ax.texts}
    assert len(labels) == warehouse.elements.number_of_nodes()
    assert labels["dim_customer"].get_color() == "black"
    assert labels["ref_currency"].get_color() != "black"  # not upstream of the mart
    xs = {name: text.get_position()[0] for name, text in labels.items()}
    assert xs["dim_customer"] > xs["stg_crm_customer"] > xs["crm_customer"]
    plt.close(ax.figure)


def test_an_answers_dot_numbers_its_nodes_in_the_order_found_under_any_hash_seed(lineage, tmp_path):
    # a subgraph view iterates a set of nodes, whose order follows the hash seed; the
    # DOT of the same answer must not change from one run to the next
    found = lineage.impact("flow-02.amount")
    assert list(found.graph.nodes) == [found.start, *found.reached]
    script = (
        "import sys, pandas as pd; from mddframes import Lineage, to_dot; "
        "print(to_dot(Lineage(pd.read_pickle(sys.argv[1])).impact('flow-02.amount')))"
    )
    path = tmp_path / "edges.pkl"
    lineage.edges.to_pickle(path)
    texts = {
        subprocess.run(
            [sys.executable, "-c", script, str(path)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True, text=True, check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }  # fmt: skip
    assert texts == {to_dot(found) + "\n"}
