"""Spreadsheets: frames out to xlsx and back, losslessly; reviewer edits written exactly.

Properties over the payload strategies of tests/codec_strategies.py (through real xlsx
files), the cell rules one by one, and the full review loop against the emulator:
read_table -> to_excel -> a reviewer edits with openpyxl -> read_excel -> write_table.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import re
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import openpyxl
import pandas as pd
import pytest
from codec_strategies import TEXT, assert_same_json, payloads
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mddframes import (
    Client,
    ConcurrentModificationError,
    DataShapeError,
    IncompletePayloadError,
    InvalidArgumentError,
    ReadContext,
)
from mddframes.codec import from_payload, to_payload
from mddframes.codec.frame import payload_rows
from mddframes.codec.values import ABSENT, strict_equal
from mddframes.context import ATTRS_KEY
from mddframes.spreadsheet import read_excel, sheet_titles, to_excel
from mddframes.spreadsheet.cells import escape_text, unescape_text
from mddframes.spreadsheet.metadata import META_SHEET

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
STRING = pd.StringDtype("python")


def with_context(payload: dict, kind: str = "table") -> pd.DataFrame:
    """The frame of a payload with the context a read would attach."""
    frame = from_payload(payload, kind)
    frame.attrs[ATTRS_KEY] = ReadContext(kind, str(payload.get("id")), payload)
    return frame


def assert_cells_equal(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Same columns, dtypes, index and cells (nested values strictly equal, -0.0 kept)."""
    assert list(got.columns) == list(want.columns)
    assert got.index.tolist() == want.index.tolist() and got.index.name == want.index.name
    for name in want.columns:
        assert got[name].dtype == want[name].dtype, (name, got[name].dtype, want[name].dtype)
        for position, (a, b) in enumerate(zip(got[name].array, want[name].array, strict=True)):
            where = (name, position, a, b)
            if b is None or b is pd.NA or b is pd.NaT:
                assert a is None or a is pd.NA or a is pd.NaT, where
            elif isinstance(b, float):
                assert a == b and math.copysign(1, a) == math.copysign(1, b), where
            elif isinstance(b, dict | list):
                assert strict_equal(a, b), where
            else:
                assert a == b and type(a) is type(b), where


# -- properties --------------------------------------------------------------------------


@PROPERTY
@given(payloads())
def test_payload_survives_an_xlsx_round_trip(kind_and_payload):
    kind, payload = kind_and_payload
    before = copy.deepcopy(payload)
    frame = with_context(payload, kind)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "review.xlsx"
        to_excel(frame, path)
        back = read_excel(path)

    assert_same_json(to_payload(back, payload, kind=kind), before)
    assert_cells_equal(back, frame)
    context = back.attrs[ATTRS_KEY]
    assert isinstance(context, ReadContext)
    assert (context.kind, context.object_id) == (kind, str(payload.get("id")))
    assert_same_json(context.load_document(), before)
    assert context.digest == frame.attrs[ATTRS_KEY].digest


def _typable_text() -> st.SearchStrategy[str]:
    alphabet = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
    return st.text(alphabet=alphabet, min_size=1, max_size=8).filter(
        lambda t: not re.search(r"_x[0-9A-Fa-f]{4}_", t)
    )


JSON_EDITS = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), TEXT,
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=4,
)  # fmt: skip


def _edit(draw: Any, encoding: str, dtype: Any) -> tuple[Any, Any]:
    """(what a reviewer puts into the cell, the value the frame gets) for one column."""
    if draw(st.integers(0, 5)) == 0:
        return None, None  # the reviewer clears the cell
    if encoding == "text":
        text = draw(_typable_text())
        return ("text", text), text
    if encoding == "integer":
        number = draw(st.integers(-(10**12), 10**12))
        return number, number
    if encoding == "number":
        number = draw(st.sampled_from([2.5, -1.25, 0.1, 1e10, 42.0, 0.0, 7.0]))
        return number, number
    if encoding == "boolean":
        flag = draw(st.booleans())
        return flag, flag
    if encoding == "datetime":
        stamp = pd.Timestamp(
            draw(
                st.datetimes(
                    min_value=pd.Timestamp(1950, 1, 1).to_pydatetime(),
                    max_value=pd.Timestamp(2100, 1, 1).to_pydatetime(),
                )
            )
        )
        stamp = stamp.floor("s")
        if getattr(dtype, "tz", None) is not None:
            text = stamp.isoformat() + "Z"
            return ("text", text), stamp.tz_localize("UTC").tz_convert(dtype.tz)
        return ("text", stamp.isoformat()), stamp
    value = draw(JSON_EDITS)
    return ("text", json.dumps(value)), value
    # (a JSON null typed as the text "null" is a null, like a cleared cell)


def _set_frame_cell(frame: pd.DataFrame, position: int, name: str, value: Any) -> None:
    array = frame[name].array
    if isinstance(array, pd.arrays.NumpyExtensionArray) and array.dtype == object:
        values = frame[name].to_numpy(dtype=object, copy=True)
        values[position] = value
        frame[name] = pd.Series(np.fromiter(values, dtype=object, count=len(values)),
                                index=frame.index)  # fmt: skip
        return
    array = array.copy()
    array[position] = pd.NA if value is None and not isinstance(array.dtype, np.dtype) else value
    frame[name] = pd.Series(array, index=frame.index)


def _set_sheet_cell(cell: Any, written: Any) -> None:
    if isinstance(written, tuple):  # typed into a text cell
        cell.value = written[1]
        cell.data_type = "s"
    else:
        cell.value = written


@st.composite
def edited_payloads(draw: Any) -> tuple[str, dict, list[tuple[int, str, Any, Any]]]:
    kind, payload = draw(payloads())
    frame = from_payload(payload, kind)
    assume(len(frame) and len(frame.columns))
    from mddframes.spreadsheet.cells import encoding_of

    cells = [(p, n) for p in range(len(frame)) for n in frame.columns]
    chosen = draw(st.lists(st.sampled_from(cells), min_size=1, max_size=4, unique=True))
    edits = []
    for position, name in chosen:
        dtype = frame[name].dtype
        written, value = _edit(draw, encoding_of(dtype), dtype)
        edits.append((position, name, written, value))
    return kind, payload, edits


@PROPERTY
@given(edited_payloads())
def test_reviewer_edits_change_exactly_those_cells(case):
    kind, payload, edits = case
    before = copy.deepcopy(payload)
    frame = with_context(payload, kind)
    expected_frame = frame.copy()
    for position, name, _, value in edits:
        _set_frame_cell(expected_frame, position, name, value)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "review.xlsx"
        to_excel(frame, path)
        book = openpyxl.load_workbook(path)
        sheet = book.worksheets[0]
        header = [c.value for c in sheet[1]]
        for position, name, written, _ in edits:
            _set_sheet_cell(sheet.cell(position + 2, header.index(escape_text(name)) + 1), written)
        book.save(path)
        back = read_excel(path)

    out = to_payload(back, payload, kind=kind)
    assert_same_json(out, to_payload(expected_frame, payload, kind=kind))
    edited = {(position, name) for position, name, _, _ in edits}
    for position, (old, new) in enumerate(
        zip(payload_rows(before, kind), payload_rows(out, kind), strict=True)
    ):
        for key in dict.fromkeys([*old, *new]):
            if (position, key) not in edited:
                assert_same_json(new.get(key, ABSENT), old.get(key, ABSENT), f"{position}.{key}")
    assert_same_json(payload, before)


# -- cell rules --------------------------------------------------------------------------


def _table(columns: list[tuple[str, str]], rows: list[dict], table_id: str = "T1") -> dict:
    return {
        "id": table_id,
        "name": "test",
        "metadata": {"columns": [{"name": n, "dataType": t} for n, t in columns]},
        "data": rows,
    }


def _round_trip(tmp_path: Path, payload: dict, kind: str = "table") -> tuple[pd.DataFrame, Any]:
    frame = with_context(payload, kind)
    path = tmp_path / "t.xlsx"
    to_excel(frame, path)
    return read_excel(path), openpyxl.load_workbook(path).worksheets[0]


def test_strings_are_text_cells_never_formulas(tmp_path):
    tricky = ["004", "=SUM(A1:A3)", "+1", "-2", "@x", "#N/A", "TRUE", "1e5", " padded ", "a\r\nb"]
    payload = _table([("code", "VARCHAR")], [{"code": s} for s in tricky])

    back, sheet = _round_trip(tmp_path, payload)

    assert back["code"].dtype == STRING
    assert back["code"].tolist() == tricky
    for position, text in enumerate(tricky, start=2):
        cell = sheet.cell(position, 2)
        assert cell.data_type == "s" and cell.number_format == "@", (text, cell.data_type)
    assert sheet.cell(2, 2).value == "004"
    assert sheet.cell(3, 2).value == "=SUM(A1:A3)"
    assert to_payload(back, payload) == payload


def test_na_and_empty_string_are_told_apart(tmp_path):
    payload = _table([("s", "VARCHAR")], [{"s": ""}, {"s": None}, {}, {"s": "x"}, {"s": " "}])

    back, sheet = _round_trip(tmp_path, payload)

    assert back["s"].tolist()[0] == ""
    assert back["s"].isna().tolist() == [False, True, True, False, False]
    assert sheet.cell(2, 2).value == '=""'  # the documented marker of an empty string
    assert sheet.cell(3, 2).value is None and sheet.cell(4, 2).value is None
    assert_same_json(to_payload(back, payload), payload)


def test_integers_beyond_15_digits_are_text_and_exact(tmp_path):
    values = [1, -(10**15) + 1, 10**15, 2**53 + 1, 2**63 - 1, -(2**63), None]
    payload = _table([("n", "BIGINT")], [{"n": v} for v in values])

    back, sheet = _round_trip(tmp_path, payload)

    assert back["n"].dtype == "Int64"
    assert back["n"].tolist()[:-1] == values[:-1] and back["n"].isna().tolist()[-1]
    kinds = [sheet.cell(r, 2).data_type for r in range(2, 8)]
    assert kinds == ["n", "n", "s", "s", "s", "s"]
    assert sheet.cell(5, 2).value == str(2**53 + 1)
    assert_same_json(to_payload(back, payload), payload)


def test_int_column_with_gaps_stays_int_and_booleans_stay_booleans(tmp_path):
    payload = _table(
        [("n", "INTEGER"), ("b", "BOOLEAN")],
        [{"n": 1, "b": True}, {"n": None, "b": None}, {"b": False}, {"n": 3, "b": False}],
    )

    back, sheet = _round_trip(tmp_path, payload)

    assert back["n"].dtype == "Int64" and back["b"].dtype == "boolean"
    assert sheet.cell(2, 3).data_type == "b" and sheet.cell(2, 3).value is True
    assert back["b"].tolist()[0] is True and back["b"].tolist()[2] is False
    assert_same_json(to_payload(back, payload), payload)


def test_floats_survive_exactly(tmp_path):
    values = [-0.0, 1e300, 0.1, 0.30000000000000004, 5e-324, 1.7976931348623157e308, 2.5, 1e-7]
    payload = _table([("x", "DOUBLE")], [{"x": v} for v in values])

    back, sheet = _round_trip(tmp_path, payload)

    assert back["x"].dtype == "Float64"
    got = back["x"].tolist()
    assert got == values
    assert [math.copysign(1, v) for v in got] == [math.copysign(1, v) for v in values]
    assert sheet.cell(4, 2).data_type == "n"  # 0.1: a plain number for the reviewer
    assert sheet.cell(5, 2).value == "0.30000000000000004"  # Excel keeps 15 digits: text
    assert_same_json(to_payload(back, payload), payload)


def test_datetimes_are_iso_text_in_the_original_format(tmp_path):
    stamps = ["2023-03-01T08:00:00+01:00", "2024-02-29T12:00:00Z", "2022-06-30T23:59:59.123Z"]
    payload = _table(
        [("at", "TIMESTAMP"), ("day", "DATE")],
        [
            {"at": s, "day": d}
            for s, d in zip(stamps, ["1975-02-28", "2000-02-29", None], strict=True)
        ],
    )

    back, sheet = _round_trip(tmp_path, payload)

    assert [sheet.cell(r, 2).value for r in range(2, 5)] == stamps
    assert [sheet.cell(r, 3).value for r in range(2, 4)] == ["1975-02-28", "2000-02-29"]
    assert back["at"].dtype == from_payload(payload)["at"].dtype
    assert back["day"].dtype.kind == "M"
    assert_same_json(to_payload(back, payload), payload)


def test_nested_and_mixed_values_are_json_text(tmp_path):
    values = [{"k": [1, None, "x"]}, [], "abc", 7, 2**70, 1.5, True, None, "", {"": {}}]
    payload = _table([("j", "JSON")], [{"j": v} for v in values])

    back, sheet = _round_trip(tmp_path, payload)

    assert back["j"].dtype == object
    assert sheet.cell(2, 2).value == '{"k": [1, null, "x"]}'
    assert sheet.cell(4, 2).value == '"abc"' and sheet.cell(10, 2).value == '""'
    assert sheet.cell(9, 2).value is None
    assert all(sheet.cell(r, 2).data_type == "s" for r in (2, 3, 4, 5, 6))
    assert_same_json(to_payload(back, payload), payload)


def test_characters_xml_cannot_hold_and_escape_lookalikes_survive(tmp_path):
    texts = ["a\x00b", "\x01\x1f", "\ufffe", "_x0041_", "_x005F_", "x005F_", "tab\there", "🙂"]
    payload = _table([("s", "VARCHAR"), ("j", "JSON")], [{"s": t, "j": [t]} for t in texts])

    back, _ = _round_trip(tmp_path, payload)

    assert back["s"].tolist() == texts
    assert_same_json(to_payload(back, payload), payload)
    for text in texts:
        assert unescape_text(escape_text(text)) == text


def test_column_names_of_any_text_survive(tmp_path):
    names = ["row", "", "=x", "a/b", "x" * 300, "é\u2028"]
    payload = _table([], [{n: i for i, n in enumerate(names)}])

    back, _ = _round_trip(tmp_path, payload)

    assert list(back.columns) == names
    assert_same_json(to_payload(back, payload), payload)


def test_large_payload_is_split_over_cells_of_the_hidden_sheet(tmp_path):
    rows = [{"id": f"{i:06d}", "text": "ü" * 200 + "_x0041_\x01"} for i in range(400)]
    payload = _table([("id", "VARCHAR"), ("text", "VARCHAR")], rows)

    back, _ = _round_trip(tmp_path, payload)

    meta = openpyxl.load_workbook(tmp_path / "t.xlsx")[META_SHEET]
    parts = [row for row in meta.iter_rows(values_only=True) if row[1] == "payload"]
    assert len(parts) > 2
    assert all(len(row[3]) <= 32767 for row in parts)
    assert meta.sheet_state == "hidden"
    assert_same_json(back.attrs[ATTRS_KEY].load_document(), payload)
    assert_same_json(to_payload(back, payload), payload)


def test_text_longer_than_a_cell_is_refused_with_its_place(tmp_path):
    payload = _table([("s", "VARCHAR")], [{"s": "ok"}, {"s": "x" * 40_000}])

    with pytest.raises(DataShapeError, match=r"table 'T1', row 1, column 's'.*40,000"):
        to_excel(with_context(payload), tmp_path / "t.xlsx")


def test_unsupported_dtype_and_bad_index_are_refused(tmp_path):
    frame = with_context(_table([("c", "VARCHAR")], [{"c": "a"}]))
    with pytest.raises(DataShapeError, match="column 'c': dtype category"):
        to_excel(frame.astype({"c": "category"}), tmp_path / "t.xlsx")
    with pytest.raises(DataShapeError, match="original position"):
        to_excel(frame.set_index("c"), tmp_path / "t.xlsx")
    with pytest.raises(InvalidArgumentError, match="empty dict"):
        to_excel({}, tmp_path / "t.xlsx")
    with pytest.raises(InvalidArgumentError, match="kind="):
        to_excel(frame, tmp_path / "t.xlsx", kind="mapping")


def test_frame_without_context_keeps_its_dtypes_but_has_no_context(tmp_path, caplog):
    frame = pd.DataFrame(
        {
            "s": pd.array(["007", None], dtype="string"),
            "i": pd.array([None, 3], dtype="Int64"),
            "n": np.array([1, 2], dtype="int64"),
            "f": np.array([0.5, np.nan]),
            "b": np.array([True, False]),
            "when": pd.to_datetime(["2024-01-01", None]),
            "default": ["x", None],  # pandas 3: the str dtype; pandas 2.2: object
        },
        index=pd.RangeIndex(2, name="row"),
    )
    with caplog.at_level("WARNING", logger="mddframes.spreadsheet"):
        to_excel(frame, tmp_path / "t.xlsx")

    back = read_excel(tmp_path / "t.xlsx")

    assert "no write-back context" in caplog.text
    assert ATTRS_KEY not in back.attrs
    pd.testing.assert_frame_equal(back, frame)


# -- invalid edits ------------------------------------------------------------------------


def _edit_cell(path: Path, coordinate: str, value: Any, *, text: bool = False) -> None:
    book = openpyxl.load_workbook(path)
    cell = book.worksheets[0][coordinate]
    cell.value = value
    if text:
        cell.data_type = "s"
    book.save(path)


@pytest.fixture
def typed_workbook(tmp_path):
    """A workbook of table 'T1' with an int, a text, a JSON and a boolean column."""
    payload = _table(
        [("name", "VARCHAR"), ("n", "INTEGER"), ("j", "JSON"), ("b", "BOOLEAN")],
        [{"name": f"r{i}", "n": i, "j": {"i": i}, "b": i % 2 == 0} for i in range(8)],
    )
    path = tmp_path / "t.xlsx"
    to_excel(with_context(payload), path)
    return path, payload


@pytest.mark.parametrize(
    ("coordinate", "value", "text", "message"),
    [
        ("C7", "abc", True, r"'abc', which is not an integer"),
        ("C7", 2.5, False, r"the number 2.5, which is not an integer"),
        ("D7", "{not json", True, r"not valid JSON"),
        ("B7", 42, False, r"the number 42, but the column is text"),
        ("E7", "maybe", True, r"'maybe', which is not a boolean"),
        ("C7", "=1+1", False, r"formula '=1\+1'"),
    ],
)
def test_a_value_that_does_not_fit_names_sheet_cell_column_and_row(
    typed_workbook, coordinate, value, text, message
):
    path, _ = typed_workbook
    _edit_cell(path, coordinate, value, text=text)
    column = {"B": "name", "C": "n", "D": "j", "E": "b"}[coordinate[0]]

    with pytest.raises(DataShapeError, match=message) as caught:
        read_excel(path)

    assert f"sheet 'T1' (table 'T1'), cell {coordinate} (column '{column}', row 5)" in str(
        caught.value
    )


def test_lenient_but_exact_readings_of_typed_cells(typed_workbook):
    path, payload = typed_workbook
    book = openpyxl.load_workbook(path)
    sheet = book.worksheets[0]
    sheet["C2"] = 5.0  # a float that is an int
    sheet["C3"].value, sheet["C3"].data_type = " 12 ", "s"
    sheet["E2"] = 0  # LibreOffice-style boolean
    sheet["E3"].value, sheet["E3"].data_type = "TRUE", "s"
    sheet["D2"] = 17  # a JSON number typed as a number
    book.save(path)

    back = read_excel(path)

    assert back["n"].tolist()[:2] == [5, 12]
    assert back["b"].tolist()[:2] == [False, True]
    assert back["j"].tolist()[0] == 17
    out = to_payload(back, payload)
    assert out["data"][0] == {"name": "r0", "n": 5, "j": 17, "b": False}
    assert out["data"][1]["n"] == 12 and out["data"][1]["b"] is True


def test_repeated_row_positions_and_orphan_cells_are_refused(typed_workbook):
    path, _ = typed_workbook
    _edit_cell(path, "A9", 3)
    with pytest.raises(DataShapeError, match=r"cell A9: row 3 is also in sheet row 5"):
        read_excel(path)
    _edit_cell(path, "A9", 7)
    _edit_cell(path, "G4", "stray", text=True)
    with pytest.raises(DataShapeError, match=r"cell G4: holds a value but its column has no"):
        read_excel(path)


def test_rows_added_deleted_and_sorted_by_the_reviewer(typed_workbook):
    path, payload = typed_workbook
    book = openpyxl.load_workbook(path)
    sheet = book.worksheets[0]
    sheet.delete_rows(4)  # row position 2 is gone
    sheet.append([None, "new", 99, '["x"]', True])
    sheet.append([])
    sheet.append([None, "newer"])
    sheet.cell(1, 6).value = "extra"  # a column the reviewer added
    sheet.cell(2, 6).value = 1
    book.save(path)

    back = read_excel(path)

    assert back.index.tolist() == [0, 1, 3, 4, 5, 6, 7, 8, 9]
    assert back.loc[8, "name"] == "new" and back.loc[8, "j"] == ["x"]
    assert back.loc[9, "name"] == "newer" and pd.isna(back.loc[9, "n"])
    assert back["extra"].dtype == "Int64"
    out = to_payload(back, payload)
    assert [r["name"] for r in out["data"]] == [
        "r0",
        "r1",
        "r3",
        "r4",
        "r5",
        "r6",
        "r7",
        "new",
        "newer",
    ]
    assert out["data"][0]["extra"] == 1 and "extra" not in out["data"][1]
    assert out["data"][-2] == {"name": "new", "n": 99, "j": ["x"], "b": True}


def test_edited_hidden_sheet_and_foreign_workbooks_are_refused(typed_workbook, tmp_path):
    path, _ = typed_workbook
    book = openpyxl.load_workbook(path)
    meta = book[META_SHEET]
    for row in meta.iter_rows(min_row=2):
        if row[1].value == "payload":
            row[3].value = row[3].value.replace('"r3"', '"r3!"')
            row[3].data_type = "s"
    book.save(path)
    with pytest.raises(DataShapeError, match="does not match its hash"):
        read_excel(path)

    foreign = tmp_path / "foreign.xlsx"
    pd.DataFrame({"a": [1]}).to_excel(foreign)
    with pytest.raises(DataShapeError, match="not written by mddframes.to_excel"):
        read_excel(foreign)


# -- what real spreadsheet programs save for an unchanged value ----------------------------
# (tests/spreadsheet/test_spreadsheet_program.py re-saves with LibreOffice itself; these hand-made
# workbooks pin each form down, Excel's included, without the program)

_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _rewrite_sheet(path: Path, cells: dict[str, str], shared: list[str] | None = None) -> None:
    """Replace cells of the first sheet by raw XML and add a shared-string table."""
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    sheet = files["xl/worksheets/sheet1.xml"].decode()
    for coordinate, xml in cells.items():
        sheet, count = re.subn(rf'<c r="{coordinate}"[^>]*?(?:/>|>.*?</c>)', xml, sheet, count=1)
        assert count == 1, coordinate
    files["xl/worksheets/sheet1.xml"] = sheet.encode()
    if shared is not None:
        files["xl/sharedStrings.xml"] = (
            f'<sst xmlns="{_MAIN_NS}" count="{len(shared)}" uniqueCount="{len(shared)}">'
            + "".join(shared) + "</sst>"
        ).encode()  # fmt: skip
        types = files["[Content_Types].xml"].decode()
        files["[Content_Types].xml"] = types.replace(
            "</Types>",
            '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
        ).encode()
        rels = files["xl/_rels/workbook.xml.rels"].decode()
        files["xl/_rels/workbook.xml.rels"] = rels.replace(
            "</Relationships>",
            '<Relationship Id="rIdStrings" Target="sharedStrings.xml" Type="http://schemas.'
            'openxmlformats.org/officeDocument/2006/relationships/sharedStrings"/></Relationships>',
        ).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)


@pytest.mark.parametrize(
    ("formula", "value"),
    [("TRUE()", True), ("FALSE()", False), ("TRUE", True), ("FALSE", False), ("true()", True)],
)
def test_boolean_formulas_of_spreadsheet_programs_read_as_booleans(typed_workbook, formula, value):
    path, payload = typed_workbook
    cached = int(value)
    _rewrite_sheet(
        path,
        {
            "E7": f'<c r="E7" t="b"><f aca="false">{formula}</f><v>{cached}</v></c>',
            "D7": f'<c r="D7" t="b"><f>{formula}</f><v>{cached}</v></c>',  # a JSON column
        },
    )

    back = read_excel(path)

    assert back.loc[5, "b"] == value and back.loc[5, "j"] is value
    want = copy.deepcopy(payload["data"])
    want[5].update(b=value, j=value)
    assert to_payload(back, payload)["data"] == want


@pytest.mark.parametrize("formula", ["TRUE()+0", "1=1", "NOT(FALSE())", "SUM(C2:C3)", "TRUE()()"])
def test_any_other_formula_is_refused_naming_the_cell(typed_workbook, formula):
    path, _ = typed_workbook
    _rewrite_sheet(path, {"E7": f'<c r="E7" t="b"><f>{formula}</f><v>1</v></c>'})

    with pytest.raises(DataShapeError, match=re.escape(f"formula '={formula}'")) as caught:
        read_excel(path)

    assert "cell E7 (column 'b', row 5)" in str(caught.value)


def test_shared_strings_rich_text_and_escapes_read_as_their_text(typed_workbook):
    path, payload = typed_workbook
    texts = {
        "B2": ("<si><t>r0</t></si>", "r0"),  # the unchanged value, now a shared string
        "B3": ('<si><r><rPr><b/></rPr><t>ri</t></r><r><t xml:space="preserve">ch </t></r>'
               "<rPh sb=\"0\" eb=\"1\"><t>hint</t></rPh></si>", "rich "),
        "B4": ("<si><t>ax005F_b</t></si>", "ax005F_b"),  # openpyxl alone reads "ab"
        "B5": ("<si><t>_x005F_x0001_</t></si>", "_x0001_"),  # a literal, escaped by Excel
        "B6": ("<si><t>_x0001__x000D_</t></si>", "\x01\r"),  # control characters
        "B7": ("<si><t>_x005f_x0041_ _x00e9_</t></si>", "_x0041_ é"),  # lower-case hex
    }  # fmt: skip
    cells = {
        coordinate: f'<c r="{coordinate}" s="1" t="s"><v>{index}</v></c>'
        for index, coordinate in enumerate(texts)
    }
    cells["B8"] = '<c r="B8" t="inlineStr"><is><r><t>in</t></r><r><t>line</t></r></is></c>'
    _rewrite_sheet(path, cells, shared=[xml for xml, _ in texts.values()])

    back = read_excel(path)

    assert back["name"].tolist() == [text for _, text in texts.values()] + ["inline", "r7"]
    out = to_payload(back, payload)
    assert out["data"][0] == payload["data"][0]  # the shared string of the unchanged value


def test_number_formats_serial_dates_sheet_order_and_widths_change_nothing(tmp_path):
    payload = _table(
        [("d", "DATE"), ("f", "DOUBLE"), ("n", "INTEGER"), ("s", "VARCHAR")],
        [{"d": f"2024-03-0{i + 1}", "f": 0.1 * (i + 1), "n": 1000 * i, "s": f"s{i}"}
         for i in range(3)],
    )  # fmt: skip
    path = tmp_path / "t.xlsx"
    to_excel(with_context(payload), path)
    book = openpyxl.load_workbook(path)
    sheet = book["T1"]
    for row in (2, 3, 4):  # as Excel stores a date it recognised: a serial number, date style
        sheet.cell(row, 2).value = datetime.datetime(2024, 3, row - 1)
        sheet.cell(row, 2).number_format = "dd/mm/yyyy"
        sheet.cell(row, 3).number_format = "#,##0.00"
        sheet.cell(row, 4).number_format = "0.0%"
    sheet.column_dimensions["B"].width = 42
    book.move_sheet(META_SHEET, offset=-1)  # the hidden sheet now first
    book.save(path)
    with zipfile.ZipFile(path) as archive:
        assert "<v>45352</v>" in archive.read("xl/worksheets/sheet2.xml").decode()

    back = read_excel(path)

    assert back["d"].dtype.kind == "M"
    assert to_payload(back, payload) == payload


def test_line_breaks_saved_as_lf_read_as_the_exported_text(tmp_path):
    texts = ["a\r\nb", "c\r\nd", "e\nf"]
    payload = _table([("s", "VARCHAR")], [{"s": t} for t in texts])
    path = tmp_path / "t.xlsx"
    to_excel(with_context(payload), path)
    book = openpyxl.load_workbook(path)
    sheet = book["T1"]
    sheet["B2"].value = "a\nb"  # as LibreOffice saves the untouched cell
    sheet["B3"].value = "C\nd"  # an edit
    book.save(path)

    back = read_excel(path)

    assert back["s"].tolist() == ["a\r\nb", "C\nd", "e\nf"]


def test_a_date_cell_in_a_column_with_time_zones_is_refused(tmp_path):
    payload = _table([("ts", "TIMESTAMP")], [{"ts": "2024-03-04T08:00:00Z"}])
    path = tmp_path / "t.xlsx"
    to_excel(with_context(payload), path)
    book = openpyxl.load_workbook(path)
    book["T1"]["B2"].value = datetime.datetime(2024, 3, 4, 8, 0)
    book.save(path)

    with pytest.raises(DataShapeError, match="cell B2 .*the date 2024-03-04T08:00:00.*time zone"):
        read_excel(path)


# -- several objects ---------------------------------------------------------------------


def test_sheet_titles_are_valid_distinct_and_ids_come_back(tmp_path):
    ids = ["tbl/with/slash", "a?b#c", "x" * 40, "x" * 40 + "y", "_mddframes", "History", "'q'", "."]
    titles = sheet_titles(ids)
    assert len({t.lower() for t in titles}) == len(ids)
    assert all(0 < len(t) <= 31 and not re.search(r"[\\/*?:\[\]]", t) for t in titles)
    assert META_SHEET not in titles and "History" not in titles

    frames = {i: with_context(_table([("v", "VARCHAR")], [{"v": i}], table_id=i)) for i in ids}
    to_excel(frames, tmp_path / "many.xlsx", kind="table")
    back = read_excel(tmp_path / "many.xlsx")

    assert list(back) == ids
    for object_id, frame in back.items():
        assert frame.attrs[ATTRS_KEY].object_id == object_id
        assert frame["v"].tolist() == [object_id]
    swapped = {ids[0]: frames[ids[1]]}
    with pytest.raises(InvalidArgumentError, match="carries the read context of table 'a\\?b#c'"):
        to_excel(swapped, tmp_path / "swapped.xlsx")
    one = read_excel(tmp_path / "many.xlsx", object_id="a?b#c")
    assert isinstance(one, pd.DataFrame) and one["v"].tolist() == ["a?b#c"]
    with pytest.raises(InvalidArgumentError, match="holds no object 'nope'"):
        read_excel(tmp_path / "many.xlsx", object_id="nope")


# -- against the emulator ----------------------------------------------------------------


def owned_id(client: Client, name: str, kind: str = "table") -> str:
    tree = client.read_tree("DWH")
    return tree.loc[(tree["name"] == name) & tree[f"{kind}_id"].notna(), f"{kind}_id"].iloc[0]


def assert_only_cells_changed(before: dict, after: dict, cells: dict, rows: str = "data") -> None:
    """``after`` equals ``before`` (types and key order too) except for ``cells``."""
    assert [k for k in after if k != rows] == [k for k in before if k != rows]
    for key in before:
        if key != rows:
            assert_same_json(after[key], before[key], key)
    assert len(after[rows]) == len(before[rows])
    for position, (old, new) in enumerate(zip(before[rows], after[rows], strict=True)):
        for name in dict.fromkeys([*old, *new]):
            want = cells.get((position, name), old.get(name, ABSENT))
            assert_same_json(new.get(name, ABSENT), want, f"{position}.{name}")
        assert list(new)[: len(old)] == list(old)


def _reviewer_edits(path: Path, sheet_title: str, edits: dict[tuple[int, str], Any]) -> None:
    """Open the workbook, type into cells (by row position and column name), save."""
    book = openpyxl.load_workbook(path)
    sheet = book[sheet_title]
    header = [c.value for c in sheet[1]]
    positions = {c.value: c.row for c in sheet["A"][1:]}
    for (position, name), value in edits.items():
        cell = sheet.cell(positions[position], header.index(name) + 1)
        cell.value = value
        if isinstance(value, str):
            cell.data_type = "s"  # typed into a text-formatted cell
    book.save(path)


def test_review_loop_writes_exactly_the_edited_cell(client, emu, tmp_path):
    table_id = owned_id(client, "crm_customer")
    before = client.api.get_table(table_id)
    path = tmp_path / "review.xlsx"
    to_excel(client.read_table(table_id), path)
    _reviewer_edits(path, table_id, {(2, "notes"): "=SUM(B1:B9)"})

    reviewer = Client.from_emulator(emu)  # a fresh client: the workbook alone has the context
    try:
        frame = read_excel(path)
        assert frame["customer_no"].tolist() == [r["customer_no"] for r in before["data"]]
        result = reviewer.write_table(table_id, frame, backup_dir=tmp_path / "backups")
    finally:
        reviewer.close()

    assert result.status == "written" and result.verified
    assert len(result.diff.changed) == 1
    assert_only_cells_changed(before, client.api.get_table(table_id), {(2, "notes"): "=SUM(B1:B9)"})


def test_untouched_workbook_writes_nothing(client, emu, tmp_path):
    for name in ("crm_customer", "erp_sales_order"):
        table_id = owned_id(client, name)
        to_excel(client.read_table(table_id), tmp_path / f"{name}.xlsx")
        emu.reset_counters()

        result = client.write_table(table_id, read_excel(tmp_path / f"{name}.xlsx"))

        assert result.status == "unchanged", result.diff.summary
        assert emu.counters().get("tableUpdate", 0) == 0


def test_every_hard_case_of_the_sample_survives_the_workbook(client, tmp_path):
    for name in ("crm_customer", "erp_sales_order"):
        table_id = owned_id(client, name)
        frame = client.read_table(table_id)
        to_excel(frame, tmp_path / "t.xlsx")

        back = read_excel(tmp_path / "t.xlsx")

        assert_cells_equal(back, frame)
        payload = client.api.get_table(table_id)
        assert_same_json(to_payload(back, payload), payload)


def test_leading_zeros_and_formula_like_strings_written_back(client, emu, tmp_path):
    table_id = owned_id(client, "crm_customer")
    before = client.api.get_table(table_id)
    path = tmp_path / "review.xlsx"
    to_excel(client.read_table(table_id), path)
    edits = {(0, "legacy_id"): "000778", (1, "notes"): "@y", (3, "email"): "+49 0301"}
    _reviewer_edits(path, table_id, edits)

    result = client.write_table(table_id, read_excel(path), backup_dir=tmp_path / "b")

    assert len(result.diff.changed) == 3
    assert_only_cells_changed(before, client.api.get_table(table_id), edits)


def test_change_on_the_service_after_export_is_a_conflict(client, emu, tmp_path):
    table_id = owned_id(client, "crm_customer")
    path = tmp_path / "review.xlsx"
    to_excel(client.read_table(table_id), path)
    _reviewer_edits(path, table_id, {(1, "notes"): "reviewed"})
    emu.touch_table(table_id)
    client.read_table(table_id)  # the client's latest read is newer than the workbook
    emu.reset_counters()

    with pytest.raises(ConcurrentModificationError, match="changed on the service"):
        client.write_table(table_id, read_excel(path), backup_dir=tmp_path / "b")

    assert emu.counters().get("tableUpdate", 0) == 0


def test_new_and_deleted_rows_from_the_sheet(client, emu, tmp_path):
    table_id = owned_id(client, "erp_sales_order")
    before = client.api.get_table(table_id)
    path = tmp_path / "review.xlsx"
    to_excel(client.read_table(table_id), path)
    book = openpyxl.load_workbook(path)
    sheet = book[table_id]
    header = [c.value for c in sheet[1]]
    new = {
        "order_no": "0009999", "order_id": "9007199254740999", "customer_no": "0042",
        "order_date": "2024-04-01", "amount": "1.00", "currency_code": "EUR",
        "status": "OPEN", "is_priority": False,
    }  # fmt: skip
    row = [None] * len(header)
    for name, value in new.items():
        row[header.index(name)] = value
    sheet.append(row)
    for cell in sheet[sheet.max_row]:
        if isinstance(cell.value, str):
            cell.data_type = "s"
    book.save(path)

    result = client.write_table(table_id, read_excel(path), backup_dir=tmp_path / "b")

    after = client.api.get_table(table_id)
    assert result.status == "written" and len(after["data"]) == len(before["data"]) + 1
    assert after["data"][:-1] == before["data"]
    added = after["data"][-1]
    assert added["order_id"] == 9007199254740999 and type(added["order_id"]) is int
    assert added["order_no"] == "0009999" and added["is_priority"] is False
    assert added["order_date"] == "2024-04-01"

    to_excel(client.read_table(table_id), path)
    book = openpyxl.load_workbook(path)
    book[table_id].delete_rows(3)
    book.save(path)
    with pytest.raises(IncompletePayloadError):
        client.write_table(table_id, read_excel(path), backup_dir=tmp_path / "b")


def test_mapping_and_table_in_one_workbook(client, emu, tmp_path):
    table_id = owned_id(client, "crm_customer")
    mapping_id = owned_id(client, "stg_crm_customer", "mapping")
    table_before, mapping_before = (
        client.api.get_table(table_id),
        client.api.get_mapping(mapping_id),
    )
    path = tmp_path / "review.xlsx"
    to_excel({table_id: client.read_table(table_id), mapping_id: client.read_mapping(mapping_id)},
             path)  # fmt: skip
    _reviewer_edits(path, mapping_id, {(0, "transformation"): "UPPER(src.customer_no)"})
    _reviewer_edits(path, table_id, {(4, "is_active"): True})

    frames = read_excel(path, client=client)
    assert list(frames) == [table_id, mapping_id]
    client.write_mapping(mapping_id, frames[mapping_id], backup_dir=tmp_path / "b")
    # read_excel(client=) recorded the workbook's context, so frames that lost attrs still write
    context = frames[table_id].attrs[ATTRS_KEY]
    assert client.contexts.get("table", table_id) is context
    bare = frames[table_id].copy()
    bare.attrs.clear()
    client.write_table(table_id, bare, backup_dir=tmp_path / "b")

    assert_only_cells_changed(
        mapping_before, client.api.get_mapping(mapping_id),
        {(0, "transformation"): "UPPER(src.customer_no)"}, rows="columnMappings",
    )  # fmt: skip
    assert_only_cells_changed(
        table_before, client.api.get_table(table_id), {(4, "is_active"): True}
    )
