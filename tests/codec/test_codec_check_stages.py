"""The completeness check as stages: one stage list for the whole document and the
streamed overlay, and a report ordered by its sort key (no server)."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest

from mddframes.codec import check, check_payload, from_payload, overlay, splitter
from mddframes.codec import fingerprint as fingerprint_module
from mddframes.codec.check import STAGES, Stage
from mddframes.codec.fingerprint import fingerprint
from mddframes.codec.kept import keep_chunks
from mddframes.codec.report import CheckReport, report_order
from mddframes.codec.stream import byte_chunks
from mddframes.codec.streamed_overlay import overlay_document

ROWS = 1_500


def big_payload():
    columns = [
        {"name": "id", "dataType": "INTEGER", "nullable": False, "primaryKey": True},
        {"name": "name", "dataType": "VARCHAR", "nullable": False},
        {"name": "qty", "dataType": "INTEGER", "nullable": True},
        {"name": "extra", "dataType": "JSON", "nullable": True},
    ]
    rows = [{"id": i, "name": f"n{i}", "qty": i % 7, "extra": {"k": i}} for i in range(ROWS)]
    for i in range(5, ROWS, 97):
        rows[i]["legacy"] = i  # undeclared
    return {"id": "T9", "metadata": {"columns": columns}, "data": rows}


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(splitter, "BATCH_BYTES", 4 << 10)  # a dozen batches or more
    monkeypatch.setattr(fingerprint_module, "BLOCK_ROWS", 64)


def both_reports(payload, edit):
    """(streamed report, whole-document report) of one edit of the payload's frame."""
    kept = keep_chunks(byte_chunks(json.dumps(payload).encode()))
    frame = from_payload(payload)
    taken = fingerprint(frame)
    assert taken is not None
    edit(frame)
    streamed = overlay_document(kept, frame, taken, object_id="T9").report
    result = overlay(frame, payload)
    whole = check_payload(result.payload, payload, object_id="T9", origin=result.origin,
                          labels=result.labels)  # fmt: skip
    return streamed, whole


def edits(frame):
    frame.at[1200, "id"] = 3  # a duplicate of row 3, far from it
    frame.at[10, "name"] = None  # a null in a non-nullable column
    frame.at[700, "name"] = pd.NA
    frame.at[400, "extra"] = "flat"  # an object turned string


def test_streamed_and_whole_reports_are_equal_and_in_sort_key_order(small_batches):
    streamed, whole = both_reports(big_payload(), edits)
    pd.testing.assert_frame_equal(streamed.frame, whole.frame)
    problems = whole.frame["problem"].tolist()
    assert problems[0] == "duplicate primary key"  # rank 90 before the cells' rank 100
    assert problems[1].startswith("type drift")
    # warnings: the undeclared column (rank 70) before the nulls (rank 120), each by place
    assert problems[2:] == [
        "column not declared in the metadata",
        *["null in non-nullable column"] * 2,
    ]
    assert whole.frame["row"].tolist() == [1200, 400, None, 10, 700]


@pytest.mark.parametrize("whole_table", [False, True])
def test_a_stage_added_to_the_list_runs_on_both_paths(small_batches, monkeypatch, whole_table):
    def every_edited_row(context):
        return [context.problem("warning", "test stage", (context.offset + i,),
                                row=context.label(i)) for i in context.touched]  # fmt: skip

    monkeypatch.setattr(check, "STAGES", (*STAGES, Stage(1000, every_edited_row, whole_table)))
    streamed, whole = both_reports(big_payload(), edits)
    pd.testing.assert_frame_equal(streamed.frame, whole.frame)
    assert whole.frame["problem"].tolist()[-4:] == ["test stage"] * 4
    assert whole.frame["row"].tolist()[-4:] == [10, 400, 700, 1200]


def test_stage_ranks_are_unique_and_follow_the_running_order():
    ranks = [stage.rank for stage in STAGES]
    assert ranks == sorted(set(ranks))
    assert {s.run.__name__ for s in STAGES if s.whole_table} == {
        "check_duplicate_keys",
        "check_undeclared_columns",
    }


def test_the_report_sorts_its_records_by_the_sort_key_not_their_order():
    def record(level, rank, at, problem):
        return {"level": level, "table": "T", "row": None, "column": None,
                "problem": problem, "old": None, "new": None, "rank": rank, "at": at}  # fmt: skip

    records = [
        record("warning", 10, (0,), "w"),
        record("error", 20, (1, 0), "e3"),
        record("error", 20, (0, 5), "e2"),
        record("error", 10, (9,), "e1"),
        record("error", 20, (1,), "e4?"),  # (1,) sorts before (1, 0)
    ]
    expected = sorted(records, key=report_order)
    for seed in range(5):
        random.Random(seed).shuffle(records)
        report = CheckReport.from_records(records)
        assert report.frame["problem"].tolist() == [r["problem"] for r in expected]
    assert [r["problem"] for r in expected] == ["e1", "e2", "e4?", "e3", "w"]


def test_concat_keeps_each_reports_order_errors_first():
    columns = {"columns": [{"name": "a", "nullable": True}]}
    current = {"id": "A", "metadata": columns, "data": [{"a": 1}]}
    first = check_payload({**current, "data": [{"a": 1, "b": 2}]}, current)  # a warning
    second = check_payload({"id": "B"}, {"id": "B", "name": "n", "data": [{"a": 1}]})
    both = CheckReport.concat([first, second])
    assert both.frame["table"].tolist() == ["B", "B", "A"]
    assert both.frame["column"].tolist() == ["name", "data", "b"]  # each report's order kept
    assert both.frame["level"].tolist() == ["error", "error", "warning"]
