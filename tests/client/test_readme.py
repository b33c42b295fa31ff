"""Every Python block of README.md and of the guide's pages (docs/guide/*.md) runs, in
order and as written, against the emulator.

Sybil parses a document's fenced ``python`` blocks and runs them in one namespace, as a
reader pasting them into one session would; each document has a namespace of its own.
A document swaps the connection itself: its visible set-up block starts the embedded
emulator (and rebinds ``client`` after a ``connect`` example, which sends nothing), and its
last block stops the emulator. The shell examples run in tests/cli/test_readme_commands.py.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
import requests
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser

REPOSITORY = Path(__file__).resolve().parents[2]
README = REPOSITORY / "README.md"
#: README.md, then every page of the user guide (a page another change adds runs too)
DOCUMENTS = [README, *sorted((REPOSITORY / "docs" / "guide").glob("*.md"))]

pytestmark = pytest.mark.emulator


def _isolated(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """No settings, profile, locks or backups of the developer's: all under ``home``."""
    for name in list(os.environ):
        if name.startswith("MDD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    for variable in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(variable, str(home / variable.lower()))
    # the blocks write countries.xlsx, hubs.zip, exports/ where the reader stands
    monkeypatch.chdir(home)


def _check_readme(namespace: dict) -> None:
    # the tour wrote the edited table and verified it
    assert namespace["result"].verified
    assert namespace["countries"].loc[namespace["countries"]["alpha2"] == "DE", "name"].item() == (
        "Deutschland"
    )


def _check_bulk_edits(namespace: dict) -> None:
    # the bulk edit padded every short customer number of the 24 tables
    long = namespace["long"]
    assert long["table_id"].nunique() == 24
    assert long["customer_no"].dropna().str.len().eq(7).all()
    assert namespace["result"]["verified"].all()


#: what each document's blocks must have done, beyond running
CHECKS = {"README.md": _check_readme, "bulk-edits.md": _check_bulk_edits}


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(REPOSITORY)))
def test_every_python_block_runs_in_order_as_written(tmp_path, monkeypatch, path):
    _isolated(monkeypatch, tmp_path)
    threads_before = set(threading.enumerate())
    document = Sybil(parsers=[PythonCodeBlockParser()]).parse(path)
    examples = list(document)
    # every fenced block is one example, and nothing else is (no hidden set-up block)
    fenced = re.findall(r"^```python$", path.read_text("utf-8"), flags=re.MULTILINE)
    assert len(examples) == len(fenced)
    if not examples:
        return
    where = path.relative_to(REPOSITORY)
    namespace = document.namespace
    try:
        for example in examples:
            try:
                example.evaluate()
            except Exception as error:  # the document's line, not sybil's frames
                pytest.fail(f"{where} line {example.line}: {type(error).__name__}: {error}")
    finally:
        offline = namespace.get("offline")
        if offline is not None:  # a block failed before the document's own close
            offline.close()

    # the set-up block's emulator served the examples, and the last block stopped it
    emu = namespace["emu"]
    with pytest.raises(requests.ConnectionError):
        requests.get(emu.base_url, timeout=5)
    emulators = [t for t in threading.enumerate() if t.name == "mddframes-emulator"]
    assert not set(emulators) - threads_before
    CHECKS.get(path.name, lambda namespace: None)(namespace)


def test_the_guide_has_the_moved_examples():
    # the README's long examples live in the guide now: they must not vanish from both
    names = {p.name for p in DOCUMENTS}
    assert set(CHECKS) <= names
    assert len(DOCUMENTS) >= 10
