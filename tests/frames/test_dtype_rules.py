"""The dtype rule (codec/dtypes.py DTYPE_RULES) pinned: each declared type read full, empty
and all-null under both backends gives the dtype the rule's table says, over real HTTP."""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd
import pytest

from mddframes import DeclaredTypeWarning
from mddframes.codec.dtypes import DTYPE_RULES, rules_markdown

TABLE = "tbl-0001"

#: One column per rule row: (rule's declared type, the column's dataType, values that fit).
COLUMNS: list[tuple[str, str | None, list[Any]]] = [
    ("STRING", "VARCHAR(20)", ["a", "007"]),
    ("INTEGER", "INTEGER", [1, -2]),
    ("INTEGER", "BIGINT", [1, 2**62]),
    ("DOUBLE", "DOUBLE", [1.5, 2]),
    ("DECIMAL", "DECIMAL(10,2)", ["1.10", "-2.00"]),
    ("BOOLEAN", "BOOLEAN", [True, False]),
    ("DATE", "DATE", ["2024-01-02", "1999-12-31"]),
    ("TIMESTAMP", "TIMESTAMP", ["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123456+02:00"]),
    ("TIMESTAMP without zone", "TIMESTAMP_NTZ", ["2024-01-02T03:04:05", "2024-01-02"]),
    ("JSON", "JSON", [{"a": [1]}, [1, "x"]]),
    ("unknown type", "GEOMETRY", ["POINT(1 2)", "POINT(3 4)"]),
    ("undeclared key", None, ["L-1", "000777"]),
]
RULES = {rule.declared: rule for rule in DTYPE_RULES}
VARIANTS = ("full", "empty", "all null")


def _payload(base: dict[str, Any], variant: str) -> dict[str, Any]:
    names = [f"c{i}" for i in range(len(COLUMNS))]
    declared = [
        {"name": name, "dataType": data_type, "nullable": True, "primaryKey": False}
        for name, (_, data_type, _) in zip(names, COLUMNS, strict=True)
        if data_type is not None
    ]
    rows = [
        {name: values[i] for name, (_, _, values) in zip(names, COLUMNS, strict=True)}
        for i in range(2)
    ]
    if variant == "empty":
        rows = []
    elif variant == "all null":
        rows = [dict.fromkeys(row) for row in rows]
    return {**base, "metadata": {**base["metadata"], "columns": declared}, "data": rows}


@pytest.fixture(scope="module")
def dtypes_read(emulator) -> dict[tuple[str, str], pd.Series]:
    """Each variant's table read under each backend: its dtypes by column name."""
    from mddframes import Client

    emulator.reset()
    out = {}
    with Client.from_emulator(emulator) as client:
        base = client.api.get_table(TABLE)
        for variant in VARIANTS:
            client.api.put_table(TABLE, _payload(base, variant))
            for backend in ("numpy_nullable", "pyarrow"):
                with warnings.catch_warnings():
                    warnings.simplefilter("error", DeclaredTypeWarning)  # every value fits
                    frame = client.read_table(TABLE, dtype_backend=backend)
                out[variant, backend] = frame.dtypes
    emulator.reset()
    return out


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("backend", ["numpy_nullable", "pyarrow"])
@pytest.mark.parametrize(
    "position", range(len(COLUMNS)), ids=[c[1] or "undeclared" for c in COLUMNS]
)
def test_each_declared_type_gets_the_rules_dtype_full_empty_or_all_null(
    dtypes_read, variant, backend, position
):
    declared, _data_type, _values = COLUMNS[position]
    rule = RULES[declared]
    dtypes = dtypes_read[variant, backend]
    name = f"c{position}"
    if declared == "undeclared key" and variant == "empty":
        assert name not in dtypes  # a key no row has is no column
        return
    expected = rule.numpy_nullable if backend == "numpy_nullable" else rule.pyarrow
    assert str(dtypes[name]) == expected, (declared, variant, backend)


def test_every_row_of_the_rule_but_the_long_frames_is_pinned():
    pinned = {declared for declared, _, _ in COLUMNS}
    assert pinned == set(RULES) - {"long frame: a name declared with different types"}


def test_values_that_do_not_fit_warn_and_keep_every_value(client):
    base = client.api.get_table(TABLE)
    big = 2**70
    payload = {
        **base,
        "metadata": {**base["metadata"], "columns": [{"name": "n", "dataType": "BIGINT"}]},
        "data": [{"n": 1}, {"n": big}],
    }
    client.api.put_table(TABLE, payload)
    with pytest.warns(DeclaredTypeWarning, match="'n'.*BIGINT"):
        frame = client.read_table(TABLE)
    assert frame["n"].dtype == object and frame["n"].tolist() == [1, big]


def test_the_guide_shows_the_rule_table():
    # the docs build writes rules_markdown() where the reading page includes it
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "guide" / "reading.md").read_text("utf-8")
    assert "dtype-rules.md" in page
    for rule in DTYPE_RULES:
        assert f"| {rule.declared} |" in rules_markdown()


def test_a_name_declared_with_different_types_is_object_in_every_chunk(client):
    ids = ["tbl-0001", "tbl-0002", "tbl-0003"]
    for table_id, (data_type, value) in zip(
        ids, [("STRING", "A1"), ("INTEGER", 7), ("STRING", "B2")], strict=True
    ):
        base = client.api.get_table(table_id)
        columns = [{"name": "code", "dataType": data_type}]
        client.api.put_table(table_id, {**base, "metadata": {**base["metadata"], "columns": columns},
                                        "data": [{"code": value}]})  # fmt: skip
    chunks = list(client.iter_tables(ids, chunksize=1, progress=False))
    # the first chunk too: the run reads the declarations before its first chunk
    assert [str(chunk["code"].dtype) for chunk in chunks] == ["object", "object", "object"]
    assert [chunk["code"].tolist() for chunk in chunks] == [["A1"], [7], ["B2"]]
    whole = client.read_tables(ids, progress=False)
    assert whole["code"].dtype == object and whole["code"].tolist() == ["A1", 7, "B2"]
    # each table alone still has its own declared dtype
    assert client.read_table("tbl-0002")["code"].dtype == "Int64"
