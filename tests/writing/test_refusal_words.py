"""A refused write says what to do: allow_deletes for dropped rows, the right object for a
frame read from another one (issue 24)."""

from __future__ import annotations

import pytest

from mddframes import IncompletePayloadError, MddError
from mddframes.codec.values import digest


def test_a_dropped_row_names_allow_deletes(client):
    frame = client.read_table("tbl-0109")
    with pytest.raises(IncompletePayloadError) as caught:
        client.write_table("tbl-0109", frame.iloc[1:], dry_run=True)
    assert "row deleted" in str(caught.value)
    assert "write with allow_deletes=True" in str(caught.value)
    assert client.write_table("tbl-0109", frame.iloc[1:], dry_run=True, allow_deletes=True)


def test_a_frame_of_another_table_is_named_first(client, emu):
    countries = client.read_table("tbl-0109")
    client.read_table("tbl-0001")
    before = emu.counters().get("tableUpdate", 0)
    with pytest.raises(IncompletePayloadError) as caught:
        client.write_table("tbl-0001", countries)
    report = caught.value.report
    first = report.errors.iloc[0]["problem"]
    assert first.startswith("frame of another object: it was read from table 'tbl-0109'")
    assert "write_table('tbl-0109', ...)" in str(caught.value)
    assert "allow_deletes" not in str(caught.value)  # it would not help here
    assert emu.counters().get("tableUpdate", 0) == before  # nothing sent


@pytest.mark.parametrize("read_first", [True, False], ids=["read", "not-read"])
@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_a_dry_run_of_a_frame_of_another_table_is_refused_as_the_write_is(
    client, emu, read_first, force
):
    # the dry run is the write's own plan: the same check, the same refusal, in words
    # naming both tables (issue 43: it reported "cells changed, rows added" and the write
    # then refused; without a read of the target it spoke of "not read through this client")
    countries = client.read_table("tbl-0109")
    if read_first:
        client.read_table("tbl-0001")
    before = emu.counters().get("tableUpdate", 0)
    outcomes = []
    for dry_run in (True, False):
        with pytest.raises(IncompletePayloadError) as caught:
            client.write_table("tbl-0001", countries, dry_run=dry_run, force=force)
        outcomes.append(caught.value)
    dry, write = outcomes
    assert str(dry) == str(write)
    assert dry.report.frame.equals(write.report.frame)
    assert str(dry).startswith(
        "table 'tbl-0001' was not written: this frame is the frame of table 'tbl-0109', "
        "not of table 'tbl-0001'; write it with write_table('tbl-0109', ...)"
    )
    first = dry.report.errors.iloc[0]["problem"]
    assert first.startswith("frame of another object: it was read from table 'tbl-0109'")
    assert emu.counters().get("tableUpdate", 0) == before  # nothing sent


def test_a_frame_of_the_same_table_has_no_mismatch_line(client):
    frame = client.read_table("tbl-0109")
    frame.loc[0, "name"] = "Afghanistan (edited)"
    result = client.write_table("tbl-0109", frame, dry_run=True)
    assert not result.report.frame["problem"].str.startswith("frame of another").any()


def _outcome(call):
    """What a write (or its dry run) ends in: its refusal, or what it changes and the
    document it leaves (the dry run's payload is the one the write sends)."""
    try:
        result = call()
    except MddError as exc:
        return ("refused", type(exc).__name__, str(exc))
    return ("changes" if result.status != "unchanged" else "unchanged",
            result.diff.summary, digest(result.payload))  # fmt: skip


def _one_cell(frame):
    column = next(
        c for c in frame.columns if str(frame[c].dtype) == "string" and frame[c].notna()[0]
    )
    frame.loc[0, column] = frame.loc[0, column] + " (edited)"
    return frame


@pytest.mark.parametrize(
    "edit",
    [_one_cell, lambda frame: frame.iloc[1:], lambda frame: frame],
    ids=["one cell", "a row dropped", "nothing"],
)
def test_a_dry_run_ends_where_its_write_ends(client, edit, tmp_path):
    frame = edit(client.read_table("tbl-0109"))
    dry = _outcome(lambda: client.write_table("tbl-0109", frame, dry_run=True))
    write = _outcome(lambda: client.write_table("tbl-0109", frame, backup_dir=tmp_path))
    assert dry == write
