"""The write journal and recovery from it, in-process: format, torn lines, refusals, faults.

A crash is simulated without killing anything: the batch is written, then the journal
is cut back to the lines a crash would have left (with a torn last line) and the
emulator is put back to what it held before (``emu.reset()``), or to a mix of old
and new. The SIGKILL test (tests/writing/test_journal_crash.py) does it for real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from crash_writer import edit

from mddframes import Client, ConcurrentModificationError, InvalidArgumentError, JournalError
from mddframes.codec.values import digest
from mddframes.writing import PENDING_COLUMNS, RECOVERY_COLUMNS
from mddframes.writing.journal_file import read_journal

SYSTEM = "DWH"
SEED = 10  # faults on both operations, and no long run of them (backoff doubles)


@pytest.fixture
def table_ids(client):
    tree = client.read_tree(SYSTEM)
    return tree["table_id"].dropna().tolist()[:4]


def stored(emu, ids) -> dict[str, str]:
    """The documents as the emulator stores them (byte-for-byte comparisons)."""
    return {table_id: emu._state.store.table_json(table_id) for table_id in ids}


def updates(emu) -> int:
    return emu.counters().get("tableUpdate", 0)


def lines(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_bytes().splitlines()]


@pytest.fixture
def batch(client, emu, table_ids, tmp_path):
    """A finished write_tables batch: (result frame, old documents, new documents)."""
    old = stored(emu, table_ids)
    result = client.write_tables(edit(client.read_tables(table_ids, progress=False)),
                                 backup_dir=tmp_path, progress=False)  # fmt: skip
    assert (result["status"] == "written").all()
    return result, old, stored(emu, table_ids)


def crash(emu, journal, *, keep: int, torn: bytes = b"", written=()) -> None:
    """Leave what a crash leaves: the journal's first ``keep`` lines and a torn
    fragment; the service back to the old documents except ``written`` (new content)."""
    path = Path(journal)
    plan = read_journal(path)
    text = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(text[:keep]) + torn)
    emu.reset()
    payloads = {item.id: item.payload for item in plan.objects}
    with Client.from_emulator(emu) as other:
        for table_id in written:
            other.api.put_table(table_id, payloads[table_id])


# -- the journal file -----------------------------------------------------------------------


def test_a_bulk_write_journals_its_plan_and_every_step(batch, emu, table_ids, tmp_path):
    result, old, new = batch
    journal = Path(result.attrs["journal"])
    assert journal.parent == tmp_path / emu.tenant / "journal"
    assert journal.stem == result.attrs["batch"]
    records = lines(journal)
    assert journal.read_bytes().endswith(b"\n")
    plan = records[0]
    assert plan["type"] == "plan" and plan["v"] == 1 and plan["operation"] == "write_tables"
    assert [item["id"] for item in plan["objects"]] == table_ids
    for item in plan["objects"]:
        assert item["kind"] == "table"
        assert item["before"] == digest(json.loads(old[item["id"]]))
        assert item["after"] == digest(json.loads(new[item["id"]])) == digest(item["payload"])
        assert json.loads(Path(item["backup"]).read_text())["payload"] == json.loads(
            old[item["id"]]
        )
    events = [r for r in records[1:-1]]
    for n in range(len(table_ids)):
        mine = [e["event"] for e in events if e["n"] == n]
        assert mine == ["sending", "sent", "verified"]
    assert records[-1]["type"] == "end" and records[-1]["outcome"] == "written"
    assert result["backup"].tolist() == [item["backup"] for item in plan["objects"]]


def test_pending_writes_lists_unfinished_batches_as_a_typed_frame(
    batch, client, emu, table_ids, tmp_path
):
    result, _, _ = batch
    assert client.pending_writes(backup_dir=tmp_path).empty
    finished = client.pending_writes(backup_dir=tmp_path, include_finished=True)
    assert finished["state"].tolist() == ["written"]
    assert finished["verified"].tolist() == [4]

    # objects 0 and 1 verified, 2 sent but its "sent" line torn, 3 not started
    journal = Path(result.attrs["journal"])
    crash(emu, journal, keep=1, written=table_ids[:3])
    steps = [(n, e) for n in (0, 1) for e in ("sending", "sent", "verified")] + [(2, "sending")]
    with journal.open("ab") as handle:
        for n, event in steps:
            handle.write(json.dumps({"type": "event", "n": n, "event": event, "target": "after",
                                     "by": "write", "at": "2026-01-01T00:00:00Z"}).encode()
                         + b"\n")  # fmt: skip
        handle.write(b'{"type": "event", "n": 2, "ev')
    pending = client.pending_writes(backup_dir=tmp_path)

    assert list(pending.columns) == list(PENDING_COLUMNS)
    assert pending.dtypes.astype(str).to_dict() == {
        "batch": "string", "operation": "string", "created_at": "datetime64[ns, UTC]",
        "objects": "Int64", "verified": "Int64", "failed": "Int64", "unfinished": "Int64",
        "rolled_back": "Int64", "state": "string", "journal": "string",
    }  # fmt: skip
    row = pending.iloc[0]
    assert row["batch"] == result.attrs["batch"]
    assert (row["objects"], row["verified"], row["unfinished"]) == (4, 2, 2)
    assert row["state"] == "interrupted"


def test_an_empty_folder_has_no_pending_writes(client, tmp_path):
    frame = client.pending_writes(backup_dir=tmp_path / "never-used")
    assert frame.empty and list(frame.columns) == list(PENDING_COLUMNS)


# -- torn and damaged lines ----------------------------------------------------------------


def test_a_torn_last_line_is_ignored_and_ended_by_the_next_writer(
    batch, client, emu, table_ids, tmp_path
):
    result, old, new = batch
    journal = Path(result.attrs["journal"])
    fragment = b'{"type": "event", "n": 0, "event": "sen'
    crash(emu, journal, keep=1, torn=fragment)
    state = read_journal(journal)
    assert state.torn and state.events == [] and state.outcome is None

    frame = client.resume(result.attrs["batch"], backup_dir=tmp_path, progress=False)

    assert frame.attrs["finished"] and set(frame["action"]) == {"sent"}
    assert stored(emu, table_ids) == new
    raw = journal.read_bytes()
    assert fragment + b"\n" in raw  # the fragment stays, ended, recognisable
    records = raw.split(b"\n")
    reopened = json.loads(records[2])
    assert reopened["type"] == "reopened" and reopened["tornBytes"] == len(fragment)
    state = read_journal(journal)  # reads cleanly: the torn line is skipped
    assert not state.torn and state.outcome == "written"


def test_a_torn_plan_means_nothing_was_sent(batch, client, emu, tmp_path):
    result, _, _ = batch
    journal = Path(result.attrs["journal"])
    first = journal.read_bytes().split(b"\n")[0]
    crash(emu, journal, keep=0, torn=first[: len(first) // 2])

    assert read_journal(journal) is None
    assert client.pending_writes(backup_dir=tmp_path, include_finished=True).empty
    with pytest.raises(JournalError, match="nothing was sent"):
        client.resume(result.attrs["batch"], backup_dir=tmp_path, progress=False)


def test_a_damaged_line_in_the_middle_is_an_error_not_a_torn_line(batch, client, tmp_path):
    result, _, _ = batch
    journal = Path(result.attrs["journal"])
    text = journal.read_bytes().split(b"\n")
    text[2] = text[2][:10]  # a complete line (it has its newline) that is not JSON
    journal.write_bytes(b"\n".join(text))

    with pytest.raises(JournalError, match="line 3 is damaged") as caught:
        client.pending_writes(backup_dir=tmp_path, include_finished=True)
    assert caught.value.path == str(journal)


# -- resume and roll back ------------------------------------------------------------------


def test_resume_sends_only_what_the_service_does_not_hold_yet(
    batch, client, emu, table_ids, tmp_path
):
    result, old, new = batch
    crash(emu, result.attrs["journal"], keep=4, written=table_ids[:2])
    emu.reset_counters()

    frame = client.resume(result.attrs["batch"], backup_dir=tmp_path, progress=False)

    assert list(frame.columns) == list(RECOVERY_COLUMNS)
    assert frame["action"].tolist() == ["already", "already", "sent", "sent"]
    assert updates(emu) == 2
    assert stored(emu, table_ids) == new
    assert client.pending_writes(backup_dir=tmp_path).empty


def test_resume_and_roll_back_are_idempotent(batch, client, emu, table_ids, tmp_path):
    result, old, new = batch
    name = result.attrs["batch"]
    crash(emu, result.attrs["journal"], keep=1, written=table_ids[1:3])

    client.resume(name, backup_dir=tmp_path, progress=False)
    emu.reset_counters()
    again = client.resume(name, backup_dir=tmp_path, progress=False)
    assert set(again["action"]) == {"already"} and updates(emu) == 0
    assert stored(emu, table_ids) == new

    first = client.roll_back(name, backup_dir=tmp_path, progress=False)
    assert set(first["action"]) == {"sent"} and stored(emu, table_ids) == old
    emu.reset_counters()
    second = client.roll_back(name, backup_dir=tmp_path, progress=False)
    assert set(second["action"]) == {"already"} and updates(emu) == 0
    assert stored(emu, table_ids) == old
    state = client.pending_writes(backup_dir=tmp_path, include_finished=True)
    assert state["state"].tolist() == ["rolled-back"]
    assert state["rolled_back"].tolist() == [4]

    with pytest.raises(JournalError, match="was rolled back"):
        client.resume(name, backup_dir=tmp_path, progress=False)


def test_roll_back_restores_the_old_documents_byte_for_byte(
    batch, client, emu, table_ids, tmp_path
):
    result, old, new = batch
    crash(emu, result.attrs["journal"], keep=5, written=table_ids[::2])

    frame = client.roll_back(result.attrs["batch"], backup_dir=tmp_path, progress=False)

    assert frame["action"].tolist() == ["sent", "already", "sent", "already"]
    assert stored(emu, table_ids) == old


@pytest.mark.parametrize("recovery", ["resume", "roll_back"])
def test_a_change_by_someone_else_since_the_crash_is_refused_naming_the_table(
    recovery, batch, client, emu, table_ids, tmp_path
):
    result, _, _ = batch
    crash(emu, result.attrs["journal"], keep=1, written=table_ids[:1])
    changed = table_ids[2]
    emu.touch_table(changed)
    emu.reset_counters()

    with pytest.raises(ConcurrentModificationError) as caught:
        getattr(client, recovery)(result.attrs["batch"], backup_dir=tmp_path, progress=False)

    message = str(caught.value)
    assert repr(changed) in message and "Nothing was sent" in message
    assert all(repr(other) not in message for other in table_ids if other != changed)
    assert updates(emu) == 0
    # still pending: the user decides what to do with the changed table
    assert client.pending_writes(backup_dir=tmp_path)["batch"].tolist() == [result.attrs["batch"]]


def test_roll_back_refuses_a_backup_that_was_edited(batch, client, emu, tmp_path):
    result, _, _ = batch
    crash(emu, result.attrs["journal"], keep=1)
    backup = Path(result["backup"].iloc[1])
    document = json.loads(backup.read_text())
    document["payload"]["name"] = "edited by hand"
    backup.write_text(json.dumps(document))
    emu.reset_counters()

    with pytest.raises(JournalError, match="does not match the digest"):
        client.roll_back(result.attrs["batch"], backup_dir=tmp_path, progress=False)
    assert updates(emu) == 0


def test_an_unknown_batch_names_the_folder(client, tmp_path):
    with pytest.raises(InvalidArgumentError, match="no journal of batch"):
        client.resume("20260101T000000Z-abcdef", backup_dir=tmp_path, progress=False)
    with pytest.raises(InvalidArgumentError, match="not a batch id"):
        client.roll_back("../elsewhere", backup_dir=tmp_path, progress=False)


# -- faults during recovery ----------------------------------------------------------------


@pytest.mark.parametrize("recovery", ["resume", "roll_back"])
def test_5xx_and_dropped_connections_during_recovery_are_retried(
    recovery, batch, emu, table_ids, tmp_path
):
    result, old, new = batch
    crash(emu, result.attrs["journal"], keep=1, written=table_ids[:1])
    if recovery == "roll_back":
        with Client.from_emulator(emu) as other:  # now half old, half new the other way
            for table_id in table_ids[1:3]:
                other.api.put_table(table_id, json.loads(new[table_id]))
    with Client.from_emulator(emu, max_retries=10) as client:
        # one call at a time: the seeded faults fall on the same requests on every run
        emu.inject_faults(error_rate=0.25, error_statuses=(500, 502, 503), drop_rate=0.25,
                          seed=SEED, operations=["getTable", "tableUpdate"])  # fmt: skip
        frame = getattr(client, recovery)(result.attrs["batch"], backup_dir=tmp_path,
                                          max_workers=1, progress=False)  # fmt: skip
        faulted = emu.fault_counters()
        emu.clear_faults()
    # the faults really happened, on the reads and on the PUTs
    assert faulted.get("getTable", 0) >= 3 and faulted.get("tableUpdate", 0) >= 2, faulted
    assert frame.attrs["finished"]
    assert stored(emu, table_ids) == (new if recovery == "resume" else old)


@pytest.mark.parametrize("recovery", ["resume", "roll_back"])
def test_a_recovery_that_keeps_failing_is_journalled_and_can_be_run_again(
    recovery, batch, emu, table_ids, tmp_path
):
    result, old, new = batch
    name = result.attrs["batch"]
    crash(emu, result.attrs["journal"], keep=1, written=[] if recovery == "resume" else table_ids)
    with Client.from_emulator(emu, max_retries=0) as client:
        emu.inject_faults(error_rate=1.0, error_statuses=(503,), operations=["tableUpdate"])
        with pytest.warns(UserWarning):  # run_bulk's PartialFailureWarning names the ids
            frame = getattr(client, recovery)(name, backup_dir=tmp_path, progress=False)
        emu.clear_faults()
        assert not frame.attrs["finished"]
        assert set(frame["action"]) == {"failed"}
        assert frame["error"].str.contains("503").all()
        pending = client.pending_writes(backup_dir=tmp_path)
        assert pending["failed"].tolist() == [4]
        assert stored(emu, table_ids) == (old if recovery == "resume" else new)

        again = getattr(client, recovery)(name, backup_dir=tmp_path, progress=False)
    assert again.attrs["finished"] and set(again["action"]) == {"sent"}
    assert stored(emu, table_ids) == (new if recovery == "resume" else old)


def test_a_roll_back_of_a_finished_batch_that_breaks_off_is_pending_again(
    batch, emu, table_ids, tmp_path
):
    result, old, new = batch
    name = result.attrs["batch"]
    with Client.from_emulator(emu, max_retries=0) as client:
        assert client.pending_writes(backup_dir=tmp_path).empty
        emu.inject_faults(error_rate=1.0, error_statuses=(503,), operations=["tableUpdate"])
        with pytest.warns(UserWarning):
            client.roll_back(name, backup_dir=tmp_path, progress=False)
        emu.clear_faults()
        pending = client.pending_writes(backup_dir=tmp_path)
        assert pending["batch"].tolist() == [name]
        assert pending["state"].tolist() == ["rolling back"]
        client.roll_back(name, backup_dir=tmp_path, progress=False)
        assert client.pending_writes(backup_dir=tmp_path).empty
    assert stored(emu, table_ids) == old


def test_finished_batches_are_skipped_from_their_last_line(batch, client, tmp_path):
    result, _, _ = batch
    journal = Path(result.attrs["journal"])
    data = bytearray(journal.read_bytes())
    data[20:30] = b"#" * 10  # the plan damaged: only a full read would notice
    journal.write_bytes(bytes(data))

    assert client.pending_writes(backup_dir=tmp_path).empty  # the end line was enough
    with pytest.raises(JournalError, match="line 1 is damaged"):
        client.pending_writes(backup_dir=tmp_path, include_finished=True)


def test_write_mappings_keeps_a_journal_that_rolls_back(client, emu, tmp_path):
    ids = client.read_tree(SYSTEM)["mapping_id"].dropna().tolist()[:3]
    before = {i: emu._state.store.mapping_json(i) for i in ids}
    long = client.read_mappings(ids, progress=False)
    long["transformation"] = (
        long["transformation"].astype(object).where((long["row"] != 0).to_numpy(), "TRIM(x)")
    )
    result = client.write_mappings(long, backup_dir=tmp_path, progress=False)
    assert (result["status"] == "written").all()
    journal = read_journal(result.attrs["journal"])
    assert journal.operation == "write_mappings" and journal.outcome == "written"
    assert [item.kind for item in journal.objects] == ["mapping"] * 3

    undone = client.roll_back(result.attrs["batch"], backup_dir=tmp_path, progress=False)

    assert undone["kind"].tolist() == ["mapping"] * 3 and set(undone["action"]) == {"sent"}
    assert {i: emu._state.store.mapping_json(i) for i in ids} == before
