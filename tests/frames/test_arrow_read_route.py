"""The streamed ``dtype_backend="pyarrow"`` read builds each Arrow column as it goes.

Text, number and boolean columns are built straight from their batches' Arrow arrays
and fingerprinted from them a slice at a time (``from_arrow``); every other column is
fingerprinted and turned into its Arrow array as soon as the default read builds it
(``finish``), instead of the whole default frame first and ``to_backend`` after: the
frame and the write-back fingerprint must be exactly those of the old route, for every
payload the codec's strategies make.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from codec_strategies import payloads
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from needs import require

from mddframes.codec import fingerprint as fingerprint_module
from mddframes.codec import from_payload, splitter, stream
from mddframes.codec.dtypes import STRING_DTYPE
from mddframes.codec.fingerprint import FingerprintBuilder, FrameFingerprint, fingerprint
from mddframes.codec.stream import frame_from_chunks
from mddframes.emulator.scale import big_table
from mddframes.frames.backends import default_slice, to_backend
from mddframes.frames.table import STREAM_THRESHOLD, arrow_finishers

require("pyarrow")


def cells(frame: pd.DataFrame) -> list[str]:
    """Every cell with its exact type and value (``-0.0``, NaN, null, big ints...)."""
    return [f"{name}: {frame[name].array.tolist()!r}" for name in frame.columns]


def assert_same_fingerprint(got: FrameFingerprint | None, want: FrameFingerprint | None) -> None:
    assert (got is None) == (want is None)
    if got is None or want is None:
        return
    assert (got.columns, got.dtypes, got.n_rows) == (want.columns, want.dtypes, want.n_rows)
    assert got.first_value == want.first_value
    assert got.digests.keys() == want.digests.keys()
    for name, sums in want.digests.items():
        other = got.digests[name]
        assert (sums is None) == (other is None), name
        if sums is not None and other is not None:
            assert np.array_equal(sums, other), name


def arrow_route(
    chunks: list[bytes], kind: str
) -> tuple[pd.DataFrame | None, FrameFingerprint | None]:
    builder = FingerprintBuilder()
    finish, from_arrow = arrow_finishers(builder)
    frame, _ = frame_from_chunks(chunks, kind, finish=finish, from_arrow=from_arrow)  # type: ignore[arg-type]
    if frame is None:
        return None, None
    return to_backend(frame, "pyarrow", consume=True), builder.finish(len(frame))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kind_and_payload=payloads(),
    ascii_only=st.booleans(),
    batch=st.sampled_from([1, 2, 3, stream.BATCH_ROWS]),
    batch_bytes=st.sampled_from([64, 1 << 20]),
)
def test_columns_built_straight_to_arrow_equal_to_backend_of_the_default_frame(
    kind_and_payload, ascii_only, batch, batch_bytes, monkeypatch
):
    kind, payload = kind_and_payload
    assert_arrow_route_is_the_default(kind, payload, ascii_only, batch, batch_bytes, monkeypatch)


def assert_arrow_route_is_the_default(
    kind, payload, ascii_only, batch, batch_bytes, monkeypatch
) -> None:
    try:
        text = json.dumps(payload, ensure_ascii=ascii_only).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate travels as its escape only
        text = json.dumps(payload).encode("utf-8")
    chunks = [text[i : i + 97] for i in range(0, len(text), 97)]
    with monkeypatch.context() as patch:
        patch.setattr(stream, "BATCH_ROWS", batch)
        patch.setattr(splitter, "BATCH_BYTES", batch_bytes)  # many splitter batches too
        default, _ = frame_from_chunks(chunks, kind)
        got, got_print = arrow_route(chunks, kind)
    if default is None:
        assert got is None
        return
    default = from_payload(json.loads(text), kind)  # the oracle: the plain route
    want = to_backend(default, "pyarrow")
    want_print = fingerprint(want, default_slice)  # as a write fingerprints the frame
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
    # the read's fingerprint is the one a write takes of the frame unchanged
    assert_same_fingerprint(arrow.attrs["mddframes"].fingerprint, fingerprint(want, default_slice))


# Columns of the kinds the Arrow route builds straight (text, ints, floats, booleans),
# with what makes it fall back: NaN, NUL and lone surrogates in text, types that change
# from one batch to the next, all-null columns, every declared family
PLAIN_TEXT = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
    st.sampled_from(["", "a\x00b", "\ud800", "2024-01-31", "caf\u00e9 \U0001f600", "007"]),
)
# date strings: naive and aware, several zones, finer units, strings pandas reads as
# NaT or as the time of the read: every reason a batch's parse may differ from the whole's
DATE_TEXT = st.one_of(
    st.builds(
        "{}-{:02d}-{:02d}{}".format,
        st.integers(1970, 2100),
        st.integers(1, 12),
        st.integers(1, 28),
        st.sampled_from(
            [
                "",
                "T10:00:00",
                "T10:00:00Z",
                "T10:00:00+01:00",
                "T23:59:59+00:00",
                "T10:00:00.123456",
                "T10:00:00.123456789",
                "T10:00:00-05:30",
            ]
        ),
    ),
    st.sampled_from(["now", "", "NaT", "not a date", "2024-02-30"]),
)
PLAIN_KINDS = {
    "text": PLAIN_TEXT,
    "date": DATE_TEXT,
    "int": st.integers(-(2**63), 2**63 - 1),
    "float": st.one_of(st.floats(allow_infinity=False), st.sampled_from([-0.0, 0.5])),
    "bool": st.booleans(),
    "null": st.none(),
    "changing": st.one_of(st.integers(0, 9), PLAIN_TEXT, st.booleans()),
}
DECLARED = [None, "VARCHAR(20)", "INTEGER", "DOUBLE", "DECIMAL(10,2)", "BOOLEAN", "DATE",
            "TIMESTAMP", "JSON", "NUMBER"]  # fmt: skip


@st.composite
def plain_tables(draw: st.DrawFn) -> dict[str, object]:
    kinds = draw(st.lists(st.sampled_from(sorted(PLAIN_KINDS)), min_size=1, max_size=4))
    names = [f"c{i}" for i in range(len(kinds))]
    n_rows = draw(st.integers(1, 40))
    rows = []
    for _ in range(n_rows):
        row = {}
        for name, kind in zip(names, kinds, strict=True):
            presence = draw(st.sampled_from(["value", "value", "value", "null", "absent"]))
            if presence != "absent":
                row[name] = None if presence == "null" else draw(PLAIN_KINDS[kind])
        rows.append(row)
    declared = [
        {"name": name, "dataType": data_type}
        for name in names
        if (data_type := draw(st.sampled_from(DECLARED))) is not None
    ]
    return {"id": "T1", "metadata": {"columns": declared}, "data": rows}


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(payload=plain_tables(), ascii_only=st.booleans(), batch_bytes=st.sampled_from([1, 64]))
def test_plain_columns_over_many_batches_equal_to_backend_of_the_default_frame(
    payload, ascii_only, batch_bytes, monkeypatch
):
    assert_arrow_route_is_the_default(
        "table", payload, ascii_only, stream.BATCH_ROWS, batch_bytes, monkeypatch
    )


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    values=st.lists(st.one_of(st.none(), DATE_TEXT, DATE_TEXT, DATE_TEXT), min_size=1, max_size=30),
    declared=st.sampled_from(["DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE"]),
    batch_bytes=st.sampled_from([1, 64, 1 << 20]),
)
# a fixed offset: pandas 2.x parses it to pytz's FixedOffset, and Arrow gives back a
# datetime.timezone: such a column takes the whole column's parse (CI found it on 2.2)
@example(values=["2024-01-02T10:00:00+01:00"] * 2, declared="TIMESTAMP", batch_bytes=1)
def test_dates_parsed_a_batch_at_a_time_equal_the_whole_columns_parse(
    values, declared, batch_bytes, monkeypatch
):
    payload = {"metadata": {"columns": [{"name": "at", "dataType": declared}]},
               "data": [{"at": v} for v in values]}  # fmt: skip
    assert_arrow_route_is_the_default(
        "table", payload, True, stream.BATCH_ROWS, batch_bytes, monkeypatch
    )


def test_only_the_columns_without_a_plain_arrow_image_take_the_default_route(monkeypatch):
    monkeypatch.setattr(splitter, "BATCH_BYTES", 256)
    types = {"text": "VARCHAR", "count": "INTEGER", "price": "DOUBLE", "flag": "BOOLEAN",
             "day": "DATE", "doc": "JSON", "cents": "DECIMAL(10,2)"}  # fmt: skip
    rows = [
        {"text": f"t\u00e9{i}", "count": i, "price": i / 4, "flag": i % 2 == 0,
         "day": "2024-01-02", "doc": {"i": i}, "cents": i, "loose": f"{i}" if i % 3 else None}
        for i in range(200)
    ]  # fmt: skip
    payload = {"metadata": {"columns": [{"name": n, "dataType": t} for n, t in types.items()]},
               "data": rows}  # fmt: skip
    text = json.dumps(payload).encode()
    by_default: list[str] = []
    builder = FingerprintBuilder()
    finish, from_arrow = arrow_finishers(builder)

    def default_finish(name: str, array: object) -> object:
        by_default.append(name)
        return finish(name, array)

    frame, _ = frame_from_chunks([text], "table", finish=default_finish, from_arrow=from_arrow)
    assert frame is not None
    assert by_default == ["doc", "cents"]  # JSON, ints declared DECIMAL
    assert str(frame["day"].dtype).startswith("timestamp[")  # parsed a batch at a time
    assert frame["text"].array._pa_array.num_chunks > 1  # one Arrow chunk per batch
    assert str(frame["loose"].dtype) == "string[pyarrow]"
    want = to_backend(from_payload(payload), "pyarrow")
    assert_same_fingerprint(builder.finish(len(frame)), fingerprint(want, default_slice))


def test_a_fingerprint_converted_a_slice_at_a_time_has_the_sums_of_the_whole(monkeypatch):
    monkeypatch.setattr(fingerprint_module, "CONVERT_SLICE_ROWS", 2 * fingerprint_module.BLOCK_ROWS)
    n_rows = 5 * fingerprint_module.BLOCK_ROWS + 7
    values = [None if i % 7 == 0 else f"v\u00e9{i % 13}" for i in range(n_rows)]
    values[: 3 * fingerprint_module.BLOCK_ROWS] = [None] * (3 * fingerprint_module.BLOCK_ROWS)
    default = pd.array(values, dtype=STRING_DTYPE)
    arrow = to_backend(pd.DataFrame({"s": default}), "pyarrow")["s"].array
    want = FingerprintBuilder()
    want.add("s", default)
    got = FingerprintBuilder()
    seen: list[int] = []

    def convert(start: int, stop: int) -> object:
        seen.append(stop - start)
        return default_slice(arrow[start:stop])

    got.add_converted("s", n_rows, convert)
    assert_same_fingerprint(got.finish(n_rows), want.finish(n_rows))
    assert max(seen) <= fingerprint_module.CONVERT_SLICE_ROWS  # never the whole column at once
