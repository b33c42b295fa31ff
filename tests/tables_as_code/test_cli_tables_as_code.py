"""Tables as code, in-process: the file formats, pull -> plan on both sample systems, edits.

(The command line itself is driven through the console script in test_cli_pipeline.py.)
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mddframes import Plan, apply_plan, plan_folder, pull_folder
from mddframes.tables_as_code.csvtext import format_csv, parse_csv
from mddframes.tables_as_code.names import MAX_STEM, encode_id

# -- the CSV rule and the file names (properties) --------------------------------------

fields = st.one_of(st.none(), st.text(st.characters(exclude_categories=("Cs",)), max_size=12))
rows = st.lists(st.lists(fields, min_size=2, max_size=5), min_size=1, max_size=6)


@given(rows)
def test_csv_text_tells_missing_from_empty_and_keeps_every_character(records):
    width = len(records[0])
    records = [(r + [None] * width)[:width] for r in records]
    records = [["h", *r[1:]] if i == 0 else r for i, r in enumerate(records)]
    assert [fields for _, fields in parse_csv(format_csv(records))] == records


def test_csv_reads_crlf_a_byte_order_mark_and_names_the_bad_line():
    assert parse_csv('\ufeffrow,a\r\n0,""\r\n1,\r\n') == [
        (1, ["row", "a"]), (2, ["0", ""]), (3, ["1", None]),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="line 3"):
        parse_csv('row,a\n0,x\n1,ab"c\n')


@given(st.lists(st.text(min_size=1, max_size=300), min_size=2, max_size=2, unique=True))
def test_file_names_are_distinct_safe_and_short(ids):
    stems = [encode_id(i) for i in ids]
    assert stems[0] != stems[1]
    for stem in stems:
        assert re.fullmatch(r"[A-Za-z0-9_%~\-]+", stem) and len(stem) <= MAX_STEM


# -- pull then plan: nothing to change, in every format, on both systems ---------------


@pytest.mark.parametrize("fmt", ["csv", "json", "xlsx"])
@pytest.mark.parametrize("system", ["DWH", "LAB"])
def test_a_fresh_pull_plans_no_change(client, emu, tmp_path, system, fmt):
    pulled = pull_folder(client.api, system, tmp_path, fmt=fmt, progress=False)
    assert (pulled["action"] == "written").all() and len(pulled) > 30
    before = emu.counters()
    plan = plan_folder(client.api, tmp_path, progress=False)
    assert plan.exit_code == 0, [(o.id, o.detail) for o in plan.objects if o.status != "unchanged"]
    assert len(plan.objects) == len(pulled)
    after = emu.counters()
    assert after.get("tableUpdate", 0) == before.get("tableUpdate", 0)
    if fmt != "xlsx":  # a workbook holds the time it was written; text files do not
        again = pull_folder(client.api, system, tmp_path, fmt=fmt, progress=False)
        assert (again["action"] == "unchanged").all()


# -- edits -------------------------------------------------------------------------------


@pytest.fixture
def customers(client, tmp_path):
    """tbl-0001 (hard values: big ints, nested JSON, '=SUM(...)' text) pulled as CSV."""
    pull_folder(client.api, "DWH", tmp_path, ids=["tbl-0001"], progress=False)
    return tmp_path / "tables" / "tbl-0001.csv"


def _lines(path):
    return path.read_text("utf-8").splitlines(keepends=True)


def test_json_cells_keep_their_types(client, customers, tmp_path):
    lines = _lines(customers)
    lines[1] = lines[1].replace(",120,9007199254740993,", ",121,9007199254740993,")
    customers.write_text("".join(lines), "utf-8")
    plan = plan_folder(client.api, tmp_path, progress=False)
    (entry,) = plan.objects
    assert entry.status == "changes"
    assert [(c["row"], c["column"], c["old"], c["new"]) for c in entry.changes] == [
        (0, "loyalty_points", 120, 121)
    ]
    result = apply_plan(client.api, plan, backup_dir=tmp_path / "bk", progress=False)
    assert result.attrs["ok"]
    row = client.api.get_table("tbl-0001")["data"][0]
    assert row["loyalty_points"] == 121 and type(row["loyalty_points"]) is int
    assert row["external_ref"] == 9007199254740993  # beyond float precision, untouched


def test_a_cell_that_is_not_json_fails_naming_line_and_column(client, customers, tmp_path):
    lines = _lines(customers)
    lines[2] = lines[2].replace(",false,", ",nope,")
    customers.write_text("".join(lines), "utf-8")
    (entry,) = plan_folder(client.api, tmp_path, progress=False).objects
    assert entry.status == "failed"
    assert "line 3" in entry.detail and "'is_active'" in entry.detail


def test_added_and_deleted_rows(client, emu, customers, tmp_path):
    lines = _lines(customers)
    header = lines[0].count(",")
    new = ",0009999,Neu" + "," * (header - 2) + "\n"
    customers.write_text("".join([lines[0], *lines[2:], new]), "utf-8")  # row 0 gone, one new
    refused = plan_folder(client.api, tmp_path, progress=False)
    assert refused.exit_code == 1 and refused.objects[0].status == "refused"
    assert "delet" in refused.objects[0].detail
    plan = plan_folder(client.api, tmp_path, allow_deletes=True, progress=False)
    (entry,) = plan.objects
    assert (entry.status, entry.addedRows, entry.deletedRows, entry.changedCells) == (
        "changes", 1, 1, 0,
    )  # fmt: skip
    assert apply_plan(client.api, plan, backup_dir=tmp_path / "bk", progress=False).attrs["ok"]
    data = client.api.get_table("tbl-0001")["data"]
    assert data[-1] == {"customer_no": "0009999", "first_name": "Neu"}
    assert "0000123" not in [r.get("customer_no") for r in data]
    assert plan_folder(client.api, tmp_path, progress=False).exit_code == 0  # after: in sync?


def test_a_file_changed_after_the_plan_is_refused(client, customers, tmp_path):
    customers.write_text(customers.read_text("utf-8").replace("Jürgen", "Juergen"), "utf-8")
    plan = plan_folder(client.api, tmp_path, progress=False)
    plan_path = plan.save(tmp_path / "out" / "plan.json")
    assert json.loads(plan_path.read_text("utf-8"))["folder"] == ".."
    customers.write_text(customers.read_text("utf-8").replace("Juergen", "J."), "utf-8")
    result = apply_plan(client.api, Plan.load(plan_path), progress=False)
    assert not result.attrs["ok"]
    assert (
        result.loc[0, "status"] == "refused" and "changed since the plan" in result.loc[0, "error"]
    )
    assert client.api.get_table("tbl-0001")["data"][0]["first_name"] == "Jürgen"


def test_two_files_of_one_object_are_refused(client, customers, tmp_path):
    copy = customers.with_name("copy.csv")
    copy.write_text(customers.read_text("utf-8"), "utf-8")
    customers.with_name("copy.meta.json").write_text(
        customers.with_name("tbl-0001.meta.json").read_text("utf-8"), "utf-8"
    )
    plan = plan_folder(client.api, tmp_path, progress=False)
    assert plan.exit_code == 1
    assert {o.status for o in plan.objects} == {"refused"}
