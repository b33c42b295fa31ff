"""The frame <-> Arrow conversion of snapshots: any table or mapping frame the codec makes
comes back from Parquet equal, dtypes and JSON cells included (property test)."""

from __future__ import annotations

import hashlib
import io

import pandas as pd
import pyarrow.parquet as pq
import pytest
from codec_strategies import payloads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mddframes.codec.frame import from_payload, to_payload
from mddframes.codec.values import canonical_cells, canonical_json, digest
from mddframes.errors import DataShapeError
from mddframes.snapshot.arrow_columns import arrow_to_frame, frame_to_arrow
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
