"""The contributing page's list of benchmarks is the list of modules in ``benchmarks/``:
one row per ``bench_*.py``, each named as ``python -m benchmarks NAME`` selects it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_contributing_page_lists_every_benchmark():
    page = (REPO / "docs" / "contributing.md").read_text("utf-8")
    section = page.split("\n## Benchmarks\n", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \| \S", section, flags=re.MULTILINE)
    modules = sorted(
        p.stem.removeprefix("bench_") for p in (REPO / "benchmarks").glob("bench_*.py")
    )
    assert len(listed) == len(set(listed))
    assert sorted(listed) == modules
    assert len(modules) >= 16  # as many as when the list moved here (issue 44)
