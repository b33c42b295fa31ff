"""The streamed ``dtype_backend="pyarrow"`` read builds each Arrow column as it goes.

Text, number and boolean columns are built straight from their batches' Arrow arrays
and fingerprinted from them a slice at a time (``finish_arrow``); every other column is
fingerprinted and turned into its Arrow array as soon as the default read builds it
(``finish``), instead of the whole default frame first and ``to_backend`` after: the
frame and the write-back fingerprint must be exactly those of the old route, for every
payload the codec's strategies make.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from codec_strategies import payloads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mddframes.codec import stream
from mddframes.codec.fingerprint import FingerprintBuilder, FrameFingerprint, fingerprint
from mddframes.codec.stream import frame_from_chunks
from mddframes.emulator.scale import big_table
from mddframes.frames.backends import to_backend
from mddframes.frames.table import STREAM_THRESHOLD, arrow_finishers

pytest.importorskip("pyarrow")


def cells(frame: pd.DataFrame) -> list[str]:
    """Every cell with its exact type and value (``-0.0``, NaN, null, big ints...)."""
    return [f"{name}: {frame[name].array.tolist()!r}" for name in frame.columns]


def assert_same_fingerprint(got: FrameFingerprint | None, want: FrameFingerprint | None) -> None:
    assert (got is None) == (want is None)
    if got is None or want is None:
        return
    assert (got.columns, got.dtypes, got.n_rows) == (want.columns, want.dtypes, want.n_rows)
    assert got.first_value == want.first_value
    assert got.sums.keys() == want.sums.keys()
    for name, sums in want.sums.items():
        other = got.sums[name]
        assert (sums is None) == (other is None), name
        if sums is not None and other is not None:
            assert np.array_equal(sums, other), name


def arrow_route(
    chunks: list[bytes], kind: str
) -> tuple[pd.DataFrame | None, FrameFingerprint | None]:
    builder = FingerprintBuilder()
    finish, finish_arrow = arrow_finishers(builder)
    frame, _ = frame_from_chunks(chunks, kind, finish=finish, finish_arrow=finish_arrow)  # type: ignore[arg-type]
    if frame is None:
        return None, None
    return to_backend(frame, "pyarrow", consume=True), builder.finish(len(frame))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kind_and_payload=payloads(),
    ascii_only=st.booleans(),
    batch=st.sampled_from([1, 2, 3, stream.BATCH_ROWS]),
)
def test_columns_built_straight_to_arrow_equal_to_backend_of_the_default_frame(
    kind_and_payload, ascii_only, batch, monkeypatch
):
    kind, payload = kind_and_payload
    text = json.dumps(payload, ensure_ascii=ascii_only).encode("utf-8")
    chunks = [text[i : i + 97] for i in range(0, len(text), 97)]
    with monkeypatch.context() as patch:
        patch.setattr(stream, "BATCH_ROWS", batch)
        default, _ = frame_from_chunks(chunks, kind)
        got, got_print = arrow_route(chunks, kind)
    if default is None:
        assert got is None
        return
    want_print = fingerprint(default)
    want = to_backend(default, "pyarrow")
    assert got is not None
    assert list(got.columns) == list(want.columns)
    assert got.index.equals(want.index) and got.index.name == want.index.name
    assert list(got.dtypes) == list(want.dtypes)
    assert cells(got) == cells(want)
    assert_same_fingerprint(got_print, want_print)


def test_a_streamed_pyarrow_read_is_to_backend_of_the_default_read(client):
    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    table = big_table(table_id, n_rows=6_000, n_cols=12)
    table["data"][3]["external_ref"] = 2**64 + 1  # beyond int64: an object column
    table["data"][5]["note"] = "caf\u00e9 \U0001f600"
    client.api.put_table(table_id, table)
    default = client.read_table(table_id)
    arrow = client.read_table(table_id, dtype_backend="pyarrow")
    assert arrow.attrs["mddframes"].streamed
    assert arrow.attrs["mddframes"].kept.size > STREAM_THRESHOLD
    want = to_backend(default.copy(), "pyarrow")
    assert list(arrow.dtypes) == list(want.dtypes)
    assert cells(arrow) == cells(want)
    assert_same_fingerprint(
        arrow.attrs["mddframes"].fingerprint, default.attrs["mddframes"].fingerprint
    )
