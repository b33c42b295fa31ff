"""The tree loader: tree_frame on decoded JSON (every tolerated shape) and read_tree
against the emulator's sample data."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from mddframes.errors import DataShapeError, InvalidArgumentError, NotFoundError
from mddframes.frames.tree import LEADING_COLUMNS, TreeIntegrityWarning, tree_frame

FLAT = [
    {"id": "r", "name": "DWH", "type": "SYSTEM", "parentId": None, "systemName": "DWH",
     "version": 1, "deployed": True},
    {"id": "s1", "name": "core", "type": "SCHEMA", "parentId": "r", "systemName": "DWH",
     "version": 2, "deployed": False},
    {"id": "t1", "name": "customer", "type": "TABLE", "parentId": "s1", "systemName": "DWH",
     "version": None, "deployed": None, "tableId": "tab-1", "ownerTeam": "data"},
    {"id": "t2", "name": "orders", "type": "TABLE", "parentId": "s1", "systemName": "DWH",
     "version": 4, "deployed": True, "tableId": "tab-2"},
    {"id": "m1", "name": "load", "type": "MAPPING", "parentId": "r", "systemName": "DWH",
     "version": 1, "deployed": False, "mappingId": "map-1", "tags": ["a", "b"],
     "attributes": {"k": 1}},
]  # fmt: skip


def _by_id(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.set_index("id")


# --- pure: columns, dtypes, depth, path, n_children -------------------------------------


def test_leading_columns_then_every_other_field_in_snake_case():
    frame = tree_frame(FLAT)
    assert list(frame.columns[: len(LEADING_COLUMNS)]) == list(LEADING_COLUMNS)
    rest = list(frame.columns[len(LEADING_COLUMNS) :])
    assert rest == [
        "system_name", "version", "deployed", "table_id", "owner_team", "mapping_id",
        "tags", "attributes",
    ]  # fmt: skip
    assert len(frame) == len(FLAT)


def test_depth_path_and_child_counts():
    frame = _by_id(tree_frame(FLAT))
    assert frame["depth"].to_dict() == {"r": 0, "s1": 1, "t1": 2, "t2": 2, "m1": 1}
    assert frame.loc["t2", "path"] == "DWH/core/orders"
    assert frame.loc["m1", "path"] == "DWH/load"
    assert frame["n_children"].to_dict() == {"r": 2, "s1": 2, "t1": 0, "t2": 0, "m1": 0}


def test_dtypes_are_nullable_and_ids_stay_strings():
    frame = tree_frame(FLAT)
    expected = {
        "id": "string", "name": "string", "type": "string", "parent_id": "string",
        "depth": "Int64", "path": "string", "n_children": "Int64", "system_name": "string",
        "version": "Int64", "deployed": "boolean", "table_id": "string", "mapping_id": "string",
    }  # fmt: skip
    assert {c: str(frame[c].dtype) for c in expected} == expected
    assert frame["version"].isna().tolist() == [False, False, True, False, False]
    assert frame["deployed"].isna().tolist() == [False, False, True, False, False]


def test_nested_values_stay_nested():
    row = _by_id(tree_frame(FLAT)).loc["m1"]
    assert row["tags"] == ["a", "b"]
    assert row["attributes"] == {"k": 1}


def test_numeric_ids_become_strings_not_floats():
    payload = [{"id": 10, "name": "a", "parentId": None}, {"id": 11, "name": "b", "parentId": 10}]
    frame = tree_frame(payload)
    assert frame["id"].tolist() == ["10", "11"]
    assert frame["parent_id"].iloc[1] == "10"
    assert frame["depth"].tolist() == [0, 1]


def test_big_integer_fields_keep_every_digit():
    big = 2**60 + 1
    payload = [{"id": "a", "name": "a", "parentId": None, "checksum": big},
               {"id": "b", "name": "b", "parentId": "a", "checksum": None}]  # fmt: skip
    frame = tree_frame(payload)
    assert str(frame["checksum"].dtype) == "Int64"
    assert frame["checksum"].iloc[0] == big


def test_element_without_a_name_contributes_its_id_to_paths():
    payload = [{"id": "r", "name": "root", "parentId": None}, {"id": "x", "parentId": "r"},
               {"id": "y", "name": "leaf", "parentId": "x"}]  # fmt: skip
    frame = _by_id(tree_frame(payload))
    assert frame.loc["y", "path"] == "root/x/leaf"
    assert pd.isna(frame.loc["x", "name"])


def test_types_filter_keeps_whole_tree_paths_and_counts():
    frame = tree_frame(FLAT, types="TABLE")
    assert frame["id"].tolist() == ["t1", "t2"]
    assert frame["path"].tolist() == ["DWH/core/customer", "DWH/core/orders"]
    assert list(frame.index) == [0, 1]
    both = tree_frame(FLAT, types=["TABLE", "MAPPING"])
    assert set(both["type"]) == {"TABLE", "MAPPING"}
    assert tree_frame(FLAT, types=[]).empty


def test_types_must_be_names():
    with pytest.raises(InvalidArgumentError, match="types must"):
        tree_frame(FLAT, types=[1])
    with pytest.raises(InvalidArgumentError, match="types must"):
        tree_frame(FLAT, types=5)


def test_empty_tree_has_the_leading_columns():
    frame = tree_frame([])
    assert list(frame.columns) == list(LEADING_COLUMNS)
    assert frame.empty


# --- pure: the tolerated input shapes --------------------------------------------------


@pytest.mark.parametrize("key", ["content", "items", "data", "elements", "result", "results",
                                 "structures"])  # fmt: skip
def test_envelope_keys(key):
    frame = tree_frame({key: FLAT, "totalElements": 5})
    assert frame["id"].tolist() == [e["id"] for e in FLAT]
    assert frame["depth"].tolist() == [0, 1, 2, 2, 1]


def test_nested_children_shape_gives_the_same_tree_as_the_flat_one():
    nested = [
        {"id": "r", "name": "DWH", "type": "SYSTEM", "children": [
            {"id": "s1", "name": "core", "type": "SCHEMA", "children": [
                {"id": "t1", "name": "customer", "type": "TABLE", "children": []},
                {"id": "t2", "name": "orders", "type": "TABLE"},
            ]},
            {"id": "m1", "name": "load", "type": "MAPPING"},
        ]},
    ]  # fmt: skip
    frame = _by_id(tree_frame({"data": nested}))
    flat = _by_id(tree_frame(FLAT))
    assert list(frame.index) == ["r", "s1", "t1", "t2", "m1"]  # pre-order
    for column in ("parent_id", "depth", "path", "n_children"):
        assert frame[column].to_dict() == flat[column].to_dict(), column
    assert "children" not in frame.columns


def test_single_root_object_with_children():
    frame = tree_frame({"id": "r", "name": "R", "children": [{"id": "c", "name": "C"}]})
    assert frame["path"].tolist() == ["R", "R/C"]


def test_snake_case_ids_are_read_like_camel_case():
    snake = [{"id": e["id"], "name": e["name"], "type": e["type"], "parent_id": e["parentId"],
              "system_name": e["systemName"]} for e in FLAT]  # fmt: skip
    frame = _by_id(tree_frame(snake))
    assert frame["depth"].to_dict() == _by_id(tree_frame(FLAT))["depth"].to_dict()
    assert "system_name" in frame.columns


def test_mixed_camel_and_snake_parent_fields_are_merged():
    payload = [{"id": "r", "name": "r", "parentId": None}, {"id": "a", "name": "a", "parentId": "r"},
               {"id": "b", "name": "b", "parent_id": "a"}]  # fmt: skip
    frame = _by_id(tree_frame(payload))
    assert frame.loc["a", "parent_id"] == "r"
    assert frame.loc["b", "parent_id"] == "a"
    assert list(frame.columns).count("parent_id") == 1
    assert frame.loc["b", "depth"] == 2


def test_structure_id_as_the_id_field():
    payload = [
        {"structureId": "r", "name": "r"},
        {"structureId": "c", "name": "c", "parentId": "r"},
    ]
    frame = tree_frame(payload)
    assert frame["id"].tolist() == ["r", "c"]
    assert frame["depth"].tolist() == [0, 1]


def test_decoded_from_real_json_text():
    frame = tree_frame(json.loads(json.dumps({"content": FLAT})))
    assert frame["n_children"].sum() == len(FLAT) - 1


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        ({"total": 3}, "expected a list for the tree.*total"),
        ("not a tree", "expected a list for the tree; got str"),
        ([{"id": "a"}, 7], "entry 1 of the tree is a int"),
        ([{"name": "no id"}], "no element id field"),
        ([{"id": "a"}, {"id": None, "name": "x"}], r"have no id \(entries \[1\]\)"),
    ],
)
def test_unreadable_shapes_say_what_is_wrong(payload, match):
    with pytest.raises(DataShapeError, match=match):
        tree_frame(payload)


# --- pure: orphans and cycles ----------------------------------------------------------


def test_orphans_are_kept_with_missing_depth_and_named_in_a_warning():
    payload = FLAT + [
        {"id": "o1", "name": "lost", "parentId": "nowhere"},
        {"id": "o2", "name": "below-lost", "parentId": "o1"},
    ]
    with pytest.warns(
        TreeIntegrityWarning, match=r"'o1' \(parent 'nowhere'\).*1 element\(s\) below"
    ):
        frame = _by_id(tree_frame(payload))
    assert len(frame) == len(payload)
    assert frame.loc[["o1", "o2"], "depth"].isna().all()
    assert frame.loc[["o1", "o2"], "path"].isna().all()
    assert frame.loc["o1", "n_children"] == 1
    assert frame.loc["t1", "depth"] == 2  # the rest of the tree is unaffected


def test_cycles_end_and_are_named():
    payload = [
        {"id": "r", "name": "r", "parentId": None},
        {"id": "a", "name": "a", "parentId": "b"},
        {"id": "b", "name": "b", "parentId": "a"},
        {"id": "under", "name": "u", "parentId": "b"},
        {"id": "self", "name": "s", "parentId": "self"},
    ]
    with pytest.warns(TreeIntegrityWarning) as record:
        frame = _by_id(tree_frame(payload))
    message = str(record[0].message)
    assert "3 element(s) in parent cycles: 'a', 'b', 'self'" in message
    assert "1 element(s) below them" in message
    assert frame["depth"].isna().to_dict() == {
        "r": False, "a": True, "b": True, "under": True, "self": True,
    }  # fmt: skip


def test_a_long_cycle_terminates():
    n = 5000
    payload = [{"id": f"e{i}", "name": f"n{i}", "parentId": f"e{(i + 1) % n}"} for i in range(n)]
    with pytest.warns(TreeIntegrityWarning, match=f"{n} element\\(s\\) in parent cycles"):
        frame = tree_frame(payload)
    assert frame["depth"].isna().all()


def test_a_deep_chain_is_walked_without_recursion():
    n = 3000
    payload = [{"id": f"e{i}", "name": "x", "parentId": f"e{i - 1}" if i else None}
               for i in range(n)]  # fmt: skip
    frame = tree_frame(payload)
    assert frame["depth"].iloc[-1] == n - 1
    assert frame["path"].iloc[-1] == "/".join(["x"] * n)


def test_duplicate_ids_warn_and_children_attach_to_the_first():
    payload = [{"id": "r", "name": "r"}, {"id": "r", "name": "again"},
               {"id": "c", "name": "c", "parentId": "r"}]  # fmt: skip
    with pytest.warns(TreeIntegrityWarning, match="appear more than once.*'r'"):
        frame = tree_frame(payload)
    assert frame["path"].tolist() == ["r", "again", "r/c"]
    assert frame["n_children"].tolist() == [1, 0, 0]


def test_a_clean_tree_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree_frame(FLAT)


# --- against the emulator: the sample DWH ----------------------------------------------


def _naive_walk(entries: list[dict]) -> dict[str, tuple[int, str]]:
    """An independent oracle: each element's depth and path by walking up its parents."""
    by_id = {e["id"]: e for e in entries}
    out = {}
    for entry in entries:
        names, node = [], entry
        while node is not None:
            names.append(node["name"])
            node = by_id.get(node["parentId"]) if node["parentId"] is not None else None
        out[entry["id"]] = (len(names) - 1, "/".join(reversed(names)))
    return out


def test_read_tree_of_the_sample_dwh(client):
    raw = client.api.get_tree("DWH")
    frame = client.read_tree("DWH")
    assert len(frame) == len(raw) == 155
    assert frame["id"].tolist() == [e["id"] for e in raw]  # the service's order is kept
    expected = _naive_walk(raw)
    assert (
        dict(zip(frame["id"], zip(frame["depth"], frame["path"], strict=True), strict=True))
        == expected
    )
    children = pd.Series([e["parentId"] for e in raw]).value_counts()
    counts = _by_id(frame)["n_children"]
    assert all(counts[i] == children.get(i, 0) for i in counts.index)
    assert frame["depth"].min() == 0 and frame["depth"].max() == 3
    assert (frame["depth"] == 0).sum() == sum(e["parentId"] is None for e in raw)
    assert frame["depth"].notna().all()


def test_read_tree_columns_and_dtypes_on_the_service(client):
    frame = client.read_tree("DWH")
    assert list(frame.columns[:7]) == list(LEADING_COLUMNS)
    for column in ("system_name", "version", "deployed", "table_id", "mapping_id"):
        assert column in frame.columns
    assert str(frame["version"].dtype) == "Int64"
    assert str(frame["deployed"].dtype) == "boolean"
    assert str(frame["table_id"].dtype) == "string"
    assert set(frame["system_name"]) == {"DWH"}
    owners = frame[frame["type"].isin(["SOURCE_TABLE", "STAGE_TABLE", "HUB", "LINK", "SATELLITE",
                                       "REFERENCE_TABLE"])]  # fmt: skip
    assert owners["table_id"].notna().all()


def test_read_tree_types_filter_on_the_service(client):
    whole = client.read_tree("DWH")
    hubs = client.read_tree("DWH", types="HUB")
    assert len(hubs) == (whole["type"] == "HUB").sum() > 0
    assert set(hubs["type"]) == {"HUB"}
    assert set(hubs["depth"]) == set(whole.loc[whole["type"] == "HUB", "depth"])
    assert hubs["path"].tolist() == whole.loc[whole["type"] == "HUB", "path"].tolist()
    two = client.read_tree("DWH", types=["HUB", "LINK"])
    assert set(two["type"]) == {"HUB", "LINK"}


def test_read_tree_keeps_awkward_names_and_ids(client):
    frame = _by_id(client.read_tree("LAB"))
    assert frame.loc["tbl/with/slash", "path"].endswith("/tbl/with/slash")
    assert frame.loc["Zürich-Ω", "depth"] == 2
    assert frame.loc["..", "name"] == ".."


def test_read_tree_of_an_unknown_system_names_it(client):
    with pytest.raises(NotFoundError) as info:
        client.read_tree("NO_SUCH_SYSTEM")
    assert "NO_SUCH_SYSTEM" in str(info.value)


def test_read_tree_refuses_a_bad_system_argument(client):
    with pytest.raises(InvalidArgumentError, match="system"):
        client.read_tree("")
