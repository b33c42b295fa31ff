"""Fast column building and the streamed read of large tables.

- The codec's column builders give exactly what pandas' own constructors give
  (``pd.array``, ``pd.to_datetime``), on pandas 2.2 and 3.x, without warnings.
- The streamed parse (:func:`mddframes.codec.stream.frame_from_chunks`) gives exactly
  the frame of ``json.loads`` + ``from_payload``, however the document is cut into
  chunks, or hands the document back to ``json.loads`` when it cannot vouch for it.
- ``read_table`` streams answers above 1 MiB from the emulator: same frame, a
  compressed write-back context, and the safe writer works from it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from codec_strategies import payloads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scripted_service import API, make_client

from mddframes import ReadContext
from mddframes.codec import from_payload, stream
from mddframes.codec.dtypes import column_array, conform_datetimes
from mddframes.codec.stream import frame_from_chunks
from mddframes.codec.values import digest
from mddframes.emulator.scale import big_table
from mddframes.errors import ConcurrentModificationError, DataShapeError, ResponseFormatError
from mddframes.frames import iter_groups
from mddframes.frames.table import STREAM_THRESHOLD

# -- column builders vs pandas' own constructors ----------------------------------------

ZONES = st.sampled_from(["", "Z", "+00:00", "-00:00", "+01:00", "+0100", "-05:30", "+02:00"])
PLAIN_DATETIMES = st.builds(
    lambda moment, zone, spec: moment.isoformat(timespec=spec) + zone,
    st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    ZONES,
    st.sampled_from(["minutes", "seconds", "milliseconds", "microseconds"]),
)
DATE_STRINGS = st.one_of(
    st.none(),
    PLAIN_DATETIMES,
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 12, 31)).map(str),
    st.sampled_from(["", "NaT", "2024-13-01", "2024-01-01T25:00Z", "31/12/2024"]),
)


AWARE = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")


def reference_datetimes(values: list) -> object:
    """What a declared DATE/TIMESTAMP column should become, by a plain pandas parse.

    Naive and aware values mixed stay strings (pandas 3 refuses them; pandas 2.2 would
    give the naive ones the zone of the first aware one, so that case is decided here).
    """
    present = [v for v in values if v is not None]
    plain = [v for v in present if re.fullmatch(r"\d{4}-\d{2}-\d{2}(T.*)?", v)]
    if any(AWARE.search(v) for v in plain) and not all(AWARE.search(v) for v in plain):
        return None
    series = pd.Series(values, dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pandas 2.2, mixed offsets
        try:
            parsed = pd.to_datetime(series, format="ISO8601")
        except ValueError:
            parsed = None
    if parsed is None or parsed.dtype == object:
        if not all(AWARE.search(v) for v in present):
            return None
        try:
            parsed = pd.to_datetime(series, format="ISO8601", utc=True)
        except ValueError:
            return None
    if int(parsed.isna().sum()) != values.count(None):
        return None
    return parsed.array


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(DATE_STRINGS, min_size=1, max_size=6),
    declared=st.sampled_from(["DATE", "TIMESTAMP"]),
)
def test_declared_date_columns_parse_as_pandas_does_without_warnings(values, declared):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FutureWarning about mixed zones on pandas 2.2
        array = column_array(values, declared)
    expected = reference_datetimes(values)
    if expected is None or not any(values):
        assert array.dtype.kind != "M" or not any(values), (values, array)
        if any(values):
            assert list(array) == [pd.NA if v is None else v for v in values]
        return
    # the rule's unit and zone (codec/dtypes.py DTYPE_RULES): microseconds, aware in UTC
    expected = conform_datetimes(expected)
    if expected is None:  # finer than a microsecond: the strings are kept
        assert array.dtype.kind != "M", (values, array)
        return
    assert array.dtype == expected.dtype, values
    assert pd.Series(array).equals(pd.Series(expected)), values


@settings(max_examples=300, deadline=None)
@given(
    values=st.one_of(
        st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=6),
        st.lists(
            st.one_of(st.none(), st.integers(-(2**53), 2**53), st.floats(allow_nan=False)),
            max_size=6,
        ),
        st.lists(st.one_of(st.none(), st.booleans()), max_size=6),
    )
)
def test_masked_columns_equal_pd_array(values):
    types = {type(v) for v in values} - {type(None)}
    if types == {bool}:
        dtype = "boolean"
    elif float in types:
        dtype = "Float64"
    elif types:
        dtype = "Int64"
    else:
        return
    array = column_array(values)
    expected = pd.array(values, dtype=dtype)
    assert array.dtype == expected.dtype
    assert list(pd.isna(array)) == list(pd.isna(expected))
    for got, want in zip(array, expected, strict=True):
        if want is not pd.NA:
            assert got == want and np.signbit(float(got)) == np.signbit(float(want))


def test_nan_in_a_float_column_is_missing_like_null():
    array = column_array([1.5, float("nan"), None, -0.0], "DOUBLE")
    assert array.dtype == "Float64"
    assert list(pd.isna(array)) == [False, True, True, False]
    assert np.signbit(array[3])


def test_relative_words_in_a_date_column_stay_strings():
    # pandas reads "now" and "today" as the moment of the read: a date column holding
    # them would be rewritten with that moment on the next write
    for word in ("now", "today", " Now "):
        array = column_array(["2024-01-01", word], "DATE")
        assert array.dtype.kind != "M", word
        assert list(array) == ["2024-01-01", word]


def test_mixed_offsets_become_utc_instants_without_warnings():
    values = ["2024-03-01T10:00:00+01:00", "2024-03-01T10:00:00Z", None, "2024-03-01T10:00:00-0530"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        array = column_array(values, "TIMESTAMP")
        naive_and_aware = column_array(["2024-03-01T10:00:00", "2024-03-01T10:00:00Z"], "TIMESTAMP")
    assert str(array.tz) == "UTC"
    assert array[0] == pd.Timestamp("2024-03-01T09:00:00Z")
    assert array[3] == pd.Timestamp("2024-03-01T15:30:00Z")
    assert array[2] is pd.NaT
    assert naive_and_aware.dtype.kind != "M"  # no common zone: strings


# -- the streamed parse gives exactly what json.loads + from_payload give ----------------


def cells(frame: pd.DataFrame) -> list[str]:
    """Every cell with its exact type and value (``-0.0``, key order, big ints...)."""
    return [f"{name}: {frame[name].array.tolist()!r}" for name in frame.columns]


def assert_same_frame(streamed: pd.DataFrame, expected: pd.DataFrame, attrs: bool = True) -> None:
    assert list(streamed.columns) == list(expected.columns)
    assert streamed.index.equals(expected.index) and streamed.index.name == expected.index.name
    assert list(streamed.dtypes) == list(expected.dtypes)
    assert cells(streamed) == cells(expected)
    if attrs:
        assert streamed.attrs == expected.attrs


def split(text: bytes, sizes: list[int]) -> list[bytes]:
    """``text`` cut into pieces of the given sizes (cycled), down to single bytes."""
    pieces, start, turn = [], 0, 0
    while start < len(text):
        size = sizes[turn % len(sizes)]
        pieces.append(text[start : start + size])
        start += size
        turn += 1
    return pieces


ENCODINGS = st.sampled_from(
    [
        {"ensure_ascii": False},
        {"ensure_ascii": True},  # non-BMP characters as surrogate pairs
        {"indent": 2},
        {"separators": (",", ":")},
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kind_and_payload=payloads(),
    encoding=ENCODINGS,
    sizes=st.lists(st.integers(1, 300), min_size=1, max_size=4),
    batch=st.sampled_from([1, 2, 3, stream.BATCH_ROWS]),
)
def test_streamed_frame_is_the_frame_of_json_loads(
    kind_and_payload, encoding, sizes, batch, monkeypatch
):
    kind, payload = kind_and_payload
    text = json.dumps(payload, **encoding).encode("utf-8")
    expected = from_payload(json.loads(text), kind)

    with monkeypatch.context() as patch:
        patch.setattr(stream, "BATCH_ROWS", batch)  # rows split into columns this many at a time
        frame, kept = frame_from_chunks(split(text, sizes), kind)

    assert kept.content() == text and kept.size == len(text)
    assert kept.sha256 == hashlib.sha256(text).hexdigest()
    if frame is None:  # left to json.loads: only when the stream cannot vouch for it
        watch = stream._SurrogateWatch()  # the documented false alarm: \\ before a \uD8xx
        watch.feed(text, last=True)
        assert len(expected) < 2 or watch.found, "a payload of 2+ object rows must stream"
        return
    assert_same_frame(frame, expected)


def table_text(rows: list[dict], columns: list[dict] | None = None) -> bytes:
    body = {"id": "T1", "metadata": {"columns": columns or []}, "data": rows}
    return json.dumps(body, ensure_ascii=False).encode()


@pytest.mark.parametrize(
    "number",
    ["0.1", "1e300", "-0.0", "5e-324", "1E5", "2.50", "1e-400", "1.7976931348623157e308",
     "0.30000000000000004", "-0", "1e400", "123456789012345678901234567890",
     "-9223372036854775808", "9223372036854775807", "18446744073709551617"],
)  # fmt: skip
def test_numbers_come_out_as_json_loads_makes_them(number):
    rows = [{"n": "x"}, {"n": "y"}]
    text = table_text(rows).replace(b'"x"', number.encode()).replace(b'"y"', b"1")
    nested = text.replace(number.encode(), b'{"deep": [' + number.encode() + b"]}")
    for document in (text, nested):
        frame, _ = frame_from_chunks([document])
        assert frame is not None
        assert_same_frame(frame, from_payload(json.loads(document)))


def test_strings_escapes_and_key_order_are_kept():
    rows = [
        {"b": "\u00e9\u00e8 \U0001f600", "a": {"z": 1, "y": [1, {"q": "\x00\t\n"}]}},
        {"a": 'quote " backslash \\ slash /', "c": "\u2028"},
        {"b": None, "a": {"y": 2, "z": 1}},
    ]
    for ensure_ascii in (True, False):
        text = json.dumps({"data": rows}, ensure_ascii=ensure_ascii).encode()
        frame, _ = frame_from_chunks(split(text, [5, 1, 3]))
        assert frame is not None
        assert_same_frame(frame, from_payload(json.loads(text)))
        assert list(frame["a"][0]) == ["z", "y"] and list(frame["a"][2]) == ["y", "z"]


@pytest.mark.parametrize(
    "escape", [rb"\ud800", rb"\udc00", rb"\ud83d\ud83d", rb"x\udfff\ud800", rb"\uDBFF"]
)
def test_unpaired_surrogate_escapes_come_out_exactly_as_json_loads_makes_them(escape):
    # orjson refuses them and yajl turns them into "?": the batch goes to json.loads
    text = table_text([{"s": "a"}, {"s": "b"}]).replace(b'"a"', b'"' + escape + b'"')
    assert json.loads(text)["data"][0]["s"] != "?"
    for sizes in ([len(text)], [1], [7, 3]):
        frame, kept = frame_from_chunks(split(text, sizes))
        assert kept.content() == text
        assert frame is not None
        assert_same_frame(frame, from_payload(json.loads(text)))
        assert frame["s"][0] == json.loads(text)["data"][0]["s"]


SURROGATE_TEXT = st.text(
    alphabet=st.sampled_from(
        ["\\", "u", "d", "8", "c", "0", "x", "\ud800", "\udc00", "\U0001f600"]
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(SURROGATE_TEXT, min_size=2, max_size=4),
    sizes=st.lists(st.integers(1, 20), min_size=1, max_size=3),
)
def test_surrogates_and_backslashes_never_give_a_wrong_frame(texts, sizes):
    text = json.dumps({"data": [{"s": t} for t in texts]}, ensure_ascii=True).encode()
    frame, _ = frame_from_chunks(split(text, sizes))
    decoded = [row["s"] for row in json.loads(text)["data"]]
    if any(0xD800 <= ord(c) <= 0xDFFF for t in decoded for c in t):
        # yajl would have read "?": such a batch is decoded by json.loads, or the
        # whole document is left to it (None); never a "?" in the frame
        assert frame is None or frame["s"].tolist() == decoded
    if frame is not None:
        assert frame["s"].tolist() == decoded


def test_batches_of_every_kind_give_back_every_value(monkeypatch):
    values = [
        [1, None, 2**62, -(2**63)],  # int64
        [2**63, 1, None, 2],  # beyond int64 in one batch only
        ["ab\x00", "x", None, "yy"],  # a trailing NUL numpy would drop
        ["\u00e9t\u00e9", "a", "b", None],  # not ASCII
        ["x" * 500, "a", "b", "c"],  # one long string among short ones
        ["a\x00b", "c", None, ""],  # a NUL inside a value: the joined batch would cut it
        ["", None, "\ud800", "\U0001f600 \u6771"],  # empty, a lone surrogate, wide text
        [1.5, -0.0, None, 1e308],
        [True, None, False, True],
        [None, None, None, None],
        [{"a": 1}, [1], "s", 2],
    ]
    rows = [{"v": v} for batch in values for v in batch]
    text = json.dumps({"data": rows}).encode()
    monkeypatch.setattr(stream, "BATCH_ROWS", 4)
    frame, _ = frame_from_chunks(split(text, [64]))
    assert frame is not None
    assert repr(frame["v"].tolist()) == repr([v for batch in values for v in batch])
    assert_same_frame(frame, from_payload(json.loads(text)))


def test_a_streamed_text_column_shares_repeated_values_and_keeps_distinct_ones():
    words = ["Straße", "東京", "Łódź"]
    rows = [{"kind": words[i % 3], "unique": f"row {i} ü"} for i in range(20_000)]
    frame, _ = frame_from_chunks(split(json.dumps({"data": rows}).encode(), [65_536]))
    assert frame is not None
    kinds = frame["kind"].array.to_numpy()
    assert len({id(v) for v in kinds}) == 3  # one object per distinct value
    assert frame["unique"].tolist() == [row["unique"] for row in rows]
    assert frame["kind"].tolist() == [row["kind"] for row in rows]


def test_paired_surrogate_escapes_split_anywhere_still_stream():
    text = json.dumps({"data": [{"s": "\U0001f600" * 3}, {"s": "\U0010ffff"}]}).encode()
    assert rb"\ud83d\ude00" in text
    for size in range(1, 14):
        frame, _ = frame_from_chunks(split(text, [size]))
        assert frame is not None, size
        assert frame["s"].tolist() == ["\U0001f600" * 3, "\U0010ffff"]


@pytest.mark.parametrize(
    "text",
    [
        b'{"data": [{"a": 1}, [1, 2], {"a": 2}]}',  # a row that is not an object
        b'{"data": {"item": {"a": 1}}}',  # "data.item" of an object, not a list
        b'{"data": []}',
        b'{"rows": [{"a": 1}, {"a": 2}]}',  # a tolerated spelling: json.loads handles it
        b'[{"data": [{"a": 1}, {"a": 2}]}]',
        b'{"data": [{"a": 1}, {"a": 2}]} trailing',
        b'{"data": [{"a": NaN}, {"a": 2}]}',
        b'\xef\xbb\xbf{"data": [{"a": 1}, {"a": 2}]}',
        b'{"data": [{"a": "\xff"}, {"a": 2}]}',
        b'{"data": [{"a": 1}, {"a": 2}',
    ],
)
def test_documents_the_stream_cannot_vouch_for_are_left_to_json_loads(text):
    frame, kept = frame_from_chunks(split(text, [4]))
    assert frame is None
    assert kept.content() == text


def test_kept_chunks_give_back_the_document_in_pieces():
    text = table_text([{"n": i, "s": f"{i:08d}"} for i in range(20_000)])
    _, kept = frame_from_chunks(split(text, [65536]))
    pieces = list(kept.chunks(size=4096))
    assert b"".join(pieces) == text and len(pieces) > 10
    assert kept.compressed_size < len(text) / 3
    assert kept.loads() == json.loads(text)
    assert "compressed" in repr(kept) and "00000001" not in repr(kept)


# -- read_table streams large answers from the emulator ----------------------------------

BIG_ROWS = 6_000  # about 1.6 MB of JSON: above read_table's 1 MiB threshold


@pytest.fixture
def big(client):
    """A table of the sample data replaced by a large one; its id and payload."""
    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    payload = big_table(table_id, n_rows=BIG_ROWS, n_cols=12)
    payload["data"][3]["external_ref"] = 2**64 + 1  # beyond int64: the exact parse
    payload["data"][5]["note"] = "caf\u00e9 \U0001f600"
    client.api.put_table(table_id, payload)
    return table_id, client.api.get_table(table_id)


def test_a_large_table_is_streamed_into_the_same_frame(client, big):
    table_id, payload = big
    with client.api.get_table_stream(table_id) as body:
        assert body.length is not None and body.length > STREAM_THRESHOLD

    frame = client.read_table(table_id)

    assert_same_frame(frame, from_payload(payload), attrs=False)
    context = frame.attrs["mddframes"]
    assert context.streamed and context.kept.size == body.length
    assert client.contexts.get("table", table_id) is context
    assert context.load_document() == payload  # parsed again from the kept document
    assert context.digest == digest(payload)
    assert frame["external_ref"].dtype == object and frame["external_ref"][3] == 2**64 + 1


def test_read_tables_streams_a_large_table_with_one_request(client, emu, big):
    table_id, payload = big
    emu.reset_counters()
    long = client.read_tables([table_id], progress=False)
    assert emu.counters().get("getTable", 0) == 1
    ((group_id, rows),) = iter_groups(long)  # the table as a single read gives it
    assert group_id == table_id
    assert_same_frame(rows, from_payload(payload), attrs=False)
    context = client.contexts.get("table", table_id)
    assert context.streamed and context.load_document() == payload


def test_the_safe_writer_works_from_a_streamed_context(client, big, tmp_path):
    table_id, payload = big
    frame = client.read_table(table_id)

    unchanged = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert unchanged.status == "unchanged"

    frame.loc[7, "note"] = "edited"
    frame.loc[9, "quantity"] = 4242
    result = client.write_table(table_id, frame, backup_dir=tmp_path)
    assert result.status == "written" and result.verified
    assert len(result.diff.changed) == 2
    after = client.api.get_table(table_id)
    assert after["data"][7]["note"] == "edited" and after["data"][9]["quantity"] == 4242
    # every other row comes back exactly as it was, key order included
    for position in (0, 3, 5, 8, BIG_ROWS - 1):
        assert json.dumps(after["data"][position]) == json.dumps(payload["data"][position])
    assert json.loads(result.backup.read_text())["payload"] == payload


def test_a_change_behind_a_streamed_read_is_named(client, emu, big, tmp_path):
    table_id, _ = big
    frame = client.read_table(table_id)
    emu.touch_table(table_id)
    frame.loc[1, "note"] = "mine"
    with pytest.raises(ConcurrentModificationError) as caught:
        client.write_table(table_id, frame, backup_dir=tmp_path)
    assert len(caught.value.changes) >= 1 and table_id in str(caught.value)


def test_a_streamed_context_survives_pickling_with_its_frame(client, big):
    table_id, payload = big
    frame = client.read_table(table_id)
    again = pickle.loads(pickle.dumps(frame))
    context = again.attrs["mddframes"]
    assert isinstance(context, ReadContext) and context.streamed
    assert (
        context.load_document() == payload and context.read_at == frame.attrs["mddframes"].read_at
    )
    with pytest.raises(AttributeError, match="immutable"):
        context.object_id = "other"  # type: ignore[misc]


# -- broken large answers: the same errors as small ones ---------------------------------


@pytest.fixture
def service(script):  # noqa: F811 (the fixture imported above)
    """The scripted HTTP server of test_http_session (a real server on 127.0.0.1)."""
    return script


def large_answer(body: bytes, *, length: bool = True) -> object:
    def answer(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if length:
            handler.send_header("Content-Length", str(len(body)))
        else:
            handler.send_header("Connection", "close")  # the end of the body is the end
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()
        handler.close_connection = True

    return answer


def padded(document: bytes) -> bytes:
    """``document`` with enough trailing whitespace to be streamed."""
    return document + b" " * (STREAM_THRESHOLD + 10)


def test_a_large_answer_of_unknown_length_is_streamed(service):
    plan, url = service
    rows = [{"id": i, "code": f"{i:06d}"} for i in range(40_000)]
    body = json.dumps({"id": "t", "data": rows}).encode()
    plan.routes[f"{API}/table/t"] = large_answer(body, length=False)
    with make_client(url) as client:
        frame = client.read_table("t")
    assert frame.attrs["mddframes"].streamed
    assert frame["code"].tolist()[:2] == ["000000", "000001"] and len(frame) == 40_000


@pytest.mark.parametrize(
    ("document", "error", "match"),
    [
        (b'{"id": "t", "data": [{"a": 1}, {"a": 2}', ResponseFormatError, "truncated"),
        (b'[{"data": [{"a": 1}, {"a": 2}]}]', ResponseFormatError, "expected a JSON object"),
        (b'{"id": "t", "data": [{"a": 1}, 7]}', DataShapeError, "row 1 of 'data' is a int"),
        (b'{"id": "t", "data": {"item": {"a": 1}}}', DataShapeError, "must be a list"),
    ],
)
def test_a_broken_large_answer_fails_as_a_small_one_does(service, document, error, match):
    plan, url = service
    plan.routes[f"{API}/table/t"] = large_answer(padded(document))
    plan.routes[f"{API}/table/small"] = large_answer(document)
    with make_client(url) as client:
        with pytest.raises(error, match=match) as large:
            client.read_table("t")
        with pytest.raises(error, match=match) as small:
            client.read_table("small")
    assert type(large.value) is type(small.value)


def test_a_large_answer_cut_off_is_a_response_format_error(service):
    plan, url = service
    body = padded(b'{"data": [{"a": 1}, {"a": 2}]}')

    def short(handler):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body) + 1000))
        handler.end_headers()
        handler.wfile.write(body)
        handler.wfile.flush()
        handler.close_connection = True

    plan.routes[f"{API}/table/t"] = short
    with make_client(url) as client, pytest.raises(ResponseFormatError, match="cut off|announced"):
        client.read_table("t")


@pytest.mark.parametrize(
    "text",
    [
        b'{"data": [{"a": 1, "b": "x"}, {"a": 1180591620717411303424, "b": "\\ud800"}]}',
        b'{"data": [{"a": NaN}, {"a": 2}]}',
        b'{"id": "t", "data": [{"a": 1.5}, {"a": -0.0}], "after": {"data": 1}}',
        json.dumps(
            {"x": 1, "data": [{"k": i, "s": "},{" * i} for i in range(3000)], "z": [1]}
        ).encode(),
    ],
)
def test_load_document_is_json_loads_of_the_kept_bytes(text):
    from mddframes.codec.kept import keep_chunks
    from mddframes.codec.stream import load_document

    kept = keep_chunks(split(text, [7, 100, 65536]))
    loaded = load_document(kept, "table")
    expected = json.loads(text)
    assert json.dumps(loaded) == json.dumps(expected) and list(loaded) == list(expected)
    assert [list(map(type, r.values())) for r in loaded["data"]] == [
        list(map(type, r.values())) for r in expected["data"]
    ]
