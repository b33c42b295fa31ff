"""The frame <-> Arrow conversion of snapshots: any table or mapping frame the codec makes
comes back from Parquet equal, dtypes and JSON cells included (property test)."""

from __future__ import annotations

import hashlib
import io
import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from codec_strategies import payloads
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mddframes.codec import values
from mddframes.codec.dtypes import UnbuiltColumn, column_array
from mddframes.codec.frame import from_payload, payload_arrays
from mddframes.codec.frame_overlay import to_payload
from mddframes.codec.values import canonical_cells, canonical_json, digest
from mddframes.errors import DataShapeError
from mddframes.snapshot.arrow_columns import (
    arrays_to_arrow,
    arrow_to_frame,
    dtype_metadata,
    frame_to_arrow,
    joined_column,
)
from mddframes.snapshot.bundles import part_file
from mddframes.snapshot.layout import envelope_of


def _through_parquet(frame: pd.DataFrame) -> pd.DataFrame:
    buffer = io.BytesIO()
    pq.write_table(frame_to_arrow(frame), buffer)
    buffer.seek(0)
    return arrow_to_frame(pq.read_table(buffer))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads())
def test_any_codec_frame_comes_back_from_parquet_equal(kind_and_payload):
    kind, payload = kind_and_payload
    frame = from_payload(payload, kind)
    if len(set(map(str, frame.columns))) != len(frame.columns):
        return  # names equal once made text: not a frame a payload gives
    back = _through_parquet(frame)
    pd.testing.assert_frame_equal(back, frame)
    # the payload a diff rebuilds from it is the one the original frame rebuilds
    envelope = envelope_of(payload, kind)
    assert digest(to_payload(back, envelope, kind=kind)) == digest(
        to_payload(frame, envelope, kind=kind)
    )


def test_cells_without_an_arrow_type_are_canonical_json_text():
    frame = pd.DataFrame(
        {"v": pd.array([{"b": 1, "a": [1.0, 2**70]}, None, "007", 1], dtype=object)}
    )
    table = frame_to_arrow(frame)
    assert table.column("v").to_pylist() == ['{"a":[1.0,1180591620717411303424],"b":1}', None,
                                             '"007"', "1"]  # fmt: skip
    assert table.schema.field("v").metadata[b"mddframes.encoding"] == b"json"
    pd.testing.assert_frame_equal(_through_parquet(frame), frame)


def test_a_frame_without_a_plain_range_index_is_refused():
    with pytest.raises(DataShapeError, match="RangeIndex from 0"):
        frame_to_arrow(pd.DataFrame({"a": [1]}, index=[5]))


def test_object_files_are_numbered_parts_of_their_kinds_folder():
    assert part_file("table", 0) == "tables/part-00000.parquet"
    assert part_file("mapping", 12) == "mappings/part-00012.parquet"


#: JSON cells of any shape: big integers, floats of every size (exponents), any text
#: (control characters, non-ASCII, lone surrogates), NaN and infinities, nested
CELLS = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats() | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(CELLS, max_size=6))
def test_a_columns_cells_are_each_cells_canonical_json(cells):
    missing = [c is None or (type(c) is float and c != c) for c in cells]
    expected = [None if gone else canonical_json(c) for c, gone in zip(cells, missing, strict=True)]
    assert canonical_cells(cells) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=4), CELLS, max_size=4), max_size=12))
def test_a_lists_digest_is_the_sha256_of_its_canonical_json(items):
    for value in (items, [*items, None, 1.5, "x"]):
        try:
            expected = hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
        except UnicodeEncodeError:  # a lone surrogate has no UTF-8: neither digests it
            with pytest.raises(UnicodeEncodeError):
                digest(value)
            continue
        assert digest(value) == expected


def _as_series_arrays(arrays: dict[str, Any]) -> dict[str, Any]:
    # object columns as a frame holds them (what the readers hand the snapshot)
    return {name: pd.arrays.NumpyExtensionArray(a) if isinstance(a, np.ndarray) else a
            for name, a in arrays.items()}  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads())
def test_unbuilt_columns_make_the_arrow_table_the_frame_makes(kind_and_payload):
    kind, payload = kind_and_payload
    frame = from_payload(payload, kind)
    arrays, size = payload_arrays(payload, kind, unbuilt=True)
    table = arrays_to_arrow(_as_series_arrays(arrays), frame.index.name, rows=size)
    assert table.equals(frame_to_arrow(frame), check_metadata=True)


#: Column values of every kind: ints, floats (NaN too), booleans, text, mixed, nested,
#: big ints, all missing
COLUMN_VALUES = st.one_of(
    st.lists(st.none() | st.integers(-(2**63), 2**63 - 1), max_size=5),
    st.lists(
        st.none() | st.just(math.nan) | st.floats() | st.integers(-(2**53), 2**53), max_size=5
    ),
    st.lists(st.none() | st.booleans(), max_size=5),
    st.lists(st.none() | st.text(max_size=4), max_size=5),
    st.lists(st.none() | CELLS, max_size=5),
)
PLAIN_TYPES = st.sampled_from([None, "VARCHAR", "BIGINT", "DOUBLE", "DECIMAL", "BOOLEAN", "JSON"])


@settings(max_examples=300, deadline=None)
@given(st.lists(COLUMN_VALUES, min_size=1, max_size=4), PLAIN_TYPES)
@example([[1.5, math.nan, None], [2, None]], "DOUBLE")  # a NaN among numbers: missing
def test_a_column_joined_from_unbuilt_values_is_the_column_of_the_joined_arrays(parts, data_type):
    plain = [column_array(values, data_type, unbuilt=True) for values in parts]
    built = [_as_series_arrays({"c": column_array(values, data_type)})["c"] for values in parts]
    for one, array in zip(plain, built, strict=True):
        assert type(one) is UnbuiltColumn  # no date column here: every one is left unbuilt
        assert dtype_metadata(one.dtype) == dtype_metadata(array.dtype)
        made = _as_series_arrays({"c": one.array()})["c"]
        assert type(made) is type(array) and made.dtype == array.dtype
        pd.testing.assert_extension_array_equal(made, array)
    # the parts of one dtype are what a snapshot's group joins: unbuilt, or some of each
    same = [i for i, a in enumerate(built) if a.dtype == built[0].dtype]
    expected = {"c": type(built[0])._concat_same_type([built[i] for i in same])}
    unbuilt = [plain[i] if type(plain[i]) is UnbuiltColumn else built[i] for i in same]
    mixed = [plain[i] if n % 2 == 0 and type(plain[i]) is UnbuiltColumn else built[i]
             for n, i in enumerate(same)]  # fmt: skip
    for columns in (unbuilt, mixed):
        try:
            table = arrays_to_arrow({"c": joined_column(columns)})
        except (UnicodeError, ValueError) as error:  # a lone surrogate: neither route writes it
            with pytest.raises(type(error)):
                arrays_to_arrow(expected)
            continue
        assert table.equals(arrays_to_arrow(expected), check_metadata=True)


#: Floats of every magnitude, the tiny ones (which orjson writes otherwise) often
FINITE_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.builds(
    lambda m, e: m * 10.0**e, st.floats(-10, 10), st.integers(-40, 40)
)
FINITE_CELLS = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**80), max_value=2**80)
    | FINITE_FLOATS | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


@pytest.fixture
def monkeypatch_group(monkeypatch):
    return lambda size: monkeypatch.setattr(values, "_DIGEST_GROUP", size)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=FINITE_CELLS, group=st.integers(1, 3))
def test_the_fast_digest_of_a_decoded_document_is_the_digest(value, group, monkeypatch_group):
    monkeypatch_group(group)  # a list hashed a group of items at a time, groups of 1 to 3
    for one in (value, [value, {"n": value}, 1e-7, 2.5e-05, "x"], {"rows": [value, value]}):
        try:
            expected = hashlib.sha256(canonical_json(one).encode("utf-8")).hexdigest()
        except UnicodeEncodeError:  # a lone surrogate has no UTF-8: neither digests it
            with pytest.raises(UnicodeEncodeError):
                digest(one, finite=True)
            continue
        assert digest(one, finite=True) == expected == digest(one)
