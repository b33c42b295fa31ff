"""run_bulk (pure, with plain functions) and read_tables/read_mappings against the emulator."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

from mddframes.bulk import FAILURE_COLUMNS, BulkResult, PartialFailureWarning, run_bulk
from mddframes.errors import InvalidArgumentError, NotFoundError


def _double_unless_three(x: int) -> int:
    if x == 3:
        raise KeyError(f"no item {x}")
    return x * 2


# --- run_bulk: a general concurrent map -------------------------------------------------


def test_results_are_in_input_order_even_when_completion_order_differs():
    def slow_for_small(x: int) -> int:
        time.sleep(0.002 * (10 - x))  # the first items finish last
        return x * 10

    outcome = run_bulk(slow_for_small, range(10), max_workers=5, progress=False)
    assert outcome.results == [x * 10 for x in range(10)]
    assert outcome.ok
    assert list(outcome.failures.columns) == list(FAILURE_COLUMNS)
    assert outcome.failures.empty


def test_unpacks_as_results_and_failures():
    results, failures = run_bulk(str.upper, ["a", "b"], progress=False)
    assert results == ["A", "B"]
    assert failures.empty


def test_runs_concurrently_up_to_max_workers():
    lock = threading.Lock()
    running = 0
    peak = 0
    barrier = threading.Barrier(4, timeout=5)

    def track(x: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        if x < 4:
            barrier.wait()  # only passes if 4 calls really run at the same time
        time.sleep(0.01)
        with lock:
            running -= 1
        return x

    run_bulk(track, range(12), max_workers=4, progress=False)
    assert peak == 4


def test_skip_reports_every_failure_per_id_and_warns_with_the_count():
    def fail_odd(x: int) -> int:
        if x % 2:
            raise NotFoundError(f"item {x} is gone", status=404, operation="getThing")
        return x

    with pytest.warns(PartialFailureWarning, match=r"3 of 6 failed.*1, 3, 5"):
        outcome = run_bulk(fail_odd, range(6), errors="skip", progress=False, desc="things")
    assert not outcome.ok
    assert outcome.results == [0, None, 2, None, 4, None]
    assert list(outcome.succeeded) == [(0, 0), (2, 2), (4, 4)]
    failures = outcome.failures
    assert failures["position"].tolist() == [1, 3, 5]
    assert failures["id"].tolist() == [1, 3, 5]
    assert set(failures["error_type"]) == {"NotFoundError"}
    assert failures["status"].tolist() == [404, 404, 404]
    assert failures["message"].str.contains("is gone").all()
    assert str(failures["position"].dtype) == "Int64"
    assert isinstance(outcome.exceptions[3], NotFoundError)


def test_skip_logs_a_warning_naming_the_failed_ids(caplog):
    with pytest.warns(PartialFailureWarning):
        run_bulk(_double_unless_three, range(5), errors="skip", progress=False, desc="dbl")
    assert any("dbl: 1 of 5 failed" in r.message and "3" in r.message for r in caplog.records)


def test_none_as_a_result_is_not_a_failure():
    outcome = run_bulk(lambda x: None, [1, 2], progress=False)
    assert outcome.ok
    assert list(outcome.succeeded) == [(1, None), (2, None)]


def test_raise_re_raises_the_failure_unchanged_and_cancels_the_rest():
    started = []

    def record(x: int) -> int:
        started.append(x)
        if x == 0:
            raise KeyError("first one fails")
        time.sleep(0.02)
        return x

    with pytest.raises(KeyError, match="first one fails") as info:
        run_bulk(record, range(50), max_workers=2, progress=False, desc="rec")
    note = " ".join(getattr(info.value, "__notes__", []))
    assert "rec" in note and "0" in note and "cancelled" in note
    assert len(started) < 50  # the rest were cancelled, not run
    time.sleep(0.05)
    assert not [t for t in threading.enumerate() if t.name.startswith("mddframes-bulk")]


def test_label_names_items_in_the_failures_frame():
    items = [{"table": "t1"}, {"table": "t2"}]

    def boom(item: dict) -> None:
        raise RuntimeError(f"cannot {item['table']}")

    with pytest.warns(PartialFailureWarning, match="'t1', 't2'"):
        outcome = run_bulk(
            boom, items, errors="skip", progress=False, label=lambda item: item["table"]
        )
    assert outcome.failures["id"].tolist() == ["t1", "t2"]
    assert outcome.failures["error_type"].tolist() == ["RuntimeError", "RuntimeError"]


def test_empty_input_gives_an_empty_outcome():
    outcome = run_bulk(str.upper, [], progress=False)
    assert isinstance(outcome, BulkResult)
    assert outcome.results == [] and outcome.failures.empty


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"errors": "ignore"}, "errors must be 'raise' or 'skip'"),
        ({"max_workers": 0}, "max_workers must be a positive integer"),
        ({"max_workers": 2.5}, "max_workers must be a positive integer"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        run_bulk(str.upper, ["a"], progress=False, **kwargs)


def test_a_single_string_is_refused_rather_than_iterated():
    with pytest.raises(InvalidArgumentError, match="not a single str"):
        run_bulk(str.upper, "t1", progress=False)


class _RecordingBar:
    """Wraps the real tqdm bar of mddframes.bulk and records its final state."""

    bars: list = []

    def __init__(self, real):
        self.real = real

    def __call__(self, *args, **kwargs):
        bar = self.real(*args, **kwargs)
        _RecordingBar.bars.append(bar)
        return bar


@pytest.fixture
def recorded_bars(monkeypatch):
    import mddframes.bulk as bulk

    _RecordingBar.bars = []
    monkeypatch.setattr(bulk, "tqdm", _RecordingBar(bulk.tqdm))
    return _RecordingBar.bars


def test_progress_bar_on_counts_every_item_and_failures(recorded_bars, capsys):
    with pytest.warns(PartialFailureWarning):
        run_bulk(_double_unless_three, range(6), progress=True, desc="numbers", errors="skip")
    (bar,) = recorded_bars
    assert (bar.n, bar.total, bar.desc) == (6, 6, "numbers")
    # the pace's note may follow: it is process-wide, and a client of another test in this
    # worker may have been pushed back in the last seconds
    assert bar.postfix.split(", ")[0] == "failed=1"
    assert "numbers" in capsys.readouterr().err  # drawn on stderr in a terminal


def test_progress_off_draws_nothing(recorded_bars, capsys):
    run_bulk(str.upper, list("abc"), progress=False, desc="letters")
    (bar,) = recorded_bars
    assert bar.n == 0  # a disabled bar does not count
    assert capsys.readouterr().err == ""


def test_failures_frame_has_stable_dtypes_when_empty():
    failures = run_bulk(str.upper, ["a"], progress=False).failures
    assert isinstance(failures, pd.DataFrame)
    assert str(failures["status"].dtype) == "Int64"
    assert str(failures["message"].dtype) == "string"


# --- concat_union: the outer union keeps dtypes ------------------------------------------


def test_concat_union_keeps_nullable_dtypes_across_missing_columns():
    from mddframes.frames.stacking import concat_union

    a = pd.DataFrame(
        {
            "n": pd.array([1, 2], dtype="Int64"),
            "flag": pd.array([True, None], dtype="boolean"),
            "code": pd.array(["007", "010"], dtype="string"),
            "when": pd.to_datetime(["2024-01-01", "2024-01-02"]),
            "plain": [1, 2],  # numpy int64: becomes Int64, not float
        }
    )
    b = pd.DataFrame({"other": pd.array(["x"], dtype="string")}, index=[0])
    both = concat_union([a, b])
    assert list(both.columns) == ["n", "flag", "code", "when", "plain", "other"]
    assert {c: str(both[c].dtype) for c in both.columns} == {
        "n": "Int64", "flag": "boolean", "code": "string", "when": str(a["when"].dtype),
        "plain": "Int64", "other": "string",
    }  # fmt: skip
    assert both["plain"].tolist()[:2] == [1, 2] and pd.isna(both["plain"].iloc[2])
    assert both.index.tolist() == [0, 1, 0]  # each frame's own row positions


def test_concat_union_of_disagreeing_dtypes_keeps_every_value():
    from mddframes.frames.stacking import concat_union

    a = pd.DataFrame({"v": pd.array([2**62], dtype="Int64")})
    b = pd.DataFrame({"v": pd.array(["text"], dtype="string")})
    both = concat_union([a, b])
    assert both["v"].tolist() == [2**62, "text"]


# --- read_tables / read_mappings against the emulator -----------------------------------


@pytest.fixture
def table_reader():
    from mddframes.frames import table

    return table


def _ids(client, column: str, n: int) -> list[str]:
    return client.read_tree("DWH")[column].dropna().tolist()[:n]


def test_read_tables_long_frame_matches_single_reads(client, table_reader):
    from mddframes.frames import iter_groups

    ids = _ids(client, "table_id", 8)
    long = client.read_tables(ids, progress=False)
    assert long.columns[0] == "table_id"
    assert str(long["table_id"].dtype) == "string"
    assert long["table_id"].unique().tolist() == [i for i in ids if (long["table_id"] == i).any()]
    assert long.attrs["failures"] == []
    groups = dict(iter_groups(long))
    for table_id in ids:
        single = table_reader.read_table(client.api, table_id)
        if single.empty:
            assert table_id not in groups or groups[table_id].empty
            continue
        rows = groups[table_id]
        assert list(rows.columns) == list(single.columns)
        assert rows.index.tolist() == single.index.tolist()  # original row positions
        pd.testing.assert_frame_equal(rows, single, check_dtype=False, check_names=False)


def test_read_tables_does_not_degrade_a_column_another_table_lacks(client, table_reader):
    ids = _ids(client, "table_id", 12)
    singles = {i: table_reader.read_table(client.api, i) for i in ids}
    long = client.read_tables(ids, progress=False)
    for column in long.columns[1:]:
        dtypes = {str(f[column].dtype) for f in singles.values() if column in f.columns}
        if len(dtypes) == 1 and next(iter(dtypes)) in {"Int64", "boolean", "string", "Float64"}:
            assert str(long[column].dtype) == next(iter(dtypes)), column


def test_read_tables_skip_reports_the_failed_id_and_keeps_the_rest(client, table_reader):
    ids = _ids(client, "table_id", 4)
    with pytest.warns(PartialFailureWarning, match="1 of 5 failed.*'tbl-9999'"):
        long = client.read_tables(ids[:2] + ["tbl-9999"] + ids[2:], errors="skip", progress=False)
    assert set(long["table_id"]) <= set(ids)
    (failure,) = long.attrs["failures"]
    assert failure["id"] == "tbl-9999"
    assert failure["error_type"] == "NotFoundError" and failure["status"] == 404
    assert "tbl-9999" in failure["message"]


def test_read_tables_raise_stops_at_the_failed_id(client, table_reader):
    ids = _ids(client, "table_id", 3)
    with pytest.raises(NotFoundError) as info:
        client.read_tables(ids + ["tbl-9999"], progress=False)
    assert "tbl-9999" in " ".join(getattr(info.value, "__notes__", []))


def test_read_tables_with_an_injected_server_failure(emu, table_reader):
    from mddframes import Client

    with Client.from_emulator(emu, max_retries=0) as client:
        ids = _ids(client, "table_id", 3)
        emu.inject_faults(error_rate=1.0, error_statuses=(503,), operations=["getTable"])
        client.read_tree("DWH")  # other operations are not affected
        with pytest.warns(PartialFailureWarning, match="3 of 3 failed"):
            long = client.read_tables(ids, errors="skip", progress=False)
        assert long.empty and list(long.columns) == ["table_id", "row"]
        assert [f["id"] for f in long.attrs["failures"]] == ids
        assert {f["status"] for f in long.attrs["failures"]} == {503}
        assert {f["error_type"] for f in long.attrs["failures"]} == {"ServerError"}
        emu.clear_faults()
        assert not client.read_tables(ids, progress=False).empty


def test_read_tables_shows_progress_per_table(client, table_reader, recorded_bars):
    ids = _ids(client, "table_id", 3)
    client.read_tables(ids, progress=True)  # a bar off a terminal only when asked
    (bar,) = recorded_bars
    assert (bar.n, bar.total, bar.desc) == (3, 3, "read_tables")


def test_read_tables_reads_each_id_once(client, emu, table_reader):
    ids = _ids(client, "table_id", 2)
    emu.reset_counters()
    long = client.read_tables(ids + ids[:1], progress=False)
    assert emu.counters().get("getTable") == 2
    assert long["table_id"].nunique() <= 2


def test_read_tables_refuses_bad_ids(client):
    with pytest.raises(InvalidArgumentError, match="not the single string"):
        client.read_tables("tbl-0001")
    with pytest.raises(InvalidArgumentError, match="entry 1"):
        client.read_tables(["tbl-0001", None])


def test_read_mappings_long_frame_and_failures(client, table_reader):
    from mddframes.frames import iter_groups

    ids = _ids(client, "mapping_id", 5)
    with pytest.warns(PartialFailureWarning, match="'map-9999'"):
        long = client.read_mappings(ids + ["map-9999"], errors="skip", progress=False)
    assert long.columns[0] == "mapping_id"
    assert [f["id"] for f in long.attrs["failures"]] == ["map-9999"]
    groups = dict(iter_groups(long))
    for mapping_id in ids:
        single = table_reader.read_mapping(client.api, mapping_id)
        if single.empty:
            continue
        rows = groups[mapping_id]
        assert rows.index.tolist() == single.index.tolist()
        pd.testing.assert_frame_equal(rows, single, check_dtype=False, check_names=False)


def test_iter_groups_gives_each_table_its_own_columns_and_rows(client, table_reader):
    from mddframes.frames import iter_groups

    ids = _ids(client, "table_id", 6)
    long = client.read_tables(ids, progress=False)
    long["reviewed"] = False  # a column the user adds to the long frame
    long = long[(long["row"] != 0).to_numpy()]  # and a row deleted from every table
    for table_id, rows in iter_groups(long):
        single = table_reader.read_table(client.api, table_id)
        assert list(rows.columns) == list(single.columns) + ["reviewed"]
        assert rows.index.tolist() == [i for i in single.index if i != 0]
    # Without attrs (lost by some pandas operations) the all-missing columns of
    # other tables are dropped instead.
    long.attrs = {}
    for table_id, rows in iter_groups(long, key="table_id"):
        own = set(table_reader.read_table(client.api, table_id).columns) | {"reviewed"}
        assert set(rows.columns) <= own


def test_iter_groups_needs_the_id_column():
    from mddframes.frames import iter_groups

    with pytest.raises(InvalidArgumentError, match="table_id"):
        list(iter_groups(pd.DataFrame({"x": [1]})))


def test_read_tables_hints_at_dropna_for_missing_ids(client):
    with pytest.raises(InvalidArgumentError, match="dropna"):
        client.read_tables(pd.Series(["tbl-0001", None], dtype="string"))


def test_on_progress_reports_each_finished_item_also_failed_ones():
    calls: list[tuple[int, int | None]] = []
    outcome = run_bulk(
        _double_unless_three,
        range(6),
        max_workers=3,
        progress=False,
        errors="skip",
        on_progress=lambda done, total: calls.append((done, total)),
    )
    assert len(outcome.failures) == 1
    assert calls == [(n, 6) for n in range(1, 7)]


def test_an_on_progress_that_raises_stops_the_call_like_a_failure():
    def refuse(done: int, total: int | None) -> None:
        raise RuntimeError("progress sink gone")

    with pytest.raises(RuntimeError, match="progress sink gone"):
        run_bulk(lambda x: x, range(5), progress=False, on_progress=refuse)


def test_run_bulk_then_runs_in_the_calling_thread_and_its_failure_is_the_items():
    caller = threading.get_ident()
    seen = []

    def then(value: int) -> int:
        seen.append(threading.get_ident())
        if value == 6:
            raise ValueError("six")
        return value + 1

    with pytest.warns(PartialFailureWarning):
        outcome = run_bulk(lambda x: x * 2, range(5), progress=False, errors="skip", then=then)
    assert set(seen) == {caller}
    assert [r for _, r in outcome.succeeded] == [1, 3, 5, 9]
    assert outcome.failures["id"].tolist() == [3]
