"""The example notebooks run from top to bottom, and no output shows a secret."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))

# Appended by the test, never shown: hands the emulator's per-run secret to the test
# through a file so the test can look for it in every output.
_LEAK_PROBE = 'from pathlib import Path\nPath("secret.txt").write_text(emu.client_secret)'


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_shows_no_secret(path, tmp_path):
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(_LEAK_PROBE))
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    secret = (tmp_path / "secret.txt").read_text()
    assert len(secret) >= 16
    assert secret not in json.dumps(outputs)


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ holds the examples that CI runs"
