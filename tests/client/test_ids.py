"""One rule for the ids every bulk call takes (mddframes.ids.id_list)."""

from __future__ import annotations

import pandas as pd
import pytest

from mddframes import Client, DataShapeError, InvalidArgumentError
from mddframes.ids import id_list


def test_lists_series_index_and_frames_give_distinct_ids_in_order():
    assert id_list(["a", "b", "a"], what="ids") == ["a", "b"]
    assert id_list(pd.Series(["x", "x", "y"]), what="ids") == ["x", "y"]
    assert id_list(pd.Index(["z", "y"]), what="ids") == ["z", "y"]
    frame = pd.DataFrame({"name": ["n1", "n2"], "structure_id": ["s1", "s2"]})
    assert id_list(frame, what="ids") == ["s1", "s2"]


def test_ids_are_kept_exactly_as_given():
    assert id_list([" a", "a ", "a b", "..", "Zürich-Ω"], what="ids") == [
        " a",
        "a ",
        "a b",
        "..",
        "Zürich-Ω",
    ]


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ("one", "not the single string 'one'; wrap it in a list"),
        (["a", None], "entry 1 is missing"),
        (["a", float("nan")], "entry 1 is missing"),
        (["a", "b", "  "], "entry 2 is a blank id"),
        (["a", 7], "entry 1 is 7, a int; ids are strings"),
        (42, "must be a list of ids, got int"),
    ],
)
def test_bad_ids_are_refused_naming_the_entry(ids, message):
    with pytest.raises(InvalidArgumentError, match=message):
        id_list(ids, what="ids")


def test_a_frame_without_an_id_column_names_what_it_looked_for():
    with pytest.raises(DataShapeError, match=r"no id column \(looked for 'id', 'structure_id'"):
        id_list(pd.DataFrame({"name": ["a"]}), what="ids")


def test_bulk_calls_share_the_rule(client: Client, emu):
    """The same lone string is refused by a read, an export and a deployment, and
    nothing is sent."""
    before = emu.counters()
    for call in (
        lambda: client.read_tables("tbl-0001"),
        lambda: client.export_scripts("dwh-0010", "sql-ddl"),
        lambda: client.deploy_many("dwh-0010", "dep-1"),
        lambda: client.add_to_package("DWH", "release-2024.07", "dwh-0010"),
    ):
        with pytest.raises(InvalidArgumentError, match="not the single string"):
            call()
    after = emu.counters()
    assert {k: v for k, v in after.items() if v != before.get(k, 0)} == {}


def test_read_tables_takes_the_tree_frame_after_dropping_elements_without_tables(client):
    tree = client.read_tree("DWH")
    with pytest.raises(InvalidArgumentError, match="missing"):
        client.read_tables(tree.rename(columns={"id": "element_id"}))
    owners = tree.dropna(subset=["table_id"]).head(3)
    long = client.read_tables(owners, progress=False)
    assert list(dict.fromkeys(long["table_id"])) == owners["table_id"].tolist()
