"""The native route of a streamed table read (codec/arrow_rows): exact, or it stands aside.

The oracle is the plain route, ``from_payload(json.loads(document))``, never another
fast path. Each departure of pyarrow's JSON reader from ``json.loads`` is pinned by a
document that holds it: the frame must be the plain one, and the route reported must be
the one the guard sends it to (so a guard that stops working fails here, not only a
wrong value).
"""

from __future__ import annotations

import datetime as dt
import json
import warnings

import numpy as np
import pytest
from codec_strategies import payloads
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from needs import require

from mddframes.codec import from_payload, splitter
from mddframes.codec.arrow_rows import ArrowRows, text_objects
from mddframes.codec.splitter import RowSplitter
from mddframes.codec.stream import frame_from_chunks
from mddframes.frames.table import default_from_arrow

require("pyarrow")


def cells(frame) -> list[str]:
    """Every cell with its exact type and value (``-0.0``, NA, big ints...), and dtypes."""
    return [f"{name} {frame[name].dtype}: {frame[name].array.tolist()!r}" for name in frame]


def native_read(text: bytes, kind: str = "table", *, size: int = 97):
    routes: list[str] = []
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the plain route's DeclaredTypeWarnings alike
        frame, _ = frame_from_chunks(chunks, kind, from_arrow=default_from_arrow,
                                     on_route=routes.append)  # fmt: skip
    return frame, routes[0]


def plain(text: bytes, kind: str = "table"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return from_payload(json.loads(text), kind)


def table_text(values: list, data_type: str | None = None, *, raw: bool = False) -> bytes:
    """A table of one column ``v`` holding ``values`` (JSON texts when ``raw``)."""
    columns = [] if data_type is None else [{"name": "v", "dataType": data_type}]
    cells_text = values if raw else [json.dumps(v) for v in values]
    rows = ", ".join('{"v": ' + cell + ', "k": "x"}' for cell in cells_text)
    return ('{"id": "T", "metadata": {"columns": ' + json.dumps(columns) + '}, "data": ['
            + rows + "]}").encode()  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    kind_and_payload=payloads(),
    ascii_only=st.booleans(),
    batch_bytes=st.sampled_from([1, 64, 1 << 20]),
)
def test_the_native_route_gives_the_plain_frame(kind_and_payload, ascii_only, batch_bytes,
                                                monkeypatch):  # fmt: skip
    kind, payload = kind_and_payload
    try:
        text = json.dumps(payload, ensure_ascii=ascii_only).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate travels as its escape only
        text = json.dumps(payload).encode("utf-8")
    with monkeypatch.context() as patch:
        patch.setattr(splitter, "BATCH_BYTES", batch_bytes)  # one batch, or many
        frame, route = native_read(text, kind)
    if frame is None:
        assert route == "kept"
        return
    want = plain(text, kind)
    assert list(frame.columns) == list(want.columns)
    assert frame.index.equals(want.index)
    assert cells(frame) == cells(want)


def taken_as(text: bytes, name: str = "v") -> str:
    """How the engine took column ``name`` of a one-batch document: ``"arrow"`` (the
    reader's array), ``"python"`` (the rows' Python values: the reader could not be
    exact), or ``"document"`` (the frame could not be built: the document went back)."""
    frame, route = native_read(text)
    if route != "arrow":
        return "document"
    rows = ArrowRows()
    RowSplitter("data", lambda count: None, prove=rows.take_batch).split([text])
    forms = {"python" if type(part) is list else "arrow" for _, part in rows.take(name)}
    assert len(forms) == 1, forms
    return forms.pop()


# Every value of a column, as JSON text: (values, declared type, how they are taken).
CASES = {
    "ints": (["1", "-5", "922337203685477580", "null"], "INTEGER", "arrow"),
    "int64's largest (19 digits: refused, conservatively)": (
        ["9223372036854775807", "1"], "INTEGER", "python"),
    "an int of 19 digits beyond int64": (["9223372036854775808", "1"], "INTEGER", "python"),
    "an int beyond 64 bits, undeclared": (["18446744073709551617", "1"], None, "python"),
    "floats that must round-trip": (
        ["0.30000000000000004", "5e-324", "-0.0", "1e-400", "1E5", "123456.789e3"],
        "DOUBLE", "arrow"),
    "a float of 2**53 or more (conservatively)": (["1.7976931348623157e308", "0.5"], "DOUBLE",
                                                  "python"),
    "ints beside floats in a DOUBLE column": (["1", "2.5", "-3", "null"], "DOUBLE", "arrow"),
    "ints beside floats, undeclared": (["1", "2.5"], None, "document"),
    "ints beside floats in a JSON column": (["1", "2.5"], "JSON", "document"),
    "an int beyond 2**53 beside a float": (["9007199254740993", "0.5"], "DOUBLE", "python"),
    "an int beyond 2**53 in another column": (["9007199254740993", "1"], "INTEGER", "arrow"),
    "-0 beside a float": (["-0", "0.5"], "DOUBLE", "python"),
    "-0 among ints": (["-0", "1"], "INTEGER", "arrow"),
    "text the reader takes for dates": (['"2024-01-31"', '"2024-02-01 10:00:00"'], "VARCHAR",
                                        "arrow"),
    "dates declared DATE": (['"2024-01-31"', "null", '"2024-02-01"'], "DATE", "arrow"),
    "date-times with zones": (['"2024-01-31T10:00:00Z"', '"2024-01-31T10:00:00+02:00"'],
                              "TIMESTAMP", "arrow"),
    "a nested object cell": (['{"a": 1}', '{"b": [1, 2]}'], "JSON", "python"),
    "nested cells of changing types": (['{"a": 1}', '{"a": "x"}'], "JSON", "python"),
    "a list cell": (["[1, 2]", "[]"], "JSON", "python"),
    "text and numbers": (['"a"', "1"], "VARCHAR", "python"),
    "a lone surrogate": (['"\\ud800"', '"x"'], "VARCHAR", "python"),
    "a surrogate pair and escapes": (['"\\ud83d\\ude00"', '"\\u00e9\\n\\"\\\\\\/"',
                                      '"\\u0000"'], "VARCHAR", "arrow"),
    "booleans": (["true", "false", "null"], "BOOLEAN", "arrow"),
    "booleans in an INTEGER column": (["true", "false"], "INTEGER", "arrow"),
    "ints in a VARCHAR column": (["1", "2"], "VARCHAR", "arrow"),
    "decimals as text": (['"1.10"', '"2.00"'], "DECIMAL(10,2)", "arrow"),
    "numbers in a DECIMAL column": (["1.5", "2"], "DECIMAL(10,2)", "arrow"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_departure_of_the_reader_is_guarded(case):
    values, data_type, form = CASES[case]
    text = table_text(values, data_type, raw=True)
    assert taken_as(text) == form
    frame, _ = native_read(text)
    assert cells(frame) == cells(plain(text))


def test_a_batch_taken_as_python_values_beside_arrow_batches(monkeypatch):
    rows = [{"v": i, "k": "x"} for i in range(400)] + [{"v": 2**64, "k": "y"}]
    text = json.dumps({"id": "T", "metadata": {"columns": []}, "data": rows}).encode()
    monkeypatch.setattr(splitter, "BATCH_BYTES", 256)  # the big int in the last batch
    frame, route = native_read(text)
    assert route == "arrow"
    assert cells(frame) == cells(plain(text))


def test_a_double_column_whose_ints_must_stay_ints_sends_the_document_back(monkeypatch):
    rows = [{"v": 1, "k": "x"}] * 300 + [{"v": 0.5, "k": "y"}]  # undeclared: object
    text = json.dumps({"id": "T", "metadata": {"columns": []}, "data": rows}).encode()
    monkeypatch.setattr(splitter, "BATCH_BYTES", 256)
    frame, route = native_read(text)
    assert route == "splitter"
    assert cells(frame) == cells(plain(text))
    assert type(frame["v"].iloc[0]) is int


def test_duplicate_keys_are_json_loads_last_value():
    text = b'{"data": [{"v": 1, "v": 2}, {"v": 3}], "metadata": {"columns": []}}'
    assert taken_as(text) == "python"
    frame, _ = native_read(text)
    assert frame["v"].tolist() == plain(text)["v"].tolist() == [2, 3]


def test_pretty_printed_rows_are_read_by_the_reader():
    rows = [{"v": i, "t": f"a\n{i}"} for i in range(50)]
    text = json.dumps({"metadata": {"columns": []}, "data": rows}, indent=2).encode()
    assert taken_as(text) == "arrow"
    frame, _ = native_read(text)
    assert cells(frame) == cells(plain(text))


@pytest.mark.parametrize("value", ['},{"v": 1}', "} , {", "},{"])
def test_a_row_gap_inside_a_string_fails_the_parse_instead_of_splitting_the_value(value):
    rows = [{"v": value, "w": 1}, {"v": "x", "w": 2}]
    text = json.dumps({"data": rows}).encode()
    assert taken_as(text) == "python"
    frame, _ = native_read(text)
    assert cells(frame) == cells(plain(text))


def test_a_row_gap_inside_a_nested_list_fails_the_parse_too():
    rows = [{"w": [{"a": 1}, {"a": 2}]}, {"w": []}]
    text = json.dumps({"data": rows}).encode()
    assert taken_as(text, "w") == "python"
    frame, _ = native_read(text)
    assert frame["w"].tolist() == [[{"a": 1}, {"a": 2}], []]


def test_a_flat_batch_is_proven_by_the_reader_and_a_wrong_cut_is_not():
    rows = ArrowRows()
    assert rows.take_batch(b'{"a": 1}, {"a": 2}') == 2
    assert (rows.python_batches, rows.count) == (0, 2)  # the reader proved it
    assert rows.take_batch(b'{"a": 1} {"a": 2}') is None  # no comma: not JSON
    assert rows.take_batch(b'{"a": "x}, {y') is None  # the cut inside a string
    assert rows.take_batch(b'{"a": 1}, {"a": "x},{y"}') == 2  # a gap in text: orjson's rows
    assert (rows.python_batches, rows.count) == (1, 4)
    assert [value for _, part in rows.take("a") for value in
            (part if type(part) is list else part.to_pylist())] == [1, 2, 1, "x},{y"]  # fmt: skip


@given(values=st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "\u00e9"]), st.text()),
                       min_size=1, max_size=40))  # fmt: skip
@example(values=["a"] * 10 + [None] * 3)
def test_text_objects_give_every_value_and_share_the_repeated_ones(values):
    import pyarrow as pa

    chunked = pa.chunked_array([pa.array(values[:7], pa.string()),
                                pa.array(values[7:], pa.string())])  # fmt: skip
    objects = text_objects(chunked)
    assert objects.dtype == object and objects.tolist() == values
    present = [v for v in objects if v is not None]
    if len(set(values[:7]) - {None}) <= 0.5 * len(values[:7]) and present:
        assert len({id(v) for v in present}) == len(set(present))


def test_a_large_text_column_keeps_one_object_per_distinct_value():
    words = ["Stra\u00dfe", "\u6771\u4eac", "\u0141\u00f3d\u017a"]
    rows = [{"kind": words[i % 3], "unique": f"row {i}"} for i in range(20_000)]
    frame, route = native_read(json.dumps({"data": rows}).encode(), size=65_536)
    assert route == "arrow"
    kinds = np.asarray(frame["kind"].array, dtype=object)
    assert len({id(v) for v in kinds}) == 3
    assert frame["unique"].tolist() == [row["unique"] for row in rows]


DAYS = st.dates(min_value=dt.date(1000, 1, 1))
PLAIN_DATE_TEXT = st.one_of(
    DAYS.map(str),
    st.builds("{}T{:02d}:{:02d}:{:02d}Z".format, DAYS, st.integers(0, 23), st.integers(0, 59),
              st.integers(0, 59)),  # fmt: skip
    st.sampled_from(["2023-02-29", "2024-02-29", "0999-12-31", "2024-01-31T10:00:00+01:00",
                     "2024-01-31T10:00:00", "2024-01-31 10:00:00Z", "now", "",
                     "2024-01-31T24:00:00Z", "2024-1-31"]),
)  # fmt: skip


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    values=st.lists(st.one_of(st.none(), PLAIN_DATE_TEXT, PLAIN_DATE_TEXT), min_size=2,
                    max_size=30),
    declared=st.sampled_from(["DATE", "TIMESTAMP", "DATETIME", "TIMESTAMP WITH TIME ZONE"]),
    batch_bytes=st.sampled_from([1, 64, 1 << 20]),
)  # fmt: skip
@example(values=["2024-01-31", "2024-02-01"], declared="DATE", batch_bytes=1)
@example(values=["2024-01-31T10:00:00Z", None], declared="TIMESTAMP", batch_bytes=64)
def test_declared_dates_are_the_plain_parse(values, declared, batch_bytes, monkeypatch):
    text = table_text(values, declared)
    with monkeypatch.context() as patch:
        patch.setattr(splitter, "BATCH_BYTES", batch_bytes)
        frame, route = native_read(text)
    assert route == "arrow"
    assert cells(frame) == cells(plain(text))


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_a_cell_nested_deeper_than_orjson_goes_never_reaches_the_reader(depth):
    # pyarrow's JSON reader recurses without a limit (100,000 nested lists crash the
    # process): a batch with nesting goes to the reader only once orjson (1,024 levels)
    # decoded it
    deep = "[" * depth + "]" * depth
    text = (
        '{"metadata": {"columns": []}, "data": [{"v": 1}, {"v": ' + deep + '}, {"v": 2}]}'
    ).encode()
    frame, route = native_read(text)  # a crash here kills the test process
    if route == "arrow":  # json.loads took it (CPython 3.13 goes about 10,000 deep)
        assert taken_as(text) == "python"
        assert frame["v"].tolist()[::2] == [1, 2]
