"""The fingerprint's cell encoding is injective, and its digests tell every edit apart.

Hypothesis draws two runs of cells of one dtype, boosted with the values pandas' hash
confused (text that prints like a missing value, signed zeros, NaN beside NA, the int64
and float limits): their encodings are equal exactly when the cells are the same values
(bit for bit), and a frame edited in any cell gets a different digest for that block.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import struct

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.codec import fingerprint as fingerprint_module
from mddframes.codec.fingerprint import cell_encoding, fingerprint
from mddframes.codec.values import same_json_column

TEXTS = st.one_of(
    st.none(),
    st.sampled_from(["<NA>", "nan", "NaN", "None", "", "null", "\x00", "a\x00", "\ud800"]),
    st.text(max_size=5),
)
FLOATS = st.one_of(
    st.none(),
    st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, 7.038378726374037e19]),
    st.floats(),
)
INTS = st.one_of(
    st.none(), st.sampled_from([0, -1, 2**63 - 1, -(2**63), 4904004565857947459]),
    st.integers(-(2**63), 2**63 - 1),
)  # fmt: skip
KINDS = {
    "string[python]": TEXTS,  # a lone surrogate: text only Python storage holds
    "string[pyarrow]": TEXTS.filter(lambda t: t != "\ud800"),
    # pd.ArrowDtype text, digested from its Arrow buffers
    "large_string[pyarrow]": TEXTS.filter(lambda t: t != "\ud800"),
    "Float64": FLOATS,
    "Int64": INTS,
    "boolean": st.one_of(st.none(), st.booleans()),
}


def _array(values: list, dtype: str):
    if dtype == "Float64":  # NaN stays a value apart from NA (no nan_as_null)
        data = np.array([0.0 if v is None else v for v in values], dtype="float64")
        return pd.arrays.FloatingArray(data, np.array([v is None for v in values], dtype=bool))
    return pd.array(values, dtype=dtype)


def _same_cells(a: list, b: list) -> bool:
    def key(v):
        return ("float", struct.pack("<d", v)) if isinstance(v, float) else (type(v), v)

    return len(a) == len(b) and all(key(x) == key(y) for x, y in zip(a, b, strict=True))


@settings(max_examples=300, deadline=None)  # the first pyarrow string array imports pyarrow
@given(data=st.data(), dtype=st.sampled_from(sorted(KINDS)))
def test_the_encoding_is_equal_exactly_for_the_same_cells(data, dtype):
    cells = st.lists(KINDS[dtype], max_size=6)
    a, b = data.draw(cells), data.draw(cells)
    if data.draw(st.booleans()):
        b = list(a)
        if b:
            b[data.draw(st.integers(0, len(b) - 1))] = data.draw(KINDS[dtype])
    encode_a, encode_b = cell_encoding(_array(a, dtype)), cell_encoding(_array(b, dtype))
    assert encode_a is not None and encode_b is not None
    same = b"".join(encode_a(0, len(a))) == b"".join(encode_b(0, len(b)))
    assert same == _same_cells(a, b), (a, b)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(sorted(KINDS)))
def test_an_edited_cell_changes_its_blocks_digest(data, dtype):
    values = data.draw(st.lists(KINDS[dtype], min_size=1, max_size=40))
    position = data.draw(st.integers(0, len(values) - 1))
    new = data.draw(KINDS[dtype])
    edited = list(values)
    edited[position] = new
    frame = pd.DataFrame({"c": _array(values, dtype)})
    after = pd.DataFrame({"c": _array(edited, dtype)})
    old_print, new_print = fingerprint(frame), fingerprint(after)
    assert old_print is not None and new_print is not None
    block = position // fingerprint_module.BLOCK_ROWS
    differs = bool((old_print.digests["c"][block] != new_print.digests["c"][block]).any())
    assert differs == (not _same_cells(values, edited))


def test_dtypes_no_encoding_covers_are_compared_by_content():
    assert cell_encoding(pd.array(["a", "b"], dtype="category")) is None


def test_an_infinity_where_a_null_was_is_not_taken_for_the_null():
    # orjson writes inf (and NaN inside a value) as null: the JSON column's quick
    # comparison must not call them the same
    assert not same_json_column([None], np.array([math.inf], dtype=object))
    assert not same_json_column([{"a": None}], np.array([{"a": math.nan}], dtype=object))
    assert same_json_column([{"a": None}], np.array([{"a": None}], dtype=object))


# JSON cells as a strict parse gives them (no NaN), and the same cells edited: a null
# made NaN or an infinity, an int made the equal float, a key or an item changed
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3))  # fmt: skip
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=8)  # fmt: skip


def _edit(value, draw):
    """``value`` with at most one change deep inside (or none)."""
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: _edit(value[key], draw)}
    if isinstance(value, list) and value and draw(st.booleans()):
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], _edit(value[at], draw), *value[at + 1 :]]
    if value is None:
        return draw(st.sampled_from([None, math.nan, math.inf, -math.inf, 0]))
    if type(value) is int and abs(value) < 2**53:
        return draw(st.sampled_from([value, float(value)]))
    return draw(st.sampled_from([value, None]))


def _strictly_same(a, b) -> bool:
    """The same JSON value, types included (1 is not 1.0 nor True; NaN is nothing)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_strictly_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_strictly_same, a, b))
    if type(a) is float:
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


@settings(max_examples=300, deadline=None)
@given(originals=st.lists(_JSON, max_size=6), data=st.data())
def test_the_json_column_is_the_same_only_when_every_cell_is(originals, data):
    edited = [_edit(value, data.draw) for value in originals]
    values = np.empty(len(edited), dtype=object)
    values[:] = edited
    same = same_json_column(originals, values)
    if same:  # "not sure" (False) is always allowed: the caller compares cell by cell
        assert all(map(_strictly_same, originals, edited))
    # unedited cells (equal copies) are recognised: the quick path is taken, nulls included
    copies = np.empty(len(originals), dtype=object)
    copies[:] = [json.loads(json.dumps(value)) for value in originals]
    assert same_json_column(originals, copies)


def _json_digest(cells: list) -> bytes:
    values = np.empty(len(cells), dtype=object)
    values[:] = cells
    # dtype=object as a read builds it (pandas 3 would infer str for a column of text)
    taken = fingerprint(pd.DataFrame({"c": pd.Series(values, dtype=object)}))
    assert taken is not None and taken.digests["c"] is not None
    return bytes(taken.digests["c"].tobytes())


@settings(max_examples=300, deadline=None)
@given(originals=st.lists(_JSON, max_size=6), data=st.data())
def test_a_json_columns_digest_is_equal_only_when_every_cell_is(originals, data):
    # the digest that lets a write pass a JSON column's block as unchanged: never for a
    # NaN or an infinity where a null was, 1.0 where 1 was, or any change deep inside
    edited = [_edit(value, data.draw) for value in originals]
    before, after = _json_digest(originals), _json_digest(edited)
    if before == after and before != fingerprint_module.UNMATCHED:  # (UNMATCHED: compared)
        assert all(map(_strictly_same, originals, edited)), (originals, edited)
    # equal copies (key order aside) share the digest: the quick path is taken
    copies = [json.loads(json.dumps(value, sort_keys=True)) for value in originals]
    assert _json_digest(copies) == _json_digest(originals)


def test_a_json_cell_mutated_in_place_changes_its_blocks_digest():
    cell = {"tags": ["a"], "seq": 1}
    values = np.empty(3, dtype=object)
    values[:] = [cell, None, [1, 2]]
    frame = pd.DataFrame({"c": pd.Series(values, dtype=object)})
    before = fingerprint(frame)
    cell["tags"].append("b")
    after = fingerprint(frame)
    assert before is not None and after is not None
    assert (before.digests["c"] != after.digests["c"]).any()


def test_a_json_block_no_encoding_tells_apart_is_always_compared():
    # pd.NA, numpy scalars, decimals, dates and keys of two types have no canonical JSON:
    # the block's digest is UNMATCHED, and a write compares its rows whatever the frame
    # holds there now
    odd = (pd.NA, np.int64(1), decimal.Decimal("1.5"), dt.date(2024, 1, 2), {1: "a", "b": 2})
    for cell in odd:
        assert _json_digest([cell, "x"]) == fingerprint_module.UNMATCHED, cell
        values = np.empty(2, dtype=object)
        values[:] = [cell, "x"]
        frame = pd.DataFrame({"c": pd.Series(values, dtype=object)})
        taken = fingerprint(frame)
        assert taken is not None
        assert taken.candidate_rows(frame)["c"].tolist() == [0, 1], cell
    # and a block that had a digest, given such a cell, is a candidate too
    frame = pd.DataFrame({"c": pd.Series([None, "x"], dtype=object)})
    taken = fingerprint(frame)
    assert taken is not None and not len(taken.candidate_rows(frame)["c"])
    frame.loc[0, "c"] = math.nan
    assert taken.candidate_rows(frame)["c"].tolist() == [0, 1]


ARROW_TEXTS = st.lists(TEXTS.filter(lambda t: t != "\ud800"), max_size=12)


@settings(max_examples=200, deadline=None)
@given(values=ARROW_TEXTS, data=st.data())
def test_arrow_text_is_encoded_the_same_however_it_is_chunked(values, data):
    import pyarrow as pa

    cuts = sorted(data.draw(st.lists(st.integers(0, len(values)), max_size=4)))
    pieces = [values[a:b] for a, b in zip([0, *cuts], [*cuts, len(values)], strict=True)]
    whole = pd.arrays.ArrowExtensionArray(pa.chunked_array([pa.array(values, pa.string())]))
    chunked = pd.arrays.ArrowExtensionArray(
        pa.chunked_array([pa.array(p, pa.string()) for p in pieces], pa.string())
    )
    start = data.draw(st.integers(0, len(values)))
    stop = data.draw(st.integers(start, len(values)))
    encode_whole, encode_chunked = cell_encoding(whole), cell_encoding(chunked)
    assert encode_whole is not None and encode_chunked is not None
    assert b"".join(encode_whole(start, stop)) == b"".join(encode_chunked(start, stop))


def test_bytes_left_in_a_missing_arrow_cells_slot_are_no_part_of_its_value():
    import pyarrow as pa

    # Arrow lets a null slot keep bytes ("xyz" here): the same cells as [None, "q"]
    offsets = pa.py_buffer(np.array([0, 3, 4], dtype=np.int32).tobytes())
    junk = pa.StringArray.from_buffers(2, offsets, pa.py_buffer(b"xyzq"), pa.py_buffer(b"\x02"))
    assert junk.to_pylist() == [None, "q"]
    clean = pa.array([None, "q"], pa.string())
    encodings = [cell_encoding(pd.arrays.ArrowExtensionArray(a)) for a in (junk, clean)]
    assert all(e is not None for e in encodings)
    assert b"".join(encodings[0](0, 2)) == b"".join(encodings[1](0, 2))  # type: ignore[misc]
    other = cell_encoding(pd.arrays.ArrowExtensionArray(pa.array([None, "r"], pa.string())))
    assert other is not None and b"".join(other(0, 2)) != b"".join(encodings[1](0, 2))  # type: ignore[misc]
