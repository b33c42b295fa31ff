"""Structures, object types, packages and raw data as frames, against the emulator
(and the pure *_frame helpers on the shapes the emulator does not serve)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from mddframes.bulk import PartialFailureWarning
from mddframes.errors import DataShapeError, InvalidArgumentError, NotFoundError
from mddframes.frames import (
    object_types_frame,
    packages_frame,
    raw_data_frame,
    read_structures,
    structures_frame,
)
from mddframes.frames.structures import structure_record

# --- structures --------------------------------------------------------------------------


def test_read_structure_flattens_attributes_with_dots(client):
    raw = client.api.get_structure("dwh-0010")
    series = client.read_structure("dwh-0010")
    assert series.name == "dwh-0010"
    assert series["id"] == "dwh-0010"
    assert series["parent_id"] == raw["parentId"]
    assert series["attributes.schema"] == raw["attributes"]["schema"]
    connection = raw["attributes"]["sourceSystem"]["connection"]
    assert series["attributes.sourceSystem.connection.port"] == connection["port"]
    assert isinstance(series["attributes.sourceSystem.connection.port"], int)
    assert series["attributes.tags"] == raw["attributes"]["tags"]
    assert "attributes" not in series.index


def test_read_structure_of_an_unknown_id_is_not_found(client):
    with pytest.raises(NotFoundError):
        client.read_structure("dwh-9999")


def test_read_structures_one_row_per_id_in_order(client):
    ids = client.read_tree("DWH")["id"].tolist()[:30]
    frame = client.read_structures(list(reversed(ids)), progress=False)
    assert frame["id"].tolist() == list(reversed(ids))
    assert list(frame.columns[:4]) == ["id", "name", "type", "parent_id"]
    assert str(frame["id"].dtype) == "string"
    assert str(frame["version"].dtype) == "Int64"
    assert str(frame["deployed"].dtype) == "boolean"
    assert str(frame["modified_at"].dtype).startswith("datetime64")
    one = client.read_structure(ids[5])
    row = frame.set_index("id").loc[ids[5]]
    assert row["attributes.description"] == one["attributes.description"]
    assert frame.attrs["failures"] == []


def test_read_structures_skip_reports_the_missing_id(client):
    with pytest.warns(PartialFailureWarning, match="'dwh-9999'"):
        frame = read_structures(client.api, ["dwh-0001", "dwh-9999", "dwh-0002"], errors="skip",
                                progress=False)  # fmt: skip
    assert frame["id"].tolist() == ["dwh-0001", "dwh-0002"]
    (failure,) = frame.attrs["failures"]
    assert failure["id"] == "dwh-9999"
    assert failure["error_type"] == "NotFoundError"
    assert failure["status"] == 404


def test_read_structures_raise_stops_at_the_missing_id(client):
    with pytest.raises(NotFoundError):
        client.read_structures(["dwh-0001", "dwh-9999"], progress=False)


def test_read_structures_refuses_a_single_string(client):
    with pytest.raises(InvalidArgumentError, match="not the single string"):
        client.read_structures("dwh-0001")


def test_structure_record_keeps_attribute_names_and_snake_cases_fields():
    record = structure_record({"parentId": "p", "attributes": {"loadType": "FULL", "x": {}}})
    assert record == {"parent_id": "p", "attributes.loadType": "FULL", "attributes.x": {}}
    with pytest.raises(DataShapeError, match="expected an object"):
        structure_record(["not", "an", "element"])


def test_structures_frame_of_nothing_has_the_leading_columns():
    assert list(structures_frame([]).columns) == ["id", "name", "type", "parent_id"]


# --- object types ------------------------------------------------------------------------


def test_read_object_types(client):
    raw = client.api.get_object_types()
    frame = client.read_object_types()
    assert frame["id"].tolist() == [o["id"] for o in raw]
    assert list(frame.columns[:5]) == ["id", "name", "description", "file_extension",
                                       "element_types"]  # fmt: skip
    assert frame["element_types"].tolist() == [o["elementTypes"] for o in raw]
    assert str(frame["file_extension"].dtype) == "string"
    assert "template" not in frame.columns  # the emulator never serves it


def test_object_types_frame_under_an_envelope_with_extra_fields():
    frame = object_types_frame({"content": [{"id": "x", "name": "X", "templateVersion": 3}]})
    assert frame["template_version"].tolist() == [3]
    assert frame["element_types"].isna().all() and frame["file_extension"].isna().all()


# --- packages ----------------------------------------------------------------------------


def test_read_packages_lists_open_packages_with_counts(client, emu):
    raw = client.api.list_deployment_packages("DWH")
    frame = client.read_packages("DWH")
    assert frame["name"].tolist() == [p["name"] for p in raw]
    assert frame["structure_ids"].tolist() == [p["structureIds"] for p in raw]
    assert frame["n_structures"].tolist() == [len(p["structureIds"]) for p in raw]
    assert str(frame["n_structures"].dtype) == "Int64"
    assert str(frame["created_at"].dtype).startswith("datetime64")
    assert set(frame["status"]) == {"OPEN"}
    closed = frame["name"].iloc[0]
    emu.close_package("DWH", closed)
    assert closed not in client.read_packages("DWH")["name"].tolist()


def test_packages_frame_of_an_empty_listing_has_the_columns():
    frame = packages_frame([])
    assert list(frame.columns) == ["name", "description", "status", "created_at",
                                   "structure_ids", "n_structures"]  # fmt: skip
    assert frame.empty


def test_read_packages_refuses_a_bad_system(client):
    with pytest.raises(InvalidArgumentError, match="system"):
        client.read_packages(None)


# --- raw data ----------------------------------------------------------------------------


def _resolve(document, path: str):
    """Follow a leaf path (``a.b[0].c``) through a JSON document: an independent oracle."""
    node = document
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


def _count_leaves(value) -> int:
    if isinstance(value, dict) and value:
        return sum(_count_leaves(v) for v in value.values())
    if isinstance(value, list) and value:
        return sum(_count_leaves(v) for v in value)
    return 1


def test_read_raw_data_as_json_and_as_a_leaf_frame(client):
    raw = client.read_raw_data("dwh-0010")
    assert raw == client.api.get_raw_data("dwh-0010")
    assert isinstance(raw, dict)
    frame = client.read_raw_data("dwh-0010", flatten=True)
    assert list(frame.columns) == ["path", "value", "type"]
    assert len(frame) == _count_leaves(raw) > 10
    assert frame["path"].is_unique
    for path, value in zip(frame["path"], frame["value"], strict=True):
        resolved = _resolve(raw, path)
        assert resolved == value and type(resolved) is type(value), path
    assert "dwh-0010" in frame["value"].tolist()


def test_raw_data_frame_keeps_every_leaf_and_its_type():
    payload = {"a": {"b": 1, "c": [True, None, 2**70]}, "e": {}, "f": [], "g": 0.5}
    frame = raw_data_frame(payload)
    assert frame["path"].tolist() == ["a.b", "a.c[0]", "a.c[1]", "a.c[2]", "e", "f", "g"]
    assert frame["type"].tolist() == ["integer", "boolean", "null", "integer", "object", "array",
                                      "number"]  # fmt: skip
    assert frame["value"].iloc[3] == 2**70  # exact: object dtype
    assert frame["value"].iloc[4] == {} and frame["value"].iloc[5] == []


def test_raw_data_frame_of_a_deep_document_does_not_recurse():
    doc: dict = {}
    node = doc
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]
    node["leaf"] = 1
    frame = raw_data_frame(doc)
    assert len(frame) == 1 and frame["value"].iloc[0] == 1
    assert frame["path"].iloc[0].count(".") == 5000


def test_frames_of_lists_refuse_non_lists_by_name():
    with pytest.raises(DataShapeError, match="packages"):
        packages_frame({"unexpected": 1})
    assert isinstance(raw_data_frame([]), pd.DataFrame)
