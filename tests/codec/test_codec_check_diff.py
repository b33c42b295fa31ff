"""Unit tests of the completeness check, the diff, dtypes and value conversion (no server)."""

from __future__ import annotations

import copy
import decimal
import json

import numpy as np
import pandas as pd
import pytest

from mddframes import DataShapeError
from mddframes.codec import ABSENT, check_payload, diff_payloads, from_payload, overlay, to_payload
from mddframes.codec.dtypes import column_array, type_family
from mddframes.codec.values import format_timestamp, json_equal, to_json_value


def table(rows, columns=None, **envelope):
    columns = columns if columns is not None else [
        {"name": "id", "dataType": "VARCHAR", "nullable": False, "primaryKey": True},
        {"name": "qty", "dataType": "INTEGER", "nullable": False},
        {"name": "price", "dataType": "DOUBLE", "nullable": True},
        {"name": "flag", "dataType": "BOOLEAN", "nullable": True},
        {"name": "extra", "dataType": "JSON", "nullable": True},
    ]  # fmt: skip
    return {"id": "T1", "name": "t", **envelope,
            "metadata": {"description": "d", "columns": columns}, "data": rows}  # fmt: skip


ROWS = [
    {"id": "001", "qty": 1, "price": 0.5, "flag": True, "extra": {"a": [1]}},
    {"id": "002", "qty": 2, "price": None, "flag": False},
    {"qty": 3, "id": "003", "extra": [1, 2]},
]


def problems(report):
    return [(r["problem"], r["row"], r["column"]) for r in report.frame.to_dict("records")]


def test_an_unchanged_payload_has_no_problem():
    current = table(copy.deepcopy(ROWS))
    report = check_payload(copy.deepcopy(current), current)
    assert report.ok and len(report) == 0
    assert "ok" in repr(report) and "Completeness check: ok" in report._repr_html_()


def test_envelope_keys_and_metadata_keys_must_stay():
    current = table(copy.deepcopy(ROWS), structureId="S1")
    new = copy.deepcopy(current)
    del new["structureId"]
    del new["metadata"]["description"]
    report = check_payload(new, current)
    assert not report.ok
    assert ("envelope key missing", None, "structureId") in problems(report)
    assert ("envelope key missing", None, "metadata.description") in problems(report)
    rowless = {k: v for k, v in current.items() if k != "data"}
    assert ("envelope key missing", None, "data") in problems(check_payload(rowless, current))


def test_declared_and_undeclared_columns_dropped():
    current = table([{**r, "legacy": "x"} for r in copy.deepcopy(ROWS)])
    new = copy.deepcopy(current)
    for row in new["data"]:
        row.pop("price", None)
        row.pop("legacy")
    found = problems(check_payload(new, current))
    assert ("declared column missing", None, "price") in found
    assert ("column dropped", None, "legacy") in found
    relaxed = problems(check_payload(new, current, allow_deletes=True))
    assert ("declared column missing", None, "price") in relaxed
    assert ("column dropped", None, "legacy") not in relaxed


def test_deleted_rows_are_errors_unless_allowed_and_matched_by_key():
    current = table(copy.deepcopy(ROWS))
    new = copy.deepcopy(current)
    del new["data"][1]  # no origin given: rows are matched by the primary key
    report = check_payload(new, current, object_id="T1")
    assert problems(report) == [("row deleted", 1, None)]
    assert report.errors.iloc[0]["old"] == {"id": "002"}
    assert report.errors.iloc[0]["table"] == "T1"
    assert check_payload(new, current, allow_deletes=True).ok


def test_duplicate_keys_type_drift_nan_and_removed_cells():
    current = table(copy.deepcopy(ROWS))
    new = copy.deepcopy(current)
    new["data"][1]["id"] = "001"  # duplicate of row 0
    new["data"][0]["qty"] = 1.5  # int turned float
    new["data"][0]["flag"] = 1  # bool turned number
    new["data"][0]["extra"] = "flat"  # nested turned scalar
    new["data"][2]["qty"] = float("nan")
    del new["data"][2]["extra"]  # a cell removed from a kept row
    labels = ["r0", "r1", "r2"]
    report = check_payload(new, current, origin=[0, 1, 2], labels=labels)
    found = problems(report)
    assert ("duplicate primary key", "r1", "id") in found
    assert ("duplicate primary key", "r0", "id") in found  # both rows were edited
    assert ("type drift: integer turned float", "r0", "qty") in found
    assert ("type drift: boolean turned integer", "r0", "flag") in found
    assert ("type drift: object turned string", "r0", "extra") in found
    assert ("NaN or infinity", "r2", "qty") in found
    assert ("cell removed", "r2", "extra") in found
    assert report.errors.shape[0] == len(found)
    summary = report.summarize(limit=2)
    assert "T1" in summary and "and 6 more" in summary


def test_float_to_int_is_no_drift_and_new_rows_are_checked_against_the_column():
    current = table(copy.deepcopy(ROWS))
    new = copy.deepcopy(current)
    new["data"][0]["price"] = 2  # float -> integer loses nothing
    new["data"].append({"id": 4, "qty": 4})  # an id turned number in a new row
    report = check_payload(new, current, origin=[0, 1, 2, None], labels=[0, 1, 2, 9])
    found = problems(report)
    assert found == [("type drift: column holds string, got integer", 9, "id")]


def test_warnings_undeclared_columns_and_nulls_in_non_nullable_columns():
    current = table(copy.deepcopy(ROWS))
    new = copy.deepcopy(current)
    new["data"][1]["qty"] = None
    new["data"].append({"id": "004", "note": "new column"})
    report = check_payload(new, current, origin=[0, 1, 2, None])
    assert report.ok
    warnings = problems(report)
    assert ("column not declared in the metadata", None, "note") in warnings
    assert ("null in non-nullable column", 1, "qty") in warnings
    assert ("null in non-nullable column", "new[3]", "qty") in warnings
    assert set(report.warnings["level"]) == {"warning"}


def test_diff_lists_changed_cells_added_and_deleted_rows_and_the_envelope():
    old = table(copy.deepcopy(ROWS))
    new = copy.deepcopy(old)
    new["name"] = "renamed"
    new["data"][0]["qty"] = 10
    new["data"][0]["price"] = 0.5
    del new["data"][1]
    new["data"].append({"id": "009", "qty": 9})
    diff = diff_payloads(old, new)
    assert diff.changed.values.tolist() == [[0, "qty", 1, 10]]
    assert list(diff.deleted.index) == [1] and diff.deleted.loc[1, "id"] == "002"
    assert diff.added.iloc[0].to_dict() == {"id": "009", "qty": 9}
    assert diff.envelope.values.tolist() == [["name", "t", "renamed"]]
    text = diff.summary
    assert "1 cell(s) changed" in text and "1 row(s) added" in text and "deleted (1)" in text
    html = diff._repr_html_()
    assert "#ffec99" in html and "#d3f9d8" in html and "#ffc9c9" in html and "renamed" in html
    long = diff.to_frame()
    assert sorted(long["change"]) == ["added", "changed", "deleted", "envelope"]


def test_diff_counts_a_type_change_and_an_absent_key():
    old = table([{"id": "1", "qty": 1}])
    new = table([{"id": "1", "qty": 1.0, "flag": None}])
    diff = diff_payloads(old, new)
    assert diff.changed.values.tolist() == [[0, "qty", 1, 1.0], [0, "flag", ABSENT, None]]
    assert diff_payloads(old, copy.deepcopy(old)).empty


def test_overlay_refuses_frames_it_cannot_place():
    payload = table(copy.deepcopy(ROWS))
    frame = from_payload(payload)
    with pytest.raises(DataShapeError, match="duplicate index labels"):
        to_payload(pd.concat([frame, frame.iloc[:1]]), payload)
    with pytest.raises(DataShapeError, match="column names must be strings"):
        to_payload(frame.rename(columns={"qty": 5}), payload)
    with pytest.raises(DataShapeError, match="no rows"):
        to_payload(frame, {"id": "T1"})
    with pytest.raises(DataShapeError, match="row 1 of 'data' is a list"):
        from_payload({"data": [{}, [1]]})
    bad = frame.astype({"extra": object})
    bad.loc[0, "extra"] = object()
    with pytest.raises(DataShapeError, match="column 'extra'|cannot write"):
        to_payload(bad, payload)


def test_overlay_keeps_rows_positions_and_dropped_columns_remove_keys():
    payload = table(copy.deepcopy(ROWS))
    frame = from_payload(payload).drop(columns=["flag"]).sort_values("id", ascending=False)
    result = overlay(frame, payload)
    assert result.origin == [0, 1, 2]  # original order, whatever the frame's order
    assert [("flag" in r) for r in result.payload["data"]] == [False, False, False]
    assert result.payload["data"][2] is payload["data"][2]  # never had the key: untouched


@pytest.mark.parametrize(
    ("data_type", "family"),
    [("VARCHAR(20)", "string"), ("decimal(10, 2)", "decimal"), ("BIGINT", "integer"),
     ("timestamp with time zone", "datetime"), ("Date", "date"), ("JSONB", "json"),
     ("GEOMETRY", None), (None, None)],
)  # fmt: skip
def test_type_families(data_type, family):
    assert type_family(data_type) == family


def test_declared_types_apply_only_when_every_value_fits():
    assert str(column_array([1, None, 3], "INTEGER").dtype) == "Int64"
    assert column_array([1, "x"], "INTEGER").dtype == object  # does not fit: inferred
    assert str(column_array(["007", None], "INTEGER").dtype) == "string"  # ids stay text
    assert str(column_array(["1.50", "2"], "DECIMAL").dtype) == "string"
    assert str(column_array([1, 2.5], "DECIMAL").dtype) == "Float64"
    assert column_array([2**64, 1], "BIGINT").dtype == object
    assert column_array([2**64, 1], "BIGINT")[0] == 2**64
    assert column_array([2**53 + 1, 0.5], None).dtype == object  # a float would round it
    assert str(column_array([True, None], None).dtype) == "boolean"
    assert column_array([True, 1], None).dtype == object  # never a bool turned number
    assert column_array([[1], [2]], None).shape == (2,)  # lists stay values, not an axis
    only_strings = from_payload(table([{"extra": "s"}], [{"name": "extra", "dataType": "JSON"}]))
    assert only_strings["extra"].dtype == object  # a JSON column still takes lists and dicts
    assert str(column_array(["", None], "DATE").dtype) == "string"  # "" is not NaT
    dates = column_array(["2024-01-05", "bad"], "DATE")
    assert str(dates.dtype) == "string"
    mixed = column_array(["2024-01-05T10:00:00Z", "2024-01-05T11:00:00+01:00"], "TIMESTAMP")
    assert str(mixed.dtype).startswith("datetime64") and mixed[0] == mixed[1]
    naive_and_aware = column_array(["2024-01-05T10:00:00", "2024-01-05T10:00:00Z"], "TIMESTAMP")
    assert str(naive_and_aware.dtype) == "string"


def test_values_go_back_to_json_in_their_original_form():
    ts = pd.Timestamp("2024-03-01T07:00:00.5Z")
    assert format_timestamp(ts, "2020-01-01T00:00:00+01:00") == "2024-03-01T08:00:00.5+01:00"
    assert format_timestamp(pd.Timestamp("2024-03-01"), "2020-01-01") == "2024-03-01"
    assert to_json_value(np.int64(5)) == 5 and type(to_json_value(np.int64(5))) is int
    assert type(to_json_value(np.float64(5.0), template=1)) is int
    assert type(to_json_value(np.float64(5.0), template=1.5)) is float
    assert to_json_value(1e300, template=1) == 1e300  # never a 300-digit int
    assert to_json_value(decimal.Decimal("12.50"), template="1.00") == "12.50"
    assert to_json_value(pd.NA) is None and to_json_value(float("nan")) is None
    assert to_json_value((1, np.int64(2))) == [1, 2]
    assert json.dumps(to_json_value({"a": np.bool_(True)})) == '{"a": true}'
    assert json_equal(1, 1.0) and not json_equal(True, 1) and not json_equal("1", 1)
    assert json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]})
