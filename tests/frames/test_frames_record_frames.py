"""Frames of JSON objects built through public pandas API only (no server)."""

from __future__ import annotations

import pandas as pd

from mddframes.codec.values import json_type
from mddframes.frames.record_frames import records_frame


def test_string_columns_take_edits_and_values_stay_exact():
    records = [{"id": f"a{i}", "n": i, "big": 2**64 + i, "ok": i % 2 == 0} for i in range(50)]
    del records[3]["id"]  # a gap: NA, not NaN, in a string column
    frame = records_frame(records)
    assert str(frame["id"].dtype) == "string" and frame["id"].isna().tolist()[3]
    assert str(frame["n"].dtype) == "Int64" and str(frame["ok"].dtype) == "boolean"
    assert frame["big"].tolist()[7] == 2**64 + 7  # beyond int64: exact Python ints
    frame.at[0, "id"] = "edited"  # the storage pandas handed over is writable
    frame.loc[3, "id"] = "filled"
    assert frame["id"].tolist()[:4] == ["edited", "a1", "a2", "filled"]
    assert records[0]["id"] == "a0"  # the records are not touched


def test_json_type_uses_json_schema_names():
    values = [None, True, 1, 1.5, "s", {}, [], pd.NA]
    assert [json_type(v) for v in values] == [
        "null", "boolean", "integer", "number", "string", "object", "array", "NAType",
    ]  # fmt: skip
