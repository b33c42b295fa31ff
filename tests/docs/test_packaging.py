"""The package a user installs: built as PyPI would get it, and checked.

``python -m build`` makes the sdist and the wheel in an isolated build environment (it
fetches setuptools from PyPI, as any user's build does); any line of its log with
"warning" fails the test (setuptools' deprecation notices, a missing license file...).
``twine check --strict`` checks what PyPI would render. The wheel installed into a fresh
venv (not editable) and run from outside this checkout is ``tests/docs/test_install.py``'s
``install-wheel`` case: getting started's block that builds it, as written.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import mddframes

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.timeout(900)]


def _run(command: list[str], cwd: Path, **env: str) -> str:
    # PYTHONDONTWRITEBYTECODE would make setuptools warn that it skips byte-compiling;
    # PYTHONPATH (a checkout on it) would make pip think mddframes is installed already
    dropped = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    environment = {k: v for k, v in os.environ.items() if k not in dropped}
    environment.update(env)
    done = subprocess.run(
        command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # a copy of the sources: the build writes mddframes.egg-info next to them
    source = tmp_path_factory.mktemp("source") / "mddframes"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "_build", "__pycache__", "*.egg-info", "build", "dist", ".*_cache",
    ))  # fmt: skip
    log = _run([sys.executable, "-m", "build", "--outdir", str(out), str(source)], cwd=out)
    warnings = [line for line in log.splitlines() if re.search(r"warn", line, re.IGNORECASE)]
    assert warnings == [], "the build warned:\n" + "\n".join(warnings)
    return out


def test_the_build_passes_twine_check_strictly(dist):
    files = sorted(str(p) for p in dist.iterdir())
    assert len(files) == 2  # the sdist and the wheel
    log = _run([sys.executable, "-m", "twine", "check", "--strict", *files], cwd=dist)
    assert "warning" not in log.lower()


def test_the_wheel_holds_every_data_file_and_the_version(dist):
    (wheel,) = dist.glob("mddframes-*.whl")
    assert wheel.name.startswith(f"mddframes-{mddframes.__version__}-")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(f"mddframes-{mddframes.__version__}.dist-info/METADATA")
    data = {
        str(p.relative_to(REPO)) for p in (REPO / "mddframes").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }  # fmt: skip
    assert sorted(data - names) == []
    assert "mddframes/py.typed" in names
    assert any(n.startswith("mddframes/emulator/templates/") for n in names)
    assert any(n.startswith("mddframes/emulator/data/") for n in names)
    text = metadata.decode("utf-8")
    assert f"Version: {mddframes.__version__}" in text
    assert "License-Expression: MIT" in text
