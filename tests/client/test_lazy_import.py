"""``import mddframes`` is quick: the heavy modules load on the first use of a name.

Every pipeline step starts a fresh interpreter; the figures are in
``python -m benchmarks startup``. Here: what is loaded, in a fresh process each.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mddframes

HEAVY = ("openpyxl", "networkx", "pyarrow", "ipywidgets", "pandas", "fastapi", "ipydatagrid")


def _loaded_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_import_mddframes_loads_none_of_the_heavy_modules():
    loaded = _loaded_after("import mddframes")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert "mddframes.errors" in loaded  # the errors are caught by name: there at once


def test_the_help_of_the_command_line_loads_neither_the_emulator_nor_the_writers():
    loaded = _loaded_after(
        "import contextlib, io\nfrom mddframes.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])"
    )
    assert not {"fastapi", "mddframes.emulator.app", "openpyxl", "networkx"} & loaded
    # the writing package (and the HTTP layer under it) is a third of a second more: a
    # command that writes imports it when it runs (it doubled --help once, via pruning)
    assert not {"mddframes.writing", "mddframes.http"} & loaded, sorted(
        {"mddframes.writing", "mddframes.http"} & loaded
    )


@pytest.mark.parametrize("name", mddframes.__all__)
def test_every_public_name_loads_on_first_use(name):
    assert getattr(mddframes, name) is not None
    assert name in dir(mddframes)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Clientt'"):
        mddframes.Clientt  # noqa: B018
