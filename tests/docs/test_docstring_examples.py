"""Every ``>>>`` example in mddframes' docstrings runs, against the emulator.

The examples are what a user copies, so they run as written: each docstring's examples
in one namespace (its module's globals plus ``client``, a Client of the freshly reset
emulator, ``mddframes`` and ``pd``), in a temporary working folder (the examples write
``countries.xlsx``, ``hubs.zip``, ``tables/``, ``lineage.png``), matplotlib on its
headless Agg backend, and the output they show is compared
with ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``. A docstring a Client method shares with
its layer function (``facade_of``) runs once.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest

import mddframes

pytestmark = pytest.mark.docs

matplotlib.use("Agg")  # the drawing examples run headless: no window, no GUI toolkit

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _docstring_tests() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    found: dict[tuple[str, ...], doctest.DocTest] = {}
    modules = [mddframes] + [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(mddframes.__path__, "mddframes.")
        if not info.name.endswith("__main__")  # runs the command line on import
    ]
    for module in modules:
        for test in finder.find(module, module.__name__):
            if not test.examples:
                continue
            key = tuple(example.source for example in test.examples)
            found.setdefault(key, test)  # a facade's copy of the same examples: once
    return sorted(found.values(), key=lambda test: test.name)


TESTS = _docstring_tests()


def test_the_examples_users_look_for_are_there():
    client = mddframes.Client
    wanted = [
        client.read_table, client.write_table, client.read_tables, client.write_tables,
        mddframes.to_excel, mddframes.read_excel, client.export_batch, client.add_to_package,
        mddframes.pull_folder, mddframes.plan_folder, mddframes.apply_plan, client.doctor,
    ]  # fmt: skip
    assert [f.__qualname__ for f in wanted if ">>> " not in (f.__doc__ or "")] == []
    assert sum(len(test.examples) for test in TESTS) >= 60


@pytest.mark.parametrize("test", TESTS, ids=[test.name for test in TESTS])
def test_docstring_examples_run(test, client, emu, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    test.globs = {**test.globs, "client": client, "emu": emu, "mddframes": mddframes, "pd": pd}
    out = io.StringIO()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    try:
        result = runner.run(test, out=out.write, clear_globs=True)
    finally:
        test.globs = {}
        plt.close("all")  # a drawing example's figure
    assert result.failed == 0, f"{test.name} ({test.filename}):\n{out.getvalue()}"
    assert result.attempted == len(test.examples)
