"""A refused write says what to do: allow_deletes for dropped rows, the right object for a
frame read from another one (issue 24)."""

from __future__ import annotations

import pytest

from mddframes import IncompletePayloadError


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


def test_a_dry_run_of_a_frame_of_another_table_returns_the_report(client, emu):
    countries = client.read_table("tbl-0109")
    client.read_table("tbl-0001")
    before = emu.counters().get("tableUpdate", 0)
    result = client.write_table("tbl-0001", countries, dry_run=True)
    assert result.status == "dry-run" and not result.report.ok
    first = result.report.errors.iloc[0]["problem"]
    assert first.startswith("frame of another object: it was read from table 'tbl-0109'")
    assert emu.counters().get("tableUpdate", 0) == before  # nothing sent


def test_a_frame_of_the_same_table_has_no_mismatch_line(client):
    frame = client.read_table("tbl-0109")
    frame.loc[0, "name"] = "Afghanistan (edited)"
    result = client.write_table("tbl-0109", frame, dry_run=True)
    assert not result.report.frame["problem"].str.startswith("frame of another").any()
