"""Nothing a user changed is silently lost: every write route against a plain reference.

The reference is computed in JSON space, apart from the library: the document the
service held, with each edit applied to its cell as JSON (``None`` makes a present key
null and leaves an absent key absent). Each example puts a table on the emulator, reads
it through the public API (a streamed read above the threshold, a whole one below), edits
the frame as a user of its library would (pandas with either backend, or polars), writes
it, and compares what the service then holds with the reference, key order and types
included; then edits the same frame again and writes a second time.

The strategies boost the values that fooled the 64-bit sum of pandas' hashes the write
used to trust: text that pandas prints like a missing value (``"<NA>"``, ``"nan"``,
``"None"``, ``""``) next to nulls, signed zeros, values at the int64 and float limits, and
the values that hashed like a missing value (issue 32). The deterministic regression tests
at the end each failed on the code before the keyed digests.

Every run covers STRING, INTEGER, DOUBLE and BOOLEAN columns with a few examples per
case; ``test_exact_writes_all_types.py`` (``slow``, CI's first run) adds a column of every
other declared type of the dtype rule (``exact_types.py``) and runs 200 examples per case.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from writing.exact_types import ABSENT, EXTRA_COLUMNS
from writing.test_write_backends import set_cell

from mddframes import IncompletePayloadError, to_polars
from mddframes.codec import fingerprint as fingerprint_module
from mddframes.codec import read_route, splitter

KINDS = ["numpy_nullable", "pyarrow", "polars"]
ROWS = 1_500
#: Values that hashed like a missing value under pandas' hash (found by the issue's probe).
INT64_COLLIDING_WITH_NA = 4904004565857947459
FLOAT64_COLLIDING_WITH_NA = 7.038378726374037e19
LOOKS_MISSING = ["<NA>", "nan", "NaN", "None", "", "null", "NA", "NaT", "N/A"]

COLUMNS = [
    {"name": "id", "dataType": "INTEGER", "nullable": False, "primaryKey": True},
    {"name": "name", "dataType": "STRING", "nullable": True, "primaryKey": False},
    {"name": "ratio", "dataType": "DOUBLE", "nullable": True, "primaryKey": False},
    {"name": "qty", "dataType": "BIGINT", "nullable": True, "primaryKey": False},
    {"name": "flag", "dataType": "BOOLEAN", "nullable": True, "primaryKey": False},
]

EDITS = {
    "name": st.one_of(st.none(), st.sampled_from(LOOKS_MISSING), st.text(max_size=6)),
    "ratio": st.one_of(
        st.none(),
        st.sampled_from(
            [
                0.0,
                -0.0,
                FLOAT64_COLLIDING_WITH_NA,
                1.7976931348623157e308,
                -1.7976931348623157e308,
                5e-324,
                2.0**53,
                1.5,
            ]
        ),  # fmt: skip
        st.floats(allow_nan=False, allow_infinity=False),
    ),
    "qty": st.one_of(
        st.none(),
        st.sampled_from([0, -1, 2**63 - 1, -(2**63), INT64_COLLIDING_WITH_NA]),
        st.integers(-(2**63), 2**63 - 1),
    ),
    "flag": st.one_of(st.none(), st.booleans()),
}
#: Each column's edits as (the value set in the frame, the JSON the service then holds).
PAIRS = {name: strategy.map(lambda v: (v, v)) for name, strategy in EDITS.items()}


def random_edits(columns: dict[str, Any]) -> Any:
    """Up to 6 cells (row, column, the draw of the new value); rows mostly in a few blocks."""
    return st.lists(
        st.tuples(
            st.one_of(st.integers(0, ROWS - 1), st.sampled_from([0, 1, 63, 64, 65, ROWS - 1])),
            st.sampled_from(sorted(columns)),
            st.data(),
        ),
        max_size=6,
    )


RANDOM_EDITS = random_edits(PAIRS)


@functools.cache
def original_rows(n_rows: int, extra: bool = False) -> list[dict[str, Any]]:
    """Rows holding every look-alike of a missing value, nulls, absent keys, signed zeros
    and the colliding values, repeated along the table (and, ``extra``, the cells of
    every other declared type: exact_types.EXTRA_COLUMNS). Built once: never changed."""
    rows = []
    for i in range(n_rows):
        row: dict[str, Any] = {"id": i}
        name = [*LOOKS_MISSING, None, "x" * 40, "y"][i % (len(LOOKS_MISSING) + 3)]
        if i % 7 != 3:  # some rows have no key at all
            row["name"] = name
        row["ratio"] = [0.0, -0.0, 1.5, None, FLOAT64_COLLIDING_WITH_NA][i % 5]
        row["qty"] = [0, INT64_COLLIDING_WITH_NA, None, 2**63 - 1, -(2**63)][i % 5]
        row["flag"] = [True, False, None][i % 3]
        for column in EXTRA_COLUMNS if extra else ():
            if (value := column.original(i)) is not ABSENT:
                row[column.name] = value
        rows.append(row)
    return rows


def use_tiny_batches(monkeypatch) -> None:
    """A table of a few thousand rows streams and has many blocks and batches."""
    monkeypatch.setattr(read_route, "STREAM_THRESHOLD", 32 << 10)
    monkeypatch.setattr(splitter, "BATCH_BYTES", 8 << 10)
    monkeypatch.setattr(fingerprint_module, "BLOCK_ROWS", 64)


@pytest.fixture
def table_id(client, monkeypatch):
    """The table the oracle writes, with :func:`use_tiny_batches`."""
    use_tiny_batches(monkeypatch)
    return client.read_tree("DWH")["table_id"].dropna().iloc[0]


def put_table(client, table_id: str, n_rows: int, extra: bool = False) -> dict[str, Any]:
    document = client.api.get_table(table_id)
    document["metadata"]["columns"] = copy.deepcopy(COLUMNS) + [
        {"name": c.name, "dataType": c.data_type, "nullable": True, "primaryKey": False}
        for c in (EXTRA_COLUMNS if extra else ())
    ]
    document["data"] = original_rows(n_rows, extra)
    client.api.put_table(table_id, document)
    held: dict[str, Any] = client.api.get_table(table_id)
    return held


def read(client, table_id: str, kind: str) -> Any:
    if kind == "polars":
        return to_polars(client.read_table(table_id, dtype_backend="pyarrow"))
    return client.read_table(table_id, dtype_backend=kind)


def expected_document(
    document: dict[str, Any], edits: list[tuple[int, str, Any]]
) -> dict[str, Any]:
    """The reference: each edit applied to its cell in JSON space (``document`` is left
    as it is; only the edited rows are copied, which keeps the slow run's cost down)."""
    expected = {**document, "data": list(document["data"])}
    # a cell edited twice holds its last value: the reference applies that net edit (a
    # cell set to text and then to NA where the key was absent stays absent)
    net = {(row, column): value for row, column, value in edits}
    # a key the row did not have goes after the row's keys, in the frame's column order
    # (the declared order): a frame does not know in which order its cells were set
    order = [column["name"] for column in document["metadata"]["columns"]]
    for (row, column), value in sorted(net.items(), key=lambda e: (e[0][0], order.index(e[0][1]))):
        cells = expected["data"][row]
        if value is None and cells.get(column) is None:
            continue  # null stays null, absent stays absent
        # a copy: the frame holds the very dict or list the edit set, and a write that
        # changed it in place must not change the reference with it
        expected["data"][row] = {**cells, column: copy.deepcopy(value)}
    return expected


def text(document: Any) -> str:
    """Values, types (``1`` vs ``1.0``, ``-0.0``) and key order."""
    return json.dumps(document, allow_nan=False)


def edit(frame: Any, edits: list[tuple[int, str, Any, Any]]) -> Any:
    for row, column, value, _json in edits:
        if isinstance(frame, pl.DataFrame):
            position = row
        else:
            position = frame.index.get_loc(row)
        frame = set_cell(frame, position, column, value)
    return frame


def write_and_compare(client, table_id, frame, held, edits, tmp_path) -> tuple[Any, dict]:
    """Write the edited frame; the service holds the reference (or, refused, what it held).

    ``edits``: (row, column, value) or (row, column, frame value, JSON value)."""
    edits = [e if len(e) == 4 else (*e, e[2]) for e in edits]
    frame = edit(frame, edits)
    expected = expected_document(held, [(row, column, j) for row, column, _v, j in edits])
    try:
        result = client.write_table(table_id, frame, backup_dir=tmp_path)
    except IncompletePayloadError:
        assert text(client.api.get_table(table_id)) == text(held)  # nothing was sent
        return None, held
    now = client.api.get_table(table_id)
    reference = text(expected)
    assert text(now) == reference, result.route
    changed = reference != text(held)
    assert result.status == ("written" if changed else "unchanged"), (result.status, edits)
    return frame, now


def draw_edits(drawn, n_rows: int, pairs: dict[str, Any]) -> list[tuple[int, str, Any, Any]]:
    return [(row % n_rows, column, *data.draw(pairs[column])) for row, column, data in drawn]


def one_example(client, table_id, tmp_path, kind, n_rows, first, second, pairs, extra=False):
    """Put the table, read it, write two rounds of edits, each against the reference."""
    held = put_table(client, table_id, n_rows, extra)
    frame = read(client, table_id, kind)
    frame, held = write_and_compare(
        client, table_id, frame, held, draw_edits(first, n_rows, pairs), tmp_path
    )
    if frame is None:
        return
    write_and_compare(client, table_id, frame, held, draw_edits(second, n_rows, pairs), tmp_path)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_rows", [ROWS, 60], ids=["streamed", "small"])
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(first=RANDOM_EDITS, second=RANDOM_EDITS)
def test_every_route_writes_what_the_json_reference_says(
    client, table_id, tmp_path, kind, n_rows, first, second
):
    one_example(client, table_id, tmp_path, kind, n_rows, first, second, PAIRS)


# deterministic regressions, one per class the issue found (each failed before)


def _first_row_with(held: dict[str, Any], column: str, value: Any) -> int:
    return next(
        i for i, row in enumerate(held["data"]) if text(row.get(column, "absent")) == text(value)
    )


@pytest.mark.parametrize("kind", KINDS)
def test_the_text_na_set_to_a_missing_value_is_written(client, table_id, tmp_path, kind):
    held = put_table(client, table_id, ROWS)
    rows = [i for i, row in enumerate(held["data"]) if row.get("name") == "<NA>"]
    frame = read(client, table_id, kind)
    frame, held = write_and_compare(
        client, table_id, frame, held, [(i, "name", None) for i in rows], tmp_path
    )
    assert all(held["data"][i]["name"] is None for i in rows) and len(rows) > 100


def test_the_text_nan_set_to_nan_in_a_str_column_is_written_on_a_second_write(
    client, table_id, tmp_path
):
    held = put_table(client, table_id, ROWS)
    frame = client.read_table(table_id)
    frame["name"] = frame["name"].astype(str)  # pandas' str: a missing cell becomes NaN
    frame.at[1, "name"] = "edited"  # written: the next write starts from this frame's print
    first = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert first.status == "written"
    held = client.api.get_table(table_id)
    rows = [i for i, row in enumerate(held["data"]) if row.get("name") == "nan"]
    frame.loc[rows, "name"] = float("nan")
    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "written"
    assert all(client.api.get_table(table_id)["data"][i]["name"] is None for i in rows)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_rows", [ROWS, 60], ids=["streamed", "small"])
def test_a_zero_made_negative_is_written(client, table_id, tmp_path, kind, n_rows):
    held = put_table(client, table_id, n_rows)
    row = _first_row_with(held, "ratio", 0.0)
    frame = read(client, table_id, kind)
    _, now = write_and_compare(client, table_id, frame, held, [(row, "ratio", -0.0)], tmp_path)
    assert text(now["data"][row]["ratio"]) == "-0.0"


@pytest.mark.parametrize("kind", KINDS)
def test_values_that_hashed_like_a_missing_value_are_written(client, table_id, tmp_path, kind):
    held = put_table(client, table_id, ROWS)
    edits = [
        (_first_row_with(held, "qty", None), "qty", INT64_COLLIDING_WITH_NA),
        (_first_row_with(held, "ratio", None), "ratio", FLOAT64_COLLIDING_WITH_NA),
    ]
    frame = read(client, table_id, kind)
    write_and_compare(client, table_id, frame, held, edits, tmp_path)


_M = 2**64
_C1, _C2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _pandas_int_hash(value: int) -> int:
    """pandas' hash of an int64 (``hash_pandas_object``: a public, unkeyed mix)."""
    x = value % _M
    x ^= x >> 30
    x = x * _C1 % _M
    x ^= x >> 27
    x = x * _C2 % _M
    return x ^ (x >> 31)


def _unshift(y: int, k: int) -> int:
    x = y
    for _ in range(64 // k + 1):
        x = y ^ (x >> k)
    return x


def _int_with_pandas_hash(target: int) -> int:
    """The int64 whose pandas hash is ``target`` (the mix is invertible)."""
    x = _unshift(target, 31)
    x = x * pow(_C2, -1, _M) % _M
    x = _unshift(x, 27)
    x = x * pow(_C1, -1, _M) % _M
    x = _unshift(x, 30)
    return x - _M if x >= 2**63 else x


def _old_row_weight(position: int) -> int:
    """The public weight the old block sum gave a row (splitmix64 of its position, odd)."""
    z = (position + 0x9E3779B97F4A7C15) % _M
    z = (z ^ (z >> 30)) * _C1 % _M
    z = (z ^ (z >> 27)) * _C2 % _M
    return (z ^ (z >> 31)) | 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_second_edit_chosen_to_keep_the_old_block_sum_is_written(
    client, table_id, tmp_path, kind
):
    # two edits in one block, the second solved from the first with pandas' public hash
    # and the public row weights, leave the old 64-bit weighted sum as it was
    held = put_table(client, table_id, ROWS)
    a = _first_row_with(held, "qty", 0)
    b = a + 5  # the same block of 64 rows (qty is never null there: i % 5 != 2)
    old_a, new_a, old_b = 0, 12345, held["data"][b]["qty"]
    assert old_b is not None and a // 64 == b // 64
    delta = _old_row_weight(a) * (_pandas_int_hash(new_a) - _pandas_int_hash(old_a))
    target = (_pandas_int_hash(old_b) - delta * pow(_old_row_weight(b), -1, _M)) % _M
    new_b = _int_with_pandas_hash(target)
    assert _pandas_int_hash(new_b) == target and new_b != old_b
    # the proof that the chosen pair is invisible to the old sum
    before = _old_row_weight(a) * _pandas_int_hash(old_a) + _old_row_weight(b) * _pandas_int_hash(
        old_b
    )
    after = _old_row_weight(a) * _pandas_int_hash(new_a) + _old_row_weight(b) * _pandas_int_hash(
        new_b
    )
    assert before % _M == after % _M
    frame = read(client, table_id, kind)
    write_and_compare(
        client, table_id, frame, held, [(a, "qty", new_a), (b, "qty", new_b)], tmp_path
    )


def test_an_int_made_float_in_an_object_column_is_an_edit(client, table_id, tmp_path):
    held = put_table(client, table_id, 60)
    held["data"][0]["mixed"], held["data"][1]["mixed"] = 1, "one"
    client.api.put_table(table_id, held)
    frame = client.read_table(table_id)
    assert frame["mixed"].dtype == object
    frame.at[0, "mixed"] = 1.0
    try:
        result = client.write_table(table_id, frame, backup_dir=tmp_path)
    except IncompletePayloadError as refused:  # an int turned float: drift, said loudly
        assert "mixed" in refused.report.frame["column"].tolist()
    else:
        assert result.status == "written"
        assert text(client.api.get_table(table_id)["data"][0]["mixed"]) == "1.0"
    assert pd.isna(frame.at[2, "mixed"])


@pytest.mark.parametrize("n_rows", [ROWS, 60], ids=["streamed", "small"])
def test_a_float_put_where_an_object_columns_cell_was_missing_stays_a_float(
    client, table_id, tmp_path, n_rows
):
    # found by hypothesis: the column's first value (an int) guided the new cell, so
    # 0.0 went out as 0 and the verification refused what had been sent
    held = put_table(client, table_id, n_rows)
    held["data"][0]["mixed"], held["data"][1]["mixed"] = 1, "one"
    client.api.put_table(table_id, held)
    frame = client.read_table(table_id)
    assert frame["mixed"].dtype == object and pd.isna(frame.at[2, "mixed"])
    frame.at[2, "mixed"] = 0.0
    result = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert result.status == "written" and result.verified
    assert text(client.api.get_table(table_id)["data"][2]["mixed"]) == "0.0"


@pytest.mark.parametrize("n_rows", [ROWS, 60], ids=["streamed", "small"])
def test_a_sent_value_that_is_not_the_frames_fails_the_verification(
    client, table_id, tmp_path, monkeypatch, n_rows
):
    # an overlay that writes something else than the frame's value into a changed cell
    # (a bug the read-back alone cannot see: the service holds exactly what was sent)
    from mddframes.codec import frame_overlay as frame_module
    from mddframes.errors import WriteVerificationError

    put_table(client, table_id, n_rows)
    real = frame_module.cell_changed

    def tampered(original: Any, value: Any, template: Any = None) -> tuple[bool, Any]:
        changed, converted = real(original, value, template)
        return (True, "tampered") if changed else (changed, converted)

    monkeypatch.setattr(frame_module, "cell_changed", tampered)
    frame = client.read_table(table_id)
    frame.at[3, "name"] = "edited"
    with pytest.raises(WriteVerificationError, match=r"row 3 column 'name': frame 'edited'"):
        client.write_table(table_id, frame, backup_dir=tmp_path)
    assert client.api.get_table(table_id)["data"][3]["name"] == "tampered"  # and said so


@pytest.mark.parametrize(
    ("n_rows", "edit", "route", "reason"),
    [
        (ROWS, "cell", "streamed", "cells edited"),
        (60, "cell", "parsed", "read whole"),
        (ROWS, "add row", "parsed", "rows or columns were added"),
        (ROWS, "reorder rows", "parsed", "rows or columns were added"),
    ],
)
def test_the_result_names_the_route_the_rule_chose(
    client, table_id, tmp_path, n_rows, edit, route, reason
):
    put_table(client, table_id, n_rows)
    frame = client.read_table(table_id)
    frame.at[3, "name"] = "edited"
    if edit == "add row":
        frame.loc[n_rows] = {"id": n_rows, "name": "new"}
    elif edit == "reorder rows":
        frame = frame.iloc[::-1]
    result = client.write_table(table_id, frame, backup_dir=tmp_path, dry_run=True,
                                allow_deletes=True)  # fmt: skip
    assert (result.route, reason in result.route_reason) == (route, True), result.route_reason


def test_a_nested_cell_mutated_in_place_in_a_small_table_is_written(client, tmp_path):
    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    document = client.api.get_table(table_id)
    document["data"] = [{"id": i, "attributes": {"k": i}} for i in range(5)]
    client.api.put_table(table_id, document)
    frame = client.read_table(table_id)
    frame.at[2, "attributes"]["k"] = "mutated"  # the read's own dict, changed in place
    result = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert result.status == "written" and result.route == "parsed"
    assert client.api.get_table(table_id)["data"][2]["attributes"] == {"k": "mutated"}
