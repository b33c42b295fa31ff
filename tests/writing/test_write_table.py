"""The safe writer against the emulator: conflicts, dry runs, refusals, backups, verification."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest

from mddframes import (
    ConcurrentModificationError,
    IncompletePayloadError,
    MddError,
    WriteVerificationError,
)
from mddframes.codec.values import ABSENT, strict_equal


@pytest.fixture
def customer(client):
    """(table id, payload as the service holds it) of the sample's customer table."""
    tree = client.read_tree("DWH")
    table_id = tree.loc[tree["name"] == "crm_customer", "table_id"].iloc[0]
    return table_id, client.api.get_table(table_id)


def puts(emu) -> int:
    return emu.counters().get("tableUpdate", 0)


def assert_only_cells_changed(before: dict, after: dict, cells: dict) -> None:
    """``after`` equals ``before`` (types and key order too) except for ``cells``."""
    assert [k for k in after if k != "data"] == [k for k in before if k != "data"]
    for key in before:
        if key != "data":
            assert strict_equal(after[key], before[key]), key
    assert len(after["data"]) == len(before["data"])
    for position, (old, new) in enumerate(zip(before["data"], after["data"], strict=True)):
        for name in dict.fromkeys([*old, *new]):
            want = cells.get((position, name), old.get(name, ABSENT))
            got = new.get(name, ABSENT)
            assert strict_equal(got, want) and type(got) is type(want), (position, name, got)
        assert list(new)[: len(old)] == list(old)  # key order kept


def test_frame_without_change_sends_nothing(client, emu, customer):
    table_id, _ = customer
    frame = client.read_table(table_id)
    emu.reset_counters()

    result = client.write_table(table_id, frame)

    assert result.status == "unchanged"
    assert result.diff.empty and result.backup is None and result.verified is None
    assert puts(emu) == 0


def test_real_edit_round_trips_and_is_verified(client, emu, customer, tmp_path):
    table_id, before = customer
    frame = client.read_table(table_id)
    frame.loc[0, "first_name"] = "Jürgen-Peter"
    frame.loc[1, "loyalty_points"] = 4242
    frame.loc[2, "birth_date"] = pd.Timestamp("1988-07-08")
    frame.loc[3, "lifetime_value"] = pd.NA  # a value set to null
    frame.loc[4, "is_active"] = True
    emu.reset_counters()

    result = client.write_table(table_id, frame, backup_dir=tmp_path)

    assert result.status == "written" and result.verified is True
    assert puts(emu) == 1
    expected = {
        (0, "first_name"): "Jürgen-Peter",
        (1, "loyalty_points"): 4242,
        (2, "birth_date"): "1988-07-08",
        (3, "lifetime_value"): None,
        (4, "is_active"): True,
    }
    if before["data"][4].get("is_active") is True:
        del expected[(4, "is_active")]
    assert_only_cells_changed(before, client.api.get_table(table_id), expected)
    assert set(zip(result.diff.changed["row"], result.diff.changed["column"], strict=True)) == set(
        expected
    )
    # the backup holds exactly what the service held before
    assert result.backup.parent == tmp_path / "acme" / "table" / table_id.replace(".", "%2E")
    saved = json.loads(result.backup.read_text(encoding="utf-8"))
    assert (saved["kind"], saved["id"], saved["tenant"]) == ("table", table_id, "acme")
    assert json.dumps(saved["payload"]) == json.dumps(before)


def test_the_same_frame_can_be_edited_and_written_again(client, emu, customer, tmp_path):
    table_id, _ = customer
    frame = client.read_table(table_id)
    frame.loc[0, "email"] = "first@example.org"
    client.write_table(table_id, frame, backup_dir=tmp_path)

    assert client.write_table(table_id, frame, backup_dir=tmp_path).status == "unchanged"
    frame.loc[1, "email"] = "second@example.org"
    result = client.write_table(table_id, frame, backup_dir=tmp_path)

    assert result.status == "written"
    assert len(result.diff.changed) == 1
    data = client.api.get_table(table_id)["data"]
    assert (data[0]["email"], data[1]["email"]) == ("first@example.org", "second@example.org")


def test_conflict_when_the_table_changed_since_it_was_read(client, emu, customer, tmp_path):
    table_id, _ = customer
    frame = client.read_table(table_id)
    frame.loc[2, "last_name"] = "Edited"
    touched = emu.touch_table(table_id)
    emu.reset_counters()

    with pytest.raises(ConcurrentModificationError) as caught:
        client.write_table(table_id, frame, backup_dir=tmp_path)

    assert puts(emu) == 0
    message = str(caught.value)
    assert table_id in message and repr(touched["column"]) in message
    changes = caught.value.changes
    line = changes[changes["change"] == "changed"].iloc[0]
    assert (line["row"], line["column"], line["new"]) == (
        touched["row"], touched["column"], touched["new"]
    )  # fmt: skip
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_force_overwrites_a_conflict_and_the_backup_keeps_the_other_change(
    client, emu, customer, tmp_path
):
    table_id, before = customer
    frame = client.read_table(table_id)
    frame.loc[2, "last_name"] = "Edited"
    touched = emu.touch_table(table_id)

    result = client.write_table(table_id, frame, force=True, backup_dir=tmp_path)

    assert result.status == "written" and result.verified
    now = client.api.get_table(table_id)
    assert now["data"][2]["last_name"] == "Edited"
    assert now["data"][touched["row"]][touched["column"]] == touched["old"]
    saved = json.loads(result.backup.read_text(encoding="utf-8"))["payload"]
    assert saved["data"][touched["row"]][touched["column"]] == touched["new"]


def test_dry_run_sends_nothing_and_reports_the_diff(client, emu, customer, tmp_path):
    table_id, before = customer
    frame = client.read_table(table_id)
    frame.loc[1, "notes"] = "dry"
    emu.reset_counters()

    result = client.write_table(table_id, frame, dry_run=True, backup_dir=tmp_path)

    assert result.status == "dry-run"
    assert puts(emu) == 0
    assert result.backup is None
    assert not tmp_path.exists() or not any(tmp_path.iterdir())
    assert result.diff.changed[["row", "column", "new"]].values.tolist() == [[1, "notes", "dry"]]
    assert result.report.ok
    assert result.payload["data"][1]["notes"] == "dry"
    assert json.dumps(client.api.get_table(table_id)) == json.dumps(before)
    assert "dry" in result._repr_html_()


def test_backup_then_restore_gives_the_original_back(client, emu, customer, tmp_path):
    table_id, before = customer
    frame = client.read_table(table_id)
    frame.loc[0, "credit_limit"] = "99999.99"
    frame = frame.drop(index=[5])
    written = client.write_table(table_id, frame, allow_deletes=True, backup_dir=tmp_path)
    edited = client.api.get_table(table_id)
    assert len(edited["data"]) == len(before["data"]) - 1

    restored = client.restore(written.backup, backup_dir=tmp_path)

    assert restored.status == "written" and restored.verified
    assert json.dumps(client.api.get_table(table_id)) == json.dumps(before)
    # restoring backed up the edited version first
    assert restored.backup != written.backup
    saved = json.loads(restored.backup.read_text(encoding="utf-8"))["payload"]
    assert json.dumps(saved) == json.dumps(edited)
    assert client.restore(written.backup, backup_dir=tmp_path).status == "unchanged"


def test_incomplete_frames_are_refused_with_a_report_naming_table_row_column(
    client, emu, customer, tmp_path
):
    table_id, before = customer
    frame = client.read_table(table_id)
    emu.reset_counters()

    attempts = {
        "declared column missing": frame.drop(columns=["email"]),
        "row deleted": frame.drop(index=[1, 2]),
        "type drift: string turned integer": frame.assign(
            customer_no=pd.to_numeric(frame["customer_no"]).astype("Int64")
        ),
    }
    reports = {}
    for problem, broken in attempts.items():
        with pytest.raises(IncompletePayloadError) as caught:
            client.write_table(table_id, broken, backup_dir=tmp_path)
        assert table_id in str(caught.value) and problem in str(caught.value)
        reports[problem] = caught.value.report.errors

    assert puts(emu) == 0
    assert not tmp_path.exists() or not any(tmp_path.iterdir())
    missing = reports["declared column missing"]
    assert missing[["table", "column"]].values.tolist() == [[table_id, "email"]]
    deleted = reports["row deleted"]
    assert sorted(deleted["row"]) == [1, 2] and set(deleted["table"]) == {table_id}
    drift = reports["type drift: string turned integer"]
    assert set(drift["column"]) == {"customer_no"}
    assert sorted(drift["row"]) == list(range(len(before["data"])))
    first = drift.sort_values("row").iloc[0]
    assert (first["old"], first["new"]) == (before["data"][0]["customer_no"],
                                            int(before["data"][0]["customer_no"]))  # fmt: skip
    assert json.dumps(client.api.get_table(table_id)) == json.dumps(before)


def test_new_rows_carry_their_non_missing_cells(client, emu, customer, tmp_path):
    table_id, before = customer
    frame = client.read_table(table_id)
    new = pd.DataFrame(
        {"customer_no": ["0009999"], "first_name": ["Ada"], "last_name": ["Lovelace"],
         "created_at": [pd.Timestamp("2024-06-01T12:00:00Z")], "loyalty_points": [7]},
        index=[1000],
    ).astype({"customer_no": "string", "loyalty_points": "Int64"})  # fmt: skip
    frame = pd.concat([frame, new])

    result = client.write_table(table_id, frame, backup_dir=tmp_path)

    assert result.status == "written" and result.verified
    data = client.api.get_table(table_id)["data"]
    assert json.dumps(data[:-1]) == json.dumps(before["data"])
    assert data[-1] == {
        "customer_no": "0009999", "first_name": "Ada", "last_name": "Lovelace",
        "created_at": "2024-06-01T12:00:00Z", "loyalty_points": 7,
    }  # fmt: skip
    assert list(result.diff.added.index) == [1000]
    # the frame no longer lines up with the table: writing it again is a conflict
    with pytest.raises(ConcurrentModificationError):
        client.write_table(table_id, frame, backup_dir=tmp_path)


def test_a_frame_that_lost_its_attrs_uses_the_clients_context(client, customer, tmp_path):
    table_id, _ = customer
    frame = client.read_table(table_id)
    frame.loc[0, "notes"] = "via registry"
    bare = frame.copy()
    bare.attrs = {}

    result = client.write_table(table_id, bare, backup_dir=tmp_path)

    assert result.status == "written"
    assert client.api.get_table(table_id)["data"][0]["notes"] == "via registry"


def test_writing_a_table_never_read_needs_force(client, emu, customer, tmp_path):
    table_id, before = customer
    from mddframes import Client, from_payload

    fresh = Client.from_emulator(emu)
    try:
        frame = from_payload(copy.deepcopy(before))
        frame.loc[0, "notes"] = "forced"
        with pytest.raises(MddError, match="read_table"):
            fresh.write_table(table_id, frame, backup_dir=tmp_path)
        result = fresh.write_table(table_id, frame, force=True, backup_dir=tmp_path)
    finally:
        fresh.close()
    assert result.status == "written"
    assert client.api.get_table(table_id)["data"][0]["notes"] == "forced"


def test_columns_metadata_can_be_replaced_from_the_columns_frame(client, customer, tmp_path):
    table_id, before = customer
    frame = client.read_table(table_id)
    columns = client.read_table_columns(table_id)
    columns.loc[columns["name"] == "email", "description"] = "Where we write to"

    result = client.write_table(table_id, frame, columns=columns, backup_dir=tmp_path)

    assert result.status == "written"
    assert list(result.diff.envelope["key"]) == ["metadata"]
    after = client.api.get_table(table_id)
    expected = copy.deepcopy(before["metadata"])
    for column in expected["columns"]:
        if column["name"] == "email":
            column["description"] = "Where we write to"
    assert json.dumps(after["metadata"]) == json.dumps(expected)
    assert json.dumps(after["data"]) == json.dumps(before["data"])


def test_verification_catches_a_table_that_reads_back_different(
    client, customer, tmp_path, changed_after_put
):
    table_id, _ = customer
    frame = client.read_table(table_id)
    frame.loc[0, "notes"] = "mine"
    with pytest.raises(WriteVerificationError, match="reads back different") as caught:
        client.write_table(table_id, frame, backup_dir=tmp_path)
    assert str(tmp_path) in str(caught.value)  # names the backup to restore from


def test_write_mapping_round_trips_an_edit(client, emu, tmp_path):
    tree = client.read_tree("DWH")
    mapping_id = tree["mapping_id"].dropna().iloc[0]
    before = client.api.get_mapping(mapping_id)
    frame = client.read_mapping(mapping_id)
    frame.loc[0, "transformation"] = "UPPER(TRIM(src.x))"
    emu.reset_counters()

    result = client.write_mapping(mapping_id, frame, backup_dir=tmp_path)

    assert result.status == "written" and result.verified
    assert emu.counters().get("mappingUpdate", 0) == 1
    after = client.api.get_mapping(mapping_id)
    expected = copy.deepcopy(before)
    expected["columnMappings"][0]["transformation"] = "UPPER(TRIM(src.x))"
    assert json.dumps(after) == json.dumps(expected)
    assert result.backup.parent.parent.name == "mapping"
