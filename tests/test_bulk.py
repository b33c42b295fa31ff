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
    assert list(outcome.succeeded()) == [(0, 0), (2, 2), (4, 4)]
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
    assert list(outcome.succeeded()) == [(1, None), (2, None)]


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
    assert bar.postfix == "failed=1"
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
