"""Property tests of the codec: payload -> frame -> payload is lossless, and edits are exact.

No server: the codec works on parsed JSON only.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from codec_strategies import DATETIMES, FLOATS, INT64, JSON, TEXT, assert_same_json, payloads
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mddframes.codec import ABSENT, check_payload, diff_payloads, from_payload, overlay, to_payload
from mddframes.codec.frame import payload_rows
from mddframes.codec.frame_overlay import not_plainly_equal
from mddframes.codec.values import cell_changed, is_missing_cell, is_missing_json, json_equal

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(payloads())
def test_unedited_frame_gives_back_the_same_payload(kind_and_payload):
    kind, payload = kind_and_payload
    before = copy.deepcopy(payload)
    frame = from_payload(payload, kind)

    out = to_payload(frame, payload, kind=kind)

    assert_same_json(out, before)
    assert json.dumps(out) == json.dumps(before)
    assert_same_json(payload, before)  # the original was not modified
    rows, out_rows = payload_rows(payload, kind), payload_rows(out, kind)
    assert all(a is b for a, b in zip(rows, out_rows, strict=True))  # rows not even copied
    assert diff_payloads(payload, out, kind=kind).empty
    report = check_payload(out, payload, kind=kind)
    assert report.ok, report.summary


@SETTINGS
@given(payloads(), st.randoms(use_true_random=False))
def test_reordered_rows_and_columns_change_nothing(kind_and_payload, random):
    kind, payload = kind_and_payload
    before = copy.deepcopy(payload)
    frame = from_payload(payload, kind)
    rows, columns = list(frame.index), list(frame.columns)
    random.shuffle(rows)
    random.shuffle(columns)

    out = to_payload(frame.loc[rows, columns], payload, kind=kind)

    assert_same_json(out, before)


@SETTINGS
@given(payloads())
def test_frame_index_and_columns_follow_the_payload(kind_and_payload):
    kind, payload = kind_and_payload
    frame = from_payload(payload, kind)
    rows = payload_rows(payload, kind)
    assert list(frame.index) == list(range(len(rows)))
    assert frame.index.name == "row"
    keys = {k for row in rows for k in row}
    assert keys <= set(frame.columns)
    for position, row in enumerate(rows):
        for name in frame.columns:
            cell = frame[name].iloc[position]
            value = row.get(name, ABSENT)
            if is_missing_json(value):
                assert pd.isna(cell) if not isinstance(cell, list | dict) else False
            elif isinstance(cell, pd.Timestamp):
                assert pd.Timestamp(value) == cell
            else:
                assert json_equal(value, _plain(cell)), (name, value, cell)
                if type(value) is int:
                    assert not isinstance(cell, float | np.floating) or abs(value) <= 2**53


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def edit_strategy(dtype: Any) -> st.SearchStrategy[Any]:
    """New cell values a user could put in a column of this dtype (NA included)."""
    na = st.just(pd.NA)
    name = str(dtype)
    if name == "Int64":
        return st.one_of(na, INT64)
    if name == "Float64":
        return st.one_of(na, FLOATS)
    if name == "boolean":
        return st.one_of(na, st.booleans())
    if name == "string":
        return st.one_of(na, TEXT, st.sampled_from(["007", ""]))
    if getattr(dtype, "kind", None) == "M":
        tz = getattr(dtype, "tz", None)
        return st.one_of(
            na, DATETIMES.map(lambda t: pd.Timestamp(t, tz=tz) if tz else pd.Timestamp(t))
        )
    return st.one_of(na, JSON.filter(lambda v: v is not None))


def set_cell(frame: pd.DataFrame, position: int, name: str, value: Any) -> None:
    column = frame[name]
    if column.dtype == object:
        values = column.to_numpy(dtype=object, copy=True)
        values[position] = None if value is pd.NA else value
        frame[name] = pd.Series(values, index=frame.index, dtype=object)
    else:
        values = column.array.copy()
        values[position] = value
        frame[name] = values


def column_sample(rows: list[dict[str, Any]], name: str) -> Any:
    """The first non-missing original value of a column (guides new cells' JSON types)."""
    return next((r[name] for r in rows if not is_missing_json(r.get(name, ABSENT))), ABSENT)


def expected_cell(original: Any, value: Any, sample: Any = ABSENT) -> tuple[bool, Any]:
    """(changed?, value to expect) by the overlay's rules, written out independently."""
    if value is pd.NA or value is None:
        return (not is_missing_json(original)), None
    if isinstance(value, pd.Timestamp):
        if isinstance(original, str):
            try:
                if pd.Timestamp(original) == value:
                    return False, original
            except (ValueError, TypeError):
                pass
        return True, value
    plain = _plain(value)
    if not is_missing_json(original) and json_equal(original, plain):
        return False, original
    template = sample if is_missing_json(original) else original
    negative_zero = plain == 0 and math.copysign(1.0, plain) < 0  # no int holds -0.0
    if type(template) is int and type(plain) is float and plain.is_integer() and not negative_zero:
        if abs(plain) <= 2**53:
            return True, int(plain)
    return True, plain


@SETTINGS
@given(payloads(), st.data())
def test_random_cell_edits_change_exactly_those_cells(kind_and_payload, data):
    kind, payload = kind_and_payload
    before = copy.deepcopy(payload)
    rows = payload_rows(payload, kind)
    frame = from_payload(payload, kind)
    if not len(frame) or not len(frame.columns):
        return
    cells = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(frame) - 1), st.sampled_from(list(frame.columns))),
            min_size=1,
            max_size=6,
            unique=True,
        )
    )
    expected: dict[tuple[int, str], Any] = {}
    for position, name in cells:
        value = data.draw(edit_strategy(frame[name].dtype))
        set_cell(frame, position, name, value)
        changed, want = expected_cell(
            rows[position].get(name, ABSENT), value, column_sample(rows, name)
        )
        if changed:
            expected[(position, name)] = want

    result = overlay(frame, payload, kind=kind)
    out_rows = payload_rows(result.payload, kind)

    assert_same_json(payload, before)
    assert len(out_rows) == len(rows)
    for position, (row, out) in enumerate(zip(rows, out_rows, strict=True)):
        edits = {name for (p, name) in expected if p == position}
        if not edits:
            assert out is row
            continue
        assert list(out)[: len(row)] == list(row)  # original keys keep their order
        for name in set(out) | set(row):
            if name in edits:
                want = expected[(position, name)]
                got = out[name]
                if isinstance(want, pd.Timestamp):
                    assert isinstance(got, str) and pd.Timestamp(got) == want
                elif want is None:
                    assert got is None
                else:
                    assert json_equal(got, want) and type(got) is type(want), (got, want)
            else:
                assert out.get(name, ABSENT) is row.get(name, ABSENT)
    diff = diff_payloads(payload, result.payload, kind=kind, origin=result.origin)
    assert set(zip(diff.changed["row"], diff.changed["column"], strict=True)) == set(expected)
    assert diff.added.empty and diff.deleted.empty
    report = check_payload(result.payload, payload, kind=kind, origin=result.origin)
    assert not any(report.frame["problem"].isin(["row deleted", "cell removed"]))


@SETTINGS
@given(payloads(), st.data())
def test_dropped_rows_are_deletions_and_new_rows_are_appended(kind_and_payload, data):
    kind, payload = kind_and_payload
    rows = payload_rows(payload, kind)
    frame = from_payload(payload, kind)
    dropped = data.draw(st.sets(st.integers(0, max(len(rows) - 1, 0))) if rows else st.just(set()))
    frame = frame.drop(index=sorted(dropped))
    n_new = data.draw(st.integers(0, 3)) if len(frame.columns) else 0
    new_rows = []
    for j in range(n_new):
        values = {name: data.draw(edit_strategy(frame[name].dtype)) for name in frame.columns}
        label = len(rows) + 10 + j
        addition = pd.DataFrame(
            {
                name: pd.Series([v], index=[label], dtype=frame[name].dtype)
                for name, v in values.items()
            },
            index=[label],
        )
        frame = pd.concat([frame, addition])
        new_rows.append(values)

    result = overlay(frame, payload, kind=kind)
    out_rows = payload_rows(result.payload, kind)

    kept = [p for p in range(len(rows)) if p not in dropped]
    assert result.deleted == sorted(dropped)
    assert all(out is rows[p] for out, p in zip(out_rows, kept, strict=False))
    added = out_rows[len(kept) :]
    assert len(added) == n_new
    for out, values in zip(added, new_rows, strict=True):
        present = [n for n, v in values.items() if not is_missing_cell(v)]
        assert sorted(out) == sorted(present)
        assert list(out) == [n for n in frame.columns if n in out]  # column order
        for name, got in out.items():
            want = values[name]
            if isinstance(want, pd.Timestamp):
                assert pd.Timestamp(got) == want
            else:
                assert json_equal(got, _plain(want))
    report = check_payload(result.payload, payload, kind=kind, origin=result.origin)
    deleted_lines = report.errors[report.errors["problem"] == "row deleted"]
    assert sorted(deleted_lines["row"]) == sorted(dropped)
    relaxed = check_payload(
        result.payload, payload, kind=kind, origin=result.origin, allow_deletes=True
    )
    assert not (relaxed.frame["problem"] == "row deleted").any()


@pytest.mark.parametrize("kind", ["table", "mapping"])
def test_payload_text_round_trips_through_json(kind):
    """The payload survives json.dumps(allow_nan=False) and json.loads unchanged."""
    text = (
        '{"id":"T0001","metadata":{"columns":[{"name":"id","dataType":"VARCHAR"}]},'
        '"data":[{"id":"007","n":123456789012345678901234567890,"x":-0.0,"y":1e+300},'
        '{"n":null,"id":"","z":{"k":[1,2.5,"ü"]}}],'
        '"columnMappings":[{"source":"a","target":"b","transformation":null}]}'
    )
    payload = json.loads(text)
    out = to_payload(from_payload(payload, kind), payload, kind=kind)
    assert json.dumps(out, allow_nan=False, separators=(",", ":"), ensure_ascii=False) == text


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, 1]),
    st.text(max_size=4), st.sampled_from(["<NA>", "nan", "NaN", "", "1"]),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@example([(0.0, -0.0, False), (1, 1.0, False), (True, 1, False)], "Float64")
@example([(0, False, False), ("1", 1, False), (-0.0, 0.0, False)], "object")
@given(st.lists(st.tuples(_SCALARS, _SCALARS, st.booleans()), min_size=1, max_size=8),
       st.sampled_from([None, "Int64", "Float64", "string", "boolean", "object", "float64"]))  # fmt: skip
def test_cells_a_small_overlay_leaves_out_are_those_cell_changed_finds_unchanged(pairs, dtype):
    """The small overlay's prefilter (a cell of the original's Python type and equal to it)
    never leaves out a cell :func:`cell_changed` would write: it may only save it work."""
    originals = [original for original, _, _ in pairs]
    values = [original if same else other for original, other, same in pairs]
    try:
        array = pd.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError):
        return  # values this dtype cannot hold: no such frame column
    maybe_changed = set(not_plainly_equal(originals, array).tolist())
    for i, original in enumerate(originals):
        if i not in maybe_changed:
            assert not cell_changed(original, array[i])[0], (original, array[i])


@SETTINGS
@given(payloads(), st.data())
def test_an_overlay_of_only_the_edited_columns_is_the_whole_overlay(kind_and_payload, data):
    # overlay(compare=...): the streamed write hands over the columns its fingerprint
    # names; the payload must be the one the whole frame gives, key order included
    kind, payload = kind_and_payload
    frame = from_payload(payload, kind)
    if not len(frame) or not len(frame.columns):
        return
    names = list(frame.columns)
    cells = data.draw(st.lists(st.tuples(st.integers(0, len(frame) - 1), st.sampled_from(names)),
                               min_size=1, max_size=6, unique=True))  # fmt: skip
    for position, name in cells:
        set_cell(frame, position, name, data.draw(edit_strategy(frame[name].dtype)))
    edited = {name for _position, name in cells}
    extra = data.draw(st.sets(st.sampled_from(names)))  # named, though unchanged: no matter
    compare = [name for name in names if name in edited | extra]  # the frame's order (the contract)
    whole = overlay(frame, payload, kind=kind)
    part = overlay(frame[compare], payload, kind=kind, compare=compare)
    assert json.dumps(part.payload) == json.dumps(whole.payload)
    assert part.origin == whole.origin


def test_an_overlay_of_some_columns_takes_no_new_rows():
    payload = {"id": "t", "metadata": {"columns": [{"name": "a", "dataType": "INTEGER"}]},
               "data": [{"a": 1}]}  # fmt: skip
    frame = from_payload(payload, "table")
    frame.loc[5] = [2]
    with pytest.raises(ValueError, match="no new rows"):
        overlay(frame, payload, kind="table", compare=["a"])
