"""fastjson.loads gives exactly what json.loads gives; the row splitter never gives a wrong row."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mddframes.codec.splitter as splitter_module
from mddframes.codec import depth, fastjson
from mddframes.codec.splitter import RowSplitter
from mddframes.codec.values import has_non_finite, json_text

# JSON values with the awkward parts: ints far beyond 64 bits, lone surrogates, floats
# of every size, -0.0, long digit strings in text, nesting and key order.
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12)
    | st.from_regex(r"[0-9]{15,25}", fullmatch=True)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def same(a, b) -> bool:
    """Deep equality with the same types and key order (-0.0 and 0.0 told apart)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


@settings(max_examples=400, deadline=None)
@given(value=VALUES, ascii_only=st.booleans())
def test_loads_is_json_loads_exactly(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    data = text.encode("utf-8", "surrogatepass")
    expected = json.loads(text)
    assert same(fastjson.loads(data), expected)
    assert same(fastjson.loads(text), expected)


@pytest.mark.parametrize(
    "text",
    [b"18446744073709551616", b"-9223372036854775809", b"[1, 123456789012345678901234567890]",
     b'"\\ud800"', b"NaN", b"[Infinity, -Infinity]", b"1e400", b"-0", b"\xef\xbb\xbf{}",
     b'{"a": 1, "a": 2}', "[1]".encode("utf-16")],
)  # fmt: skip
def test_where_orjson_differs_json_loads_decides(text):
    expected = json.loads(text)
    got = fastjson.loads(text)
    assert same(got, expected) or (got != got and expected != expected)


@settings(max_examples=400, deadline=None)
@given(value=st.recursive(
    SCALARS | st.floats(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
))  # fmt: skip
def test_json_text_reads_back_as_the_value(value):
    assert same(json.loads(json_text(value)), value)


#: Numbers as text, the awkward ones: huge and tiny exponents, long digit runs
NUMBER_TEXTS = st.from_regex(
    r"-?(0|[1-9][0-9]{0,400})(\.[0-9]{1,20})?([eE][-+]?[0-9]{1,5})?", fullmatch=True
)


@settings(max_examples=400, deadline=None)
@given(
    value=VALUES | st.lists(st.floats() | st.none(), max_size=4),
    numbers=st.lists(NUMBER_TEXTS, max_size=3),
)
def test_text_surely_finite_decodes_to_no_nan_or_infinity(value, numbers):
    text = ",".join([json.dumps(value), *numbers])
    data = f"[{text}]".encode("utf-8", "surrogatepass")
    decoded = json.loads(data)
    if fastjson.surely_finite(data):
        assert not has_non_finite(decoded)


@pytest.mark.parametrize(
    "text",
    [
        b"[NaN]",
        b"[-Infinity]",
        b"[1e400]",
        b"[1E+309]",
        b"[-2.5e00400]",
        b"[" + b"9" * 400 + b".0]",
    ],
)
def test_any_nan_or_infinity_is_not_surely_finite(text):
    assert has_non_finite(json.loads(text))
    assert not fastjson.surely_finite(text)


def test_a_run_of_digits_across_scan_pieces_is_seen():
    step = fastjson._SCAN_STEP
    data = b" " * (step - 10) + b"1" * 30
    assert fastjson.may_hold_big_int(data)
    assert not fastjson.may_hold_big_int(b"1" * 18 + b" " + b"1" * 18)


@pytest.mark.parametrize(
    "text",
    [b"[0.0005995883885473452]", b'{"a": -12.00000000000000000000000000001}',
     b'["v1.12345678901234567890"]'],
)  # fmt: skip
def test_a_long_fraction_is_not_suspect(text):
    # a fraction's digits are no integer: orjson parses them as json.loads does
    assert not fastjson.may_hold_big_int(text)
    assert same(fastjson.loads(text), json.loads(text))


@pytest.mark.parametrize(
    "text",
    [b"[1.5, 18446744073709551616]", b"[1.5e0000000000000000000000003]",
     b"1234567890123456789012345"],
)  # fmt: skip
def test_a_long_run_elsewhere_is_suspect(text):
    assert fastjson.may_hold_big_int(text)


# decimal fractions of 19 to 40 digits, near-halfway cases between doubles included
LONG_FRACTIONS = st.builds(
    lambda whole, digits, exponent: f"{whole}.{digits}{exponent}",
    st.integers(min_value=-(10**6), max_value=10**6),
    st.from_regex(r"[0-9]{19,40}", fullmatch=True),
    st.sampled_from(["", "e-5", "E+12", "e300", "e-320"]),
)


@given(st.lists(LONG_FRACTIONS, min_size=1, max_size=5))
@settings(max_examples=300, deadline=None)
def test_long_fractions_decode_as_json_loads_does(numbers):
    text = ("[" + ", ".join(numbers) + "]").encode()
    assert same(fastjson.loads(text), json.loads(text))
    assert same(fastjson.loads_strict_or_none(text), json.loads(text))


def test_gc_pause_nests_and_restores():
    import gc

    assert gc.isenabled()
    with fastjson.gc_paused():
        with fastjson.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def split_rows(text: bytes, size: int, key: str = "data"):
    rows: list = []
    splitter = RowSplitter(key, rows.extend)
    for start in range(0, len(text), size):
        splitter.feed(text[start : start + size])
    splitter.finish()
    return splitter, rows


ROWS = st.lists(st.dictionaries(st.sampled_from(["a", "b", "}", ",{"]), VALUES, max_size=3),
                min_size=0, max_size=8)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(rows=ROWS, size=st.integers(1, 64), batch=st.integers(1, 64), pretty=st.booleans())
def test_splitter_rows_are_the_rows_or_it_fails(rows, size, batch, pretty):
    document = {"id": "t", "metadata": {"note": '"data": [1]'}, "data": rows, "after": [{}]}
    text = json.dumps(document, indent=1 if pretty else None).encode("utf-8", "surrogatepass")
    with mock.patch.object(splitter_module, "BATCH_BYTES", batch):
        splitter, got = split_rows(text, size)
    if not splitter.failed:
        assert same(got, json.loads(text)["data"])
        assert splitter.envelope == {**json.loads(text), "data": []}


@pytest.mark.parametrize(
    "text",
    [b'{"meta": {"data": [{"x": 1}]}, "data": [{"a": 1}]}',  # a nested key first
     b'{"data": [{"a": 1}], "data": [{"a": 2}]}',  # duplicate key: json.loads keeps the last
     b'{"data": [{"a": 1}, 2]}', b'{"data": [{"a": NaN}]}', b'{"data": [{"a": 1}'],
)  # fmt: skip
def test_splitter_gives_up_rather_than_guess(text):
    for size in (1, 3, len(text)):
        splitter, rows = split_rows(text, size)
        assert splitter.failed


def test_an_ordinary_table_is_split_into_many_batches_without_failing():
    rows = [
        {"id": i, "s": "},{" * (i % 3), "n": {"x": [{}, {"y": i}]}, "f": i / 7} for i in range(500)
    ]
    text = json.dumps({"id": "t", "data": rows, "metadata": {"columns": []}}).encode()
    batches: list = []
    with mock.patch.object(splitter_module, "BATCH_BYTES", 256):
        splitter = RowSplitter("data", batches.append)
        for start in range(0, len(text), 1000):
            splitter.feed(text[start : start + 1000])
        splitter.finish()
    assert not splitter.failed and len(batches) > 20
    assert same([row for batch in batches for row in batch], rows)


def test_raw_and_prove_are_refused_together():
    # prove is handed each batch's bytes; raw would hand them over a second time
    with pytest.raises(ValueError, match="raw and prove"):
        RowSplitter("data", print, raw=True, prove=len)


@pytest.mark.parametrize(
    ("levels", "decodes"), [(1010, True), (1024, True), (1030, False), (5000, False)]
)
def test_a_document_is_decoded_to_1024_levels_whatever_the_python(levels, decodes):
    # json.loads stops near 1,000 levels on Python 3.11 and goes past 5,000 on 3.13;
    # the writes refuse values deeper than MAX_DEPTH, so reads stop there too
    document = "[" * levels + "]" * levels
    if decodes:
        assert depth.depth_of(fastjson.loads(document.encode())) == levels
    else:
        with pytest.raises(fastjson.NestingTooDeep):
            fastjson.loads(document.encode())
