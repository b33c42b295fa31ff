"""create_child / create_children against the emulator."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from mddframes.bulk import PartialFailureWarning
from mddframes.emulator.state import sample_dataset
from mddframes.errors import DataShapeError, InvalidArgumentError, NotFoundError


@pytest.fixture(scope="module")
def root_id():
    """An existing element to create children under."""
    return sample_dataset().elements[0]["id"]


def test_create_child_returns_the_new_element(client, root_id):
    element = client.create_child(root_id, "FOLDER", "Staging", owner="data team", rank=3)
    assert isinstance(element, pd.Series)
    assert element["parentId"] == root_id and element["type"] == "FOLDER"
    assert element["name"] == "Staging"
    assert element["attributes.owner"] == "data team" and element["attributes.rank"] == 3
    stored = client.api.get_structure(element["id"])
    assert stored["attributes"] == {"owner": "data team", "rank": 3}


def test_create_child_omits_missing_attributes_and_refuses_an_empty_name(client, root_id):
    element = client.create_child(root_id, "FOLDER", "x", note=None, score=float("nan"))
    assert client.api.get_structure(element["id"])["attributes"] == {}
    with pytest.raises(InvalidArgumentError, match="name is empty"):
        client.create_child(root_id, "FOLDER", "  ")


def test_create_children_with_nested_new_parents(client, emu, root_id):
    frame = pd.DataFrame(
        {
            # listed children first on purpose: the order must come from the keys
            "key": ["col", None, "tbl", "area"],
            "parent": ["tbl", "area", "area", root_id],
            "type": ["FOLDER", "VIEW", "SOURCE_TABLE", "FOLDER"],
            "name": ["columns", "v_orders", "orders", "Sales"],
            "schema": [pd.NA, "rpt", "sales", pd.NA],
            "rows": pd.array([pd.NA, pd.NA, 120, pd.NA], dtype="Int64"),
        },
        index=["r1", "r2", "r3", "r4"],
    )
    emu.reset_counters()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PartialFailureWarning)
        result = client.create_children(frame, progress=False)
    assert result.index.tolist() == ["r1", "r2", "r3", "r4"]
    assert result["ok"].all() and (result["status"] == "created").all()
    assert emu.counters()["createChildStructure"] == 4
    ids = result["id"].to_dict()
    stored = {label: client.api.get_structure(i) for label, i in ids.items()}
    assert stored["r4"]["parentId"] == root_id
    assert stored["r3"]["parentId"] == ids["r4"] and stored["r2"]["parentId"] == ids["r4"]
    assert stored["r1"]["parentId"] == ids["r3"]
    assert result.loc["r1", "parent"] == ids["r3"]  # the resolved parent id is reported
    assert stored["r3"]["attributes"] == {"schema": "sales", "rows": 120}  # NA omitted, int kept
    assert stored["r1"]["attributes"] == {}


def test_create_children_stops_at_the_first_failure_and_says_what_was_created(client, emu, root_id):
    frame = pd.DataFrame(
        {
            "key": ["a", "b", None, None],
            "parent": [root_id, "a", "no-such-parent", "b"],
            "type": ["FOLDER", "FOLDER", "FOLDER", "FOLDER"],
            "name": ["A", "B", "orphan", "C"],
        }
    )
    emu.reset_counters()
    with pytest.warns(PartialFailureWarning, match="row 2 failed; 2 of 4"):
        result = client.create_children(frame, progress=False)
    assert result["status"].tolist() == ["created", "created", "failed", "not attempted"]
    assert result["ok"].tolist() == [True, True, False, False]
    assert "no-such-parent" in result.loc[2, "error"] and "404" in result.loc[2, "error"]
    assert "stopped after row 2 failed" in result.loc[3, "error"]
    assert pd.isna(result.loc[2, "id"]) and pd.isna(result.loc[3, "id"])
    assert emu.counters()["createChildStructure"] == 3  # the fourth row was never sent
    created_b = client.api.get_structure(result.loc[1, "id"])  # they really exist
    assert created_b["parentId"] == result.loc[0, "id"]


def test_create_children_refuses_a_bad_frame_before_sending_anything(client, emu, root_id):
    emu.reset_counters()
    cyclic = pd.DataFrame(
        {"key": ["a", "b"], "parent": ["b", "a"], "type": ["F", "F"], "name": ["x", "y"]}
    )
    with pytest.raises(DataShapeError, match="cycle"):
        client.create_children(cyclic, progress=False)
    unknown_key = pd.DataFrame(
        {"parent_key": ["ghost"], "parent": [root_id], "type": ["F"], "name": ["x"]}
    )
    with pytest.raises(DataShapeError, match="parent_key 'ghost'"):
        client.create_children(unknown_key, progress=False)
    assert emu.counters().get("createChildStructure", 0) == 0
    with pytest.raises(NotFoundError, match="nope"):
        client.create_child("nope", "FOLDER", "x")
