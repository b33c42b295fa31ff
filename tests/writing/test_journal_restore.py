"""restore_backups: several backups put back as one journalled batch."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from crash_writer import edit

from mddframes import Client, DataShapeError, InvalidArgumentError
from mddframes.writing import RESTORE_COLUMNS, save_backup
from mddframes.writing.journal_file import read_journal

SYSTEM = "DWH"


@pytest.fixture
def table_ids(client):
    return client.read_tree(SYSTEM)["table_id"].dropna().tolist()[:3]


def stored(emu, ids) -> dict[str, str]:
    return {table_id: emu._state.store.table_json(table_id) for table_id in ids}


def updates(emu) -> int:
    return emu.counters().get("tableUpdate", 0)


@pytest.fixture
def written(client, emu, table_ids, tmp_path):
    """write_tables over the tables, the last one left unchanged: (result, old, new)."""
    old = stored(emu, table_ids)
    long = client.read_tables(table_ids, progress=False)
    last = (long["table_id"] == table_ids[-1]).to_numpy()
    frame = pd.concat([edit(long[~last]), long[last]])
    result = client.write_tables(frame, backup_dir=tmp_path, progress=False)
    assert result["status"].tolist() == ["written", "written", "unchanged"]
    return result, old, stored(emu, table_ids)


def test_the_backup_column_of_a_bulk_write_is_restored_as_one_batch(
    written, client, emu, table_ids, tmp_path
):
    result, old, new = written
    emu.reset_counters()

    frame = client.restore_backups(result["backup"], backup_dir=tmp_path, progress=False)

    assert list(frame.columns) == list(RESTORE_COLUMNS)
    assert frame["id"].tolist() == table_ids[:2]  # the missing backup is skipped
    assert frame["status"].tolist() == ["written", "written"]
    assert frame["verified"].tolist() == [True, True]
    assert frame["source"].tolist() == result["backup"].tolist()[:2]
    assert updates(emu) == 2
    assert stored(emu, table_ids) == old  # byte for byte
    journal = read_journal(frame.attrs["journal"])
    assert journal.operation == "restore_backups" and journal.outcome == "written"
    assert journal.batch == frame.attrs["batch"]
    # the restore backed up what it overwrote: the bulk write's new content
    for backup, table_id in zip(frame["backup"], table_ids, strict=False):
        assert json.loads(Path(backup).read_text())["payload"] == json.loads(new[table_id])
    assert client.pending_writes(backup_dir=tmp_path).empty

    # and the restore itself can be rolled back, to the bulk write's content
    undone = client.roll_back(frame.attrs["batch"], backup_dir=tmp_path, progress=False)
    assert undone.attrs["finished"]
    assert stored(emu, table_ids) == new


def test_a_crash_half_way_through_a_restore_resumes(written, client, emu, table_ids, tmp_path):
    result, old, new = written
    frame = client.restore_backups(result["backup"], backup_dir=tmp_path, progress=False)
    journal = Path(frame.attrs["journal"])
    journal.write_bytes(journal.read_bytes().split(b"\n")[0] + b"\n" + b'{"type": "ev')
    # the crash left the first table restored, the second still holding the new content
    with Client.from_emulator(emu) as other:
        other.api.put_table(table_ids[1], json.loads(new[table_ids[1]]))
    assert client.pending_writes(backup_dir=tmp_path)["operation"].tolist() == ["restore_backups"]

    again = client.resume(frame.attrs["batch"], backup_dir=tmp_path, progress=False)

    assert again["action"].tolist() == ["already", "sent"]
    assert stored(emu, table_ids) == old


def test_tables_and_mappings_restore_in_one_batch(client, emu, tmp_path):
    tree = client.read_tree(SYSTEM)
    table_id = tree["table_id"].dropna().iloc[0]
    mapping_id = tree["mapping_id"].dropna().iloc[0]
    before_table = emu._state.store.table_json(table_id)
    before_mapping = emu._state.store.mapping_json(mapping_id)
    table = client.read_table(table_id)
    table.iloc[0, table.columns.get_loc(table.select_dtypes("string").columns[0])] = "x"
    mapping = client.read_mapping(mapping_id)
    mapping.loc[mapping.index[0], "transformation"] = "UPPER(x)"
    backups = [
        client.write_table(table_id, table, backup_dir=tmp_path).backup,
        client.write_mapping(mapping_id, mapping, backup_dir=tmp_path).backup,
    ]

    frame = client.restore_backups(backups, backup_dir=tmp_path, progress=False)

    assert frame[["kind", "id", "status"]].values.tolist() == [
        ["table", table_id, "written"], ["mapping", mapping_id, "written"],
    ]  # fmt: skip
    assert emu._state.store.table_json(table_id) == before_table
    assert emu._state.store.mapping_json(mapping_id) == before_mapping
    assert [o.kind for o in read_journal(frame.attrs["journal"]).objects] == ["table", "mapping"]


def test_dry_run_and_unchanged_send_nothing_and_keep_no_journal(written, client, emu, tmp_path):
    result, _, _ = written
    backups = result["backup"].dropna().tolist()
    emu.reset_counters()

    dry = client.restore_backups(backups, dry_run=True, backup_dir=tmp_path, progress=False)
    assert dry["status"].tolist() == ["dry-run", "dry-run"]
    assert dry["changed_cells"].tolist() == [1, 1]
    assert dry.attrs["batch"] is None and updates(emu) == 0

    client.restore_backups(backups, backup_dir=tmp_path, progress=False)
    emu.reset_counters()
    same = client.restore_backups(backups, backup_dir=tmp_path, progress=False)
    assert same["status"].tolist() == ["unchanged", "unchanged"]
    assert same.attrs["batch"] is None and updates(emu) == 0


def test_refusals_come_before_anything_is_read_or_sent(written, client, emu, tmp_path):
    result, _, _ = written
    backups = result["backup"].dropna().tolist()
    emu.reset_counters()
    with pytest.raises(InvalidArgumentError, match="at least one"):
        client.restore_backups([], backup_dir=tmp_path)
    with pytest.raises(InvalidArgumentError, match="two backups of table"):
        client.restore_backups([backups[0], backups[1], backups[0]], backup_dir=tmp_path)
    foreign = save_backup(type("Api", (), {"tenant": "elsewhere"})(), "table", "t1",
                          {"id": "t1"}, backup_dir=tmp_path)  # fmt: skip
    with pytest.raises(InvalidArgumentError, match="tenant 'elsewhere'"):
        client.restore_backups([backups[0], foreign], backup_dir=tmp_path)
    junk = tmp_path / "junk.json"
    junk.write_text("[]")
    with pytest.raises(DataShapeError, match="junk.json"):
        client.restore_backups([backups[0], junk], backup_dir=tmp_path)
    with pytest.raises(InvalidArgumentError, match="not a backup file"):
        client.restore_backups([backups[0], 42], backup_dir=tmp_path)
    assert emu.counters().get("getTable", 0) == 0 and updates(emu) == 0
    assert client.pending_writes(backup_dir=tmp_path, include_finished=True)["batch"].size == 1
