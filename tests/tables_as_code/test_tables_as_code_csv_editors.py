"""Tables as code: CSV files edited and saved by ordinary tools plan exactly the edit.

Python's csv module, pandas and LibreOffice write an empty string as a bare empty
field, like a null; Excel's "CSV UTF-8" adds a byte-order mark and CR LF line ends. A
pulled ``tbl-0001`` (empty strings in three cells, null in many) with ONE cell edited
by each tool must plan exactly that one change. A file whose numbers a spreadsheet
program wrote anew (leading zeros gone) must say so in the plan.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from spreadsheet_program import SOFFICE

from mddframes import apply_plan, plan_folder, pull_folder
from mddframes.tables_as_code.csvedits import RESAVED_MIN_CELLS, same_number_rewritten
from mddframes.tables_as_code.csvtext import parse_csv


def needs_soffice(test):
    """The markers of tests/spreadsheet/test_spreadsheet_program.py: the
    ``spreadsheet_program`` marker requires soffice (skipped without it, failed under CI:
    tests/needs.py)."""
    for mark in (pytest.mark.spreadsheet_program, pytest.mark.slow):
        test = mark(test)
    return test


# the cells of tbl-0001 that hold the empty string (row position, column)
EMPTY_STRINGS = {(4, "first_name"), (4, "email"), (4, "notes")}


@pytest.fixture
def pulled(client, tmp_path):
    """tbl-0001 pulled as CSV: (folder, the CSV file)."""
    folder = tmp_path / "code"
    pull_folder(client.api, "DWH", folder, ids=["tbl-0001"], progress=False)
    return folder, folder / "tables" / "tbl-0001.csv"


def test_the_sample_holds_empty_strings_and_nulls(client):
    rows = client.api.get_table("tbl-0001")["data"]
    assert {(i, k) for i, row in enumerate(rows) for k, v in row.items() if v == ""} == (
        EMPTY_STRINGS
    )
    assert sum(v is None for row in rows for v in row.values()) > 10


def _quoted_empty_fields(path):
    """How many fields of a CSV file are a quoted empty string (``""``)."""
    records = parse_csv(path.read_bytes().decode("utf-8"))
    return sum(field == "" for _, fields in records for field in fields)


def _one_change(client, folder, column="first_name", new="Jürgen-Paul"):
    plan = plan_folder(client.api, folder, progress=False)
    (entry,) = plan.objects
    assert (entry.status, entry.changedCells, entry.addedRows, entry.deletedRows) == (
        "changes", 1, 0, 0,
    ), entry.changes  # fmt: skip
    assert [(c["row"], c["column"], c["new"]) for c in entry.changes] == [(0, column, new)]
    assert not [n for n in entry.notes if "non-nullable" in n or "re-saved" in n], entry.notes
    return plan


def _applied(client, plan, tmp_path):
    result = apply_plan(client.api, plan, backup_dir=tmp_path / "bk", progress=False)
    assert result.attrs["ok"]
    rows = client.api.get_table("tbl-0001")["data"]
    assert {(i, k) for i, row in enumerate(rows) for k, v in row.items() if v == ""} == (
        EMPTY_STRINGS
    )
    return rows


def test_python_csv_module_round_trip(client, pulled, tmp_path):
    folder, path = pulled
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    rows[1][rows[0].index("first_name")] = "Jürgen-Paul"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)  # CR LF line ends, "" written bare
    assert not _quoted_empty_fields(path)
    plan = _one_change(client, folder)
    assert _applied(client, plan, tmp_path)[0]["first_name"] == "Jürgen-Paul"


def test_pandas_round_trip(client, pulled):
    folder, path = pulled
    assert _quoted_empty_fields(path) == len(EMPTY_STRINGS)  # as pulled
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.loc[0, "first_name"] = "Jürgen-Paul"
    frame.to_csv(path, index=False)
    assert not _quoted_empty_fields(path)
    _one_change(client, folder)


def test_pandas_round_trip_with_its_default_missing_values(client, pulled):
    # read_csv's default reads every empty field as NaN: to_csv writes them bare again
    folder, path = pulled
    frame = pd.read_csv(path, dtype=str)
    frame.loc[0, "first_name"] = "Jürgen-Paul"
    frame.to_csv(path, index=False)
    _one_change(client, folder)


def test_excel_csv_utf8_byte_order_mark_and_crlf(client, pulled, tmp_path):
    folder, path = pulled
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    rows[1][rows[0].index("first_name")] = "Jürgen-Paul"
    # Excel's "CSV UTF-8": a byte-order mark, CR LF line ends, empty strings bare
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\r\n") >= len(rows)
    plan = _one_change(client, folder)
    rows_after = _applied(client, plan, tmp_path)
    assert rows_after[5]["notes"].startswith("line one\nline two")  # LF inside a field kept


def test_a_cr_lf_inside_a_quoted_field_is_kept(client, pulled):
    folder, path = pulled
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    rows[1][rows[0].index("first_name")] = "two\r\nlines"
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    _one_change(client, folder, new="two\r\nlines")


def test_a_bare_field_of_a_new_row_or_an_edited_cell_is_null(client, pulled):
    folder, path = pulled
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    rows[2][header.index("first_name")] = ""  # 'Zoë' emptied: null, as before
    new = [""] * len(header)
    new[header.index("customer_no")], new[header.index("last_name")] = "0009999", "Neu"
    new[header.index("created_at")] = "2024-01-01T00:00:00Z"
    rows.append(new)  # a new row: its bare fields are null
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert (entry.changedCells, entry.addedRows) == (1, 1), entry.changes
    changed = next(c for c in entry.changes if c["change"] == "changed")
    assert (changed["row"], changed["column"], changed["old"], changed["new"]) == (
        1, "first_name", "Zoë", None,
    )  # fmt: skip
    added = next(c for c in entry.changes if c["change"] == "added")["new"]
    assert added.get("first_name") is None and added.get("email") is None


def test_our_own_quoted_empty_strings_are_still_empty_strings(client, pulled):
    # the file as pulled (quotes intact) with row 4's empty strings edited to text
    folder, path = pulled
    text = path.read_text("utf-8").replace('4,0000127,"",', "4,0000127,Ann,")
    path.write_text(text, "utf-8")
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert [(c["row"], c["column"], c["old"], c["new"]) for c in entry.changes] == [
        (4, "first_name", "", "Ann")
    ]


# -- a file whose numbers a spreadsheet program wrote anew --------------------------------


def test_same_number_rewritten():
    assert same_number_rewritten("0000123", "123")
    assert same_number_rewritten("1.50", "1.5")
    assert same_number_rewritten("12345678901234567890", "1.23456789012346E+19")
    assert same_number_rewritten(9007199254740993, 9.00719925474099e15)
    assert not same_number_rewritten("0000123", "124")
    assert not same_number_rewritten("007", "James")
    assert not same_number_rewritten(True, 1)
    assert not same_number_rewritten(None, "0")


def _strip_numbers(path, columns):
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    for row in rows[1:]:
        for column in columns:
            i = rows[0].index(column)
            if row[i]:
                row[i] = format(Decimal(row[i]).normalize(), "f")  # '0042' -> '42'
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)


def test_leading_zeros_stripped_the_plan_says_resaved(client, pulled):
    folder, path = pulled
    _strip_numbers(path, ["customer_no", "credit_limit"])
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert entry.status == "changes" and entry.changedCells >= 8 + 5
    note = entry.notes[0]
    assert "re-saved by a spreadsheet program" in note and "--file-format xlsx" in note
    assert "customer_no" in note and "credit_limit" in note and "'0000123' -> '123'" in note


def test_a_few_numbers_edited_by_hand_are_no_resave(client, pulled):
    folder, path = pulled
    lines = path.read_text("utf-8").splitlines(keepends=True)
    for i in range(1, RESAVED_MIN_CELLS):  # one fewer than the threshold
        lines[i] = lines[i].replace(f"{i - 1},00001", f"{i - 1},1", 1)
    path.write_text("".join(lines), "utf-8")
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert entry.changedCells == RESAVED_MIN_CELLS - 1
    assert not [n for n in entry.notes if "re-saved" in n]


# -- LibreOffice Calc --------------------------------------------------------------------


def _soffice(source: Path, outdir: Path, target: str, infilter: str | None = None) -> Path:
    """Convert ``source`` with LibreOffice headless into ``outdir`` (a temporary profile)."""
    if SOFFICE is None:
        pytest.fail("CI must have LibreOffice: .ci/run installs libreoffice-calc-nogui")
    outdir.mkdir(parents=True, exist_ok=True)
    profile = outdir.parent / f"{outdir.name}-profile"
    command = [SOFFICE, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--norestore"]
    if infilter:
        command.append(f"--infilter={infilter}")
    command += ["--convert-to", target, "--outdir", str(outdir), str(source)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    output = outdir / f"{source.stem}.{target.split(':')[0]}"
    assert done.returncode == 0 and output.exists(), (done.returncode, done.stderr[-2000:])
    return output


_CSV_EXPORT = "csv:Text - txt - csv (StarCalc):44,34,76,1"


@needs_soffice
def test_libreoffice_round_trip_with_text_columns(client, pulled, tmp_path):
    folder, path = pulled
    header = path.read_text("utf-8").split("\n", 1)[0].split(",")
    # the Text Import dialog with every column set to Text (a careful user's choice)
    text_columns = "/".join(f"{i}/2" for i in range(1, len(header) + 1))
    book = _soffice(path, tmp_path / "lo", "xlsx", f"CSV:44,34,76,1,{text_columns}")
    workbook = openpyxl.load_workbook(book)
    sheet = workbook.active
    sheet.cell(row=2, column=header.index("first_name") + 1).value = "Jürgen-Paul"
    workbook.save(book)
    saved = _soffice(book, tmp_path / "lo-csv", _CSV_EXPORT)
    assert not _quoted_empty_fields(saved)  # the empty strings were written bare
    shutil.copyfile(saved, path)
    _one_change(client, folder)


@needs_soffice
def test_libreoffice_default_import_the_plan_says_resaved(client, pulled, tmp_path):
    folder, path = pulled
    shutil.copyfile(_soffice(path, tmp_path / "lo", _CSV_EXPORT), path)
    assert ",123," in path.read_text("utf-8")  # '0000123' read as a number
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert entry.notes and "re-saved by a spreadsheet program" in entry.notes[0], entry


def _is_active_text(path):
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    i = rows[0].index("is_active")
    return [row[i] for row in rows[1:]]


@needs_soffice
def test_libreoffice_true_false_in_a_boolean_column_plan_only_the_edit(client, pulled, tmp_path):
    """Calc (English) reads the JSON column is_active's true/false as booleans and saves
    TRUE/FALSE: read as the booleans they spell, so the plan is exactly the edited cell
    (issue 44; before, the whole file was refused)."""
    folder, path = pulled
    before = client.api.get_table("tbl-0001")["data"]
    header = path.read_text("utf-8").split("\n", 1)[0].split(",")
    # every column Text but is_active (Standard), language en-US: what makes Calc
    # see booleans while every number and code stays as written
    formats = "/".join(f"{i}/{1 if name == 'is_active' else 2}" for i, name in
                       enumerate(header, start=1))  # fmt: skip
    book = _soffice(path, tmp_path / "lo", "xlsx", f"CSV:44,34,76,1,{formats},1033")
    workbook = openpyxl.load_workbook(book)
    sheet = workbook.active
    sheet.cell(row=2, column=header.index("first_name") + 1).value = "Jürgen-Paul"
    workbook.save(book)
    saved = _soffice(book, tmp_path / "lo-csv", _CSV_EXPORT)
    shutil.copyfile(saved, path)
    spelled = set(_is_active_text(path)) - {""}
    assert spelled and spelled <= {"TRUE", "FALSE"}, spelled  # what Calc wrote
    rows = _applied(client, _one_change(client, folder), tmp_path)
    # nothing the user did not change changed: same keys, order, types and values
    before[0]["first_name"] = "Jürgen-Paul"
    assert json.dumps(rows) == json.dumps(before)


@needs_soffice
def test_libreoffice_default_import_in_english_is_refused_for_its_numbers_not_its_booleans(
    client, pulled, tmp_path
):
    folder, path = pulled
    shutil.copyfile(_soffice(path, tmp_path / "lo", _CSV_EXPORT, "CSV:44,34,76,1,,1033"), path)
    assert {"TRUE", "FALSE"} <= set(_is_active_text(path))
    (entry,) = plan_folder(client.api, folder, progress=False).objects
    assert entry.notes and "re-saved by a spreadsheet program" in entry.notes[0], entry
    assert "is_active" not in entry.notes[0] and "is_active" not in entry.detail
