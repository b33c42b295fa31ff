"""write_tables / write_mappings on long frames, restore's refusals, backup paths of awkward ids."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from mddframes import (
    ConcurrentModificationError,
    DataShapeError,
    IncompletePayloadError,
    InvalidArgumentError,
)
from mddframes.writing import save_backup


@pytest.fixture
def two_tables(client):
    tree = client.read_tree("DWH")
    ids = tree.set_index("name").loc[["crm_customer", "erp_sales_order"], "table_id"].tolist()
    return ids


def updates(emu, operation="tableUpdate") -> int:
    return emu.counters().get(operation, 0)


def test_write_tables_writes_only_the_changed_table(client, emu, two_tables, tmp_path):
    first, second = two_tables
    before_second = client.api.get_table(second)
    long = client.read_tables(two_tables, progress=False)
    row = long["row"][(long["table_id"] == first).to_numpy()].iloc[0]
    long.loc[(long["table_id"] == first).to_numpy() & (long["row"] == row).to_numpy(), "notes"] = (
        "bulk edit"
    )
    emu.reset_counters()

    result = client.write_tables(long, backup_dir=tmp_path, progress=False)

    assert result["table_id"].tolist() == [first, second]
    assert result["status"].tolist() == ["written", "unchanged"]
    assert result["verified"].tolist()[0] is True
    assert result["changed_cells"].tolist() == [1, 0]
    assert updates(emu) == 1
    assert client.api.get_table(first)["data"][row]["notes"] == "bulk edit"
    assert json.dumps(client.api.get_table(second)) == json.dumps(before_second)
    assert result.attrs["results"][first].backup.exists()


def test_one_broken_table_stops_the_whole_batch_before_anything_is_sent(
    client, emu, two_tables, tmp_path
):
    first, second = two_tables
    long = client.read_tables(two_tables, progress=False)
    is_first, is_second = (
        (long["table_id"] == first).to_numpy(),
        (long["table_id"] == second).to_numpy(),
    )
    long.loc[is_first & (long["row"] == 0).to_numpy(), "notes"] = "valid edit"
    broken = long[
        ~(is_second & long["row"].isin([0, 1]).to_numpy())
    ]  # rows 0 and 1 of the second gone
    emu.reset_counters()

    with pytest.raises(IncompletePayloadError) as caught:
        client.write_tables(broken, backup_dir=tmp_path, progress=False)

    assert updates(emu) == 0
    assert second in str(caught.value) and "no table was written" in str(caught.value)
    errors = caught.value.report.errors
    assert set(errors["table"]) == {second}
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_a_conflict_in_one_table_stops_the_batch(client, emu, two_tables, tmp_path):
    first, second = two_tables
    long = client.read_tables(two_tables, progress=False)
    long.loc[(long["table_id"] == first).to_numpy() & (long["row"] == 0).to_numpy(), "notes"] = "x"
    emu.touch_table(second)
    emu.reset_counters()

    with pytest.raises(ConcurrentModificationError) as caught:
        client.write_tables(long, backup_dir=tmp_path, progress=False)

    assert updates(emu) == 0
    assert second in str(caught.value)


def test_write_tables_dry_run_sends_nothing(client, emu, two_tables, tmp_path):
    first, _ = two_tables
    long = client.read_tables(two_tables, progress=False)
    long.loc[(long["table_id"] == first).to_numpy() & (long["row"] == 1).to_numpy(), "notes"] = (
        "dry"
    )
    emu.reset_counters()

    result = client.write_tables(long, dry_run=True, backup_dir=tmp_path, progress=False)

    assert result["status"].tolist() == ["dry-run", "unchanged"]
    assert updates(emu) == 0
    assert result["backup"].isna().all()


def test_write_mappings_round_trips_an_edit(client, emu, tmp_path):
    tree = client.read_tree("DWH")
    ids = tree["mapping_id"].dropna().tolist()[:3]
    long = client.read_mappings(ids, progress=False)
    second = (long["mapping_id"] == ids[1]).to_numpy()
    long.loc[second & (long["row"] == 0).to_numpy(), "transformation"] = "CAST(src.x AS INT)"
    emu.reset_counters()

    result = client.write_mappings(long, backup_dir=tmp_path, progress=False)

    assert result["status"].tolist() == ["unchanged", "written", "unchanged"]
    assert updates(emu, "mappingUpdate") == 1
    assert (
        client.api.get_mapping(ids[1])["columnMappings"][0]["transformation"]
        == "CAST(src.x AS INT)"
    )


def test_write_tables_needs_a_long_frame(client):
    frame = client.read_table(client.read_tree("DWH")["table_id"].dropna().iloc[0])
    with pytest.raises(InvalidArgumentError, match="table_id"):
        client.write_tables(frame, progress=False)


@pytest.mark.parametrize("awkward", ["..", "tbl/with/slash", "a?b#c"])
def test_backups_of_awkward_ids_stay_inside_the_backup_folder(client, awkward, tmp_path):
    frame = client.read_table(awkward)
    frame.loc[0, "label"] = "edited"

    result = client.write_table(awkward, frame, backup_dir=tmp_path)

    folder = result.backup.parent
    assert folder.resolve().is_relative_to((tmp_path / "acme" / "table").resolve())
    assert folder.parent == tmp_path / "acme" / "table"
    assert "/" not in folder.name and folder.name not in (".", "..")
    assert client.restore(result.backup, backup_dir=tmp_path).verified
    assert client.api.get_table(awkward)["data"][0]["label"] == f"row of table {awkward}"


def test_restore_refuses_a_file_that_is_not_a_backup_or_of_another_tenant(client, tmp_path):
    not_backup = tmp_path / "x.json"
    not_backup.write_text('{"kind": "table"}', encoding="utf-8")
    with pytest.raises(DataShapeError, match="not an mddframes backup"):
        client.restore(not_backup)

    class OtherTenant:
        tenant = "globex"

    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    foreign = save_backup(OtherTenant(), "table", table_id, client.api.get_table(table_id),
                          backup_dir=tmp_path)  # fmt: skip
    with pytest.raises(InvalidArgumentError, match="tenant 'globex'"):
        client.restore(foreign)


def test_restore_dry_run_reports_the_diff_without_sending(client, emu, tmp_path):
    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    frame = client.read_table(table_id)
    frame.loc[0, "notes"] = "to be undone"
    written = client.write_table(table_id, frame, backup_dir=tmp_path)
    emu.reset_counters()

    preview = client.restore(written.backup, dry_run=True)

    assert preview.status == "dry-run" and updates(emu) == 0
    assert preview.diff.changed[["row", "column", "old"]].values.tolist() == [
        [0, "notes", "to be undone"]
    ]


def test_write_tables_aligns_by_the_row_column_not_the_index(client, emu, two_tables, tmp_path):
    first, second = two_tables
    before = client.api.get_table(first)["data"]
    long = client.read_tables(two_tables, progress=False)
    is_first = (long["table_id"] == first).to_numpy()
    # ordinary pandas assignment on the unique index, then the frame reordered and re-indexed
    long.loc[is_first & (long["row"] == 1).to_numpy(), "notes"] = "by position"
    added = long[is_first].iloc[[0]].assign(row=pd.NA, notes="a new row")
    long = pd.concat([added, long.iloc[::-1]], ignore_index=True)
    long = long[~((long["table_id"] == first) & (long["row"] == 0)).fillna(False).to_numpy()]
    emu.reset_counters()

    result = client.write_tables(long, allow_deletes=True, backup_dir=tmp_path, progress=False)

    assert result.set_index("table_id").loc[first, ["changed_cells", "added_rows", "deleted_rows"]
                                            ].tolist() == [1, 1, 1]  # fmt: skip
    assert result.set_index("table_id").loc[second, "status"] == "unchanged"
    after = client.api.get_table(first)["data"]
    assert after[0] == {**before[1], "notes": "by position"}
    assert after[-1]["notes"] == "a new row" and len(after) == len(before)
