"""The example notebooks run from top to bottom, and no output shows a secret."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))

# Appended by the test, never shown: hands the emulator's per-run secret to the test
# through a file so the test can look for it in every output.
_LEAK_PROBE = 'from pathlib import Path\nPath("secret.txt").write_text(emu.client_secret)'


@pytest.mark.emulator  # the notebooks start one
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
    # the kernel ran in tmp_path, as in the notebooks' folder: nothing is left there (a
    # notebook writes into a temporary folder of its own and removes it in its last cell)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.txt"]


def test_there_is_a_notebook():
    assert NOTEBOOKS, "notebooks/ holds the examples that CI runs"


# A secret typed into a notebook: client_secret="...", MDD_CLIENT_SECRET = '...' (a call
# or an assignment with a literal), other than a placeholder such as "..." or "<secret>".
_TYPED_SECRET = re.compile(
    r"""client_secret\W{0,4}\s*[=:]\s*(?P<q>["'])(?!\.\.\.|<)[^"']+(?P=q)""", re.IGNORECASE
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebook_holds_no_outputs_and_no_secret(path, emulator):
    text = path.read_text(encoding="utf-8")
    notebook = nbformat.reads(text, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]

    assert [i for i, cell in enumerate(notebook.cells) if cell.get("outputs")] == [], (
        "store notebooks without outputs (Kernel > Restart and Clear Outputs, or "
        "jupyter nbconvert --clear-output --inplace)"
    )
    assert [cell.execution_count for cell in code if cell.execution_count is not None] == []
    assert emulator.client_secret not in text
    assert [m.group() for cell in notebook.cells for m in _TYPED_SECRET.finditer(cell.source)] == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ('mddframes.connect("acme", client_secret="s3cr3t-value")', True),
        ("os.environ['MDD_CLIENT_SECRET'] = 'abc123'", True),
        ('{"client_secret": "abc123"}', True),
        ('mddframes.connect("acme", client_secret="...")', False),
        ("client_secret=os.environ['MDD_CLIENT_SECRET']", False),
        ("emu.client_secret", False),
    ],
)
def test_a_typed_secret_is_recognised(source, found):
    assert bool(_TYPED_SECRET.search(source)) is found
