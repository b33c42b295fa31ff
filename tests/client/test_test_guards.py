"""The suite checks what it claims: a missing tool fails under CI (tests/needs.py), CI is
on in ``.ci/run`` itself, and a test that starts an emulator carries the ``emulator``
marker (tests/conftest.py), so ``-m "not emulator"`` starts none."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import needs
import pytest
from needs import Tool, require
from pandas_ends import pandas_calls

from mddframes.emulator import serve
from mddframes.emulator._fallback import tiny_dataset

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


@pytest.fixture
def absent_tool(monkeypatch):
    monkeypatch.setitem(needs.TOOLS, "absent", Tool("a tool", lambda: False, "get it somewhere"))
    return "absent"


@pytest.mark.parametrize("ci", ["true", "1", "TRUE", "yes"])
def test_under_ci_a_missing_tool_fails_the_test(absent_tool, monkeypatch, ci):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match=r"CI must run .* lacks a tool \(get it"):
        require("sphinx", absent_tool)


@pytest.mark.parametrize("ci", [None, "", "false", "0"])
def test_elsewhere_a_missing_tool_skips_the_test(absent_tool, monkeypatch, ci):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match=r"needs a tool \(get it somewhere\)"):
        require(absent_tool)


def test_a_present_tool_neither_fails_nor_skips(monkeypatch):
    monkeypatch.setenv("CI", "true")
    monkeypatch.setitem(needs.TOOLS, "here", Tool("a tool", lambda: True, "-"))
    require("here")


def test_the_tool_markers_require_what_their_tests_drive():
    # written here, apart from tests/needs.py: what each marker's tests cannot run without
    expected = {
        "browser": {"chromium", "playwright", "jupyterlab"},
        "spreadsheet_program": {"soffice"},
        "spark": {"pyspark", "java"},
        "docs": {"sphinx"},
    }
    assert set(needs.MARKER_NEEDS) == set(expected)
    for marker, tools in expected.items():
        assert tools <= set(needs.MARKER_NEEDS[marker]), marker


def test_no_test_skips_on_a_missing_tool_outside_the_one_home():
    # importorskip, or a skip conditioned on a program or module being absent
    pattern = re.compile(r"importorskip\(|skipif\([^)]*(which|find_spec|SOFFICE|CHROMIUM|exists)")
    offenders = [
        str(path.relative_to(REPO))
        for path in TESTS.rglob("*.py")
        if path.name not in ("needs.py", Path(__file__).name)
        and pattern.search(path.read_text("utf-8"))
    ]
    assert offenders == []


def test_ci_run_turns_ci_on_before_anything_runs():
    script = (REPO / ".ci" / "run").read_text("utf-8").splitlines()
    exports = [i for i, line in enumerate(script) if line.strip() == "export CI=true"]
    runs = [i for i, line in enumerate(script) if re.match(r"\s*(bash|\.venv/)", line)]
    assert exports and runs and exports[0] < runs[0]


def test_starting_an_emulator_without_the_marker_fails_the_test(request):
    assert request.node.get_closest_marker("emulator") is None
    with pytest.raises(pytest.fail.Exception, match=r"starts an emulator but has no 'emulator'"):
        with serve(dataset=tiny_dataset):
            pass


@pytest.fixture
def own_emulator():
    with serve(dataset=tiny_dataset) as emu:
        yield emu


def test_a_fixture_that_starts_an_emulator_marks_its_tests(request, own_emulator):
    assert request.node.get_closest_marker("emulator") is not None
    assert own_emulator.base_url.startswith("http://127.0.0.1:")


needs_monitoring = pytest.mark.skipif(
    sys.version_info < (3, 12), reason="sys.monitoring (Python 3.12+) watches the calls"
)


@needs_monitoring
def test_the_pandas_free_check_sees_pandas_code_run():
    import pandas as pd

    with pandas_calls() as found:
        pd.DataFrame({"a": [1, 2]}).sum()
    assert found and all("pandas" in entry for entry in found)


@needs_monitoring
def test_the_pandas_free_check_sees_it_again_in_the_next_block():
    import pandas as pd

    for _ in range(2):
        with pandas_calls() as found:
            pd.DataFrame({"a": [1, 2]}).sum()
        assert found


@needs_monitoring
def test_the_pandas_free_check_passes_code_without_pandas():
    with pandas_calls() as found:
        json.dumps({"a": sorted([3, 1, 2])})
    assert found == []


def test_the_oldest_pandas_pass_skips_only_pandas_free_and_once_only_markers():
    """.ci/run's oldest-pandas selection names the marks whose tests run once."""
    run = (REPO / ".ci" / "run").read_text()
    # the command may go on over lines ending in a backslash
    selection = re.search(r'scripts/test-oldest (?:[^\n]*\\\n)*?[^\n]*-m "([^"]+)"', run)
    assert selection is not None
    assert set(re.findall(r"not (\w+)", selection.group(1))) == {
        "pandas_free",
        "pandas_once",
        "browser",
        "docs",
        "packaging",
        "spark",
    }
