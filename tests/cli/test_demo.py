"""The README's demo runs to the end and shows each step's result."""

from __future__ import annotations

import pytest

from mddframes.demo import main

pytestmark = pytest.mark.emulator  # the demo starts one


def test_demo_runs_and_reports_each_step(capsys):
    assert main() == 0
    out = capsys.readouterr().out
    assert "the DWH tree has 155 elements" in out
    assert "refused: declared column missing (table tbl-0109, column numeric)" in out
    assert "written: verified=True" in out
    assert "18 scripts" in out
    assert "release-2024.07" in out and "release-2024.04" not in out  # closed ones are not listed
