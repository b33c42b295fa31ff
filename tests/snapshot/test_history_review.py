"""The change-review workbook of a history: written, re-saved by LibreOffice, a revert
marked, read back as a plan and applied through the journal; a revert of a cell changed
on the service since the review is refused and sends nothing."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from spreadsheet_program import resave  # noqa: E402

from mddframes import Client, apply_plan, read_history, read_review_excel
from mddframes.snapshot.history_review import REVIEW_COLUMNS

pytestmark = pytest.mark.pandas_once
SYSTEM = "LAB"


def _edit(client: Client, table_id: str, value: str) -> tuple[str, str]:
    frame = client.read_table(table_id)
    column = [c for c in frame.columns if frame[c].dtype == "string"][-1]  # not its key
    before = frame.loc[frame.index[0], column]
    frame.loc[frame.index[0], column] = value
    client.write_table(table_id, frame)
    return str(column), before


def _history_with_two_edits(client: Client, store: Path) -> tuple[list[str], list[tuple[str, str]]]:
    ids = [str(i) for i in client.read_tree(SYSTEM)["table_id"].dropna().unique()[:2]]
    client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    edits = [_edit(client, table_id, f"edited {n}") for n, table_id in enumerate(ids)]
    client.snapshot(SYSTEM, history=store, progress=False, structures=False)
    return ids, edits


def _mark_revert(path: Path, table_id: str) -> None:
    workbook = openpyxl.load_workbook(path)
    marked = 0
    for sheet in workbook.worksheets[1:]:
        for row in sheet.iter_rows(min_row=2):
            line = dict(zip(REVIEW_COLUMNS, row, strict=False))
            if line["id"].value == table_id and line["change"].value == "cell":
                line["decision"].value = "revert"
                marked += 1
    assert marked == 1
    workbook.save(path)


@pytest.mark.spreadsheet_program
@pytest.mark.slow
def test_a_revert_marked_in_a_resaved_review_is_applied_through_the_journal(client, tmp_path):
    store = tmp_path / "history"
    ids, edits = _history_with_two_edits(client, store)
    written = read_history(store).to_review_excel(None, None, tmp_path / "review.xlsx")
    workbook = openpyxl.load_workbook(written)
    assert workbook.sheetnames[0] == "_review" and len(workbook.sheetnames) == 3
    first = workbook.worksheets[1]
    assert [c.value for c in first[1]] == list(REVIEW_COLUMNS)
    assert first.column_dimensions["J"].hidden
    assert first["I2"].fill.fgColor.rgb.endswith("FFF2A8")  # the new value highlighted

    # a reviewer opens it in LibreOffice, marks one line revert, and saves it again
    (opened,) = resave([written], tmp_path / "opened")
    _mark_revert(opened, ids[0])
    (reviewed,) = resave([opened], tmp_path / "reviewed")

    plan = read_review_excel(client.api, reviewed, folder=tmp_path / "reverts")
    assert plan.exit_code == 2
    assert [(o.id, o.status, o.changedCells) for o in plan.objects] == [(ids[0], "changes", 1)]
    applied = apply_plan(client.api, plan, backup_dir=tmp_path / "backups", progress=False)
    assert applied.attrs["ok"] and applied["verified"].all() and applied["batch"].notna().all()
    (column, before), (other_column, _) = edits
    assert client.read_table(ids[0])[column].iloc[0] == before  # reverted
    assert client.read_table(ids[1])[other_column].iloc[0] == "edited 1"  # kept


def test_a_cell_changed_on_the_service_since_the_review_is_refused(client, tmp_path):
    store = tmp_path / "history"
    ids, _edits = _history_with_two_edits(client, store)
    review = read_history(store).to_review_excel(None, None, tmp_path / "review.xlsx")
    _mark_revert(review, ids[0])
    _edit(client, ids[0], "changed after the review")
    plan = read_review_excel(client.api, review, folder=tmp_path / "reverts")
    assert plan.exit_code == 1
    (refused,) = [o for o in plan.objects if o.status == "refused"]
    assert refused.id == ids[0] and "changed on the service since the review" in refused.detail
    applied = apply_plan(client.api, plan, progress=False)
    assert not applied.attrs["ok"]
    assert client.read_table(ids[0]).iloc[0].tolist().count("changed after the review") == 1


def test_a_review_workbook_is_checked(client, tmp_path):
    store = tmp_path / "history"
    ids, _edits = _history_with_two_edits(client, store)
    review = read_history(store).to_review_excel(1, 2, tmp_path / "review.xlsx")
    workbook = openpyxl.load_workbook(review)
    workbook.worksheets[1]["A2"] = "undo"
    workbook.save(review)
    with pytest.raises(Exception, match="neither keep nor revert"):
        read_review_excel(client.api, review, folder=tmp_path / "reverts")
    other = tmp_path / "other.xlsx"
    openpyxl.Workbook().save(other)
    with pytest.raises(Exception, match="not a review workbook"):
        read_review_excel(client.api, other, folder=tmp_path / "reverts")


def test_a_blanked_cell_reverts_and_an_added_row_is_listed(client, tmp_path):
    # a cell set to null shows in the history as absent (Parquet keeps no null apart from a
    # missing key): its revert is no conflict, and it puts the old value back; a row added
    # in the same range is listed with no key, not a failure of the whole workbook
    store = tmp_path / "history"
    system = "FLOW"  # LAB's tables hold one row each
    ids = [str(i) for i in client.read_tree(system)["table_id"].dropna().unique()]
    table_id = next(i for i in ids if len(client.read_table(i)) >= 2)
    client.snapshot(system, history=store, progress=False, structures=False)
    frame = client.read_table(table_id)
    column = [c for c in frame.columns if frame[c].dtype == "string"][-1]
    before = frame.loc[frame.index[0], column]
    assert isinstance(before, str)
    frame.loc[frame.index[0], column] = None
    frame.loc["new[0]"] = frame.loc[frame.index[1]]
    key = frame.columns[0]  # FLOW's tables are keyed by their first column, a text
    frame.loc["new[0]", key] = "999999"
    client.write_table(table_id, frame)
    client.snapshot(system, history=store, progress=False, structures=False)

    review = read_history(store).to_review_excel(None, None, tmp_path / "review.xlsx")
    workbook = openpyxl.load_workbook(review)
    changes = {
        cell.value for sheet in workbook.worksheets[1:] for cell in sheet["D"][1:] if cell.value
    }
    assert {"cell", "row added"} <= changes, changes
    _mark_revert(review, table_id)
    plan = read_review_excel(client.api, review, folder=tmp_path / "reverts")
    assert [(o.id, o.status, o.changedCells) for o in plan.objects] == [(table_id, "changes", 1)]
    applied = apply_plan(client.api, plan, backup_dir=tmp_path / "backups", progress=False)
    assert applied.attrs["ok"]
    after = client.read_table(table_id)
    assert after.loc[after.index[0], column] == before and len(after) == len(frame)
