"""The install a newcomer reads is the install that works: the documented commands, run as
written, in a fresh venv, from a copy of the checkout.

docs/guide/getting-started.md marks its install blocks with an ``<!-- install... -->``
comment; each runs in bash (``set -euo pipefail``) in a fresh copy of the sources (the
clone the page starts from), and must end with the demo's verified write. The README and
the docs' home page show the first block's commands, word for word.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guide" / "getting-started.md"

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.timeout(900)]

_MARKED = re.compile(r"<!-- (install[\w-]*):[^\n]*-->\n```bash\n(.*?)```", re.DOTALL)


def install_blocks() -> dict[str, str]:
    """The marked install blocks of the getting-started page, by marker."""
    return dict(_MARKED.findall(GUIDE.read_text("utf-8")))


def _commands(block: str) -> list[str]:
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_page_marks_both_installs():
    assert set(install_blocks()) == {"install", "install-wheel"}


@pytest.mark.parametrize("where", ["README.md", "docs/index.md"])
def test_the_readme_and_the_home_page_show_the_same_commands(where):
    text = (REPO / where).read_text("utf-8")
    for command in _commands(install_blocks()["install"]):
        assert command in text, (where, command)
    assert 'pip install "mddframes[' not in text  # no index has it


@pytest.mark.emulator  # the demo starts one
@pytest.mark.parametrize("marker", ["install", "install-wheel"])
def test_the_documented_install_runs_as_written_in_a_fresh_venv(marker, tmp_path):
    clone = tmp_path / "mddframes"
    shutil.copytree(REPO, clone, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "_build", "__pycache__", "*.egg-info", "build", "dist", ".*_cache",
    ))  # fmt: skip
    dropped = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "VIRTUAL_ENV")
    env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("MDD_")}
    # the system's python3, not this venv's: the reader starts from a bare machine
    bin_dir = str(Path(os.environ.get("VIRTUAL_ENV", "/nonexistent")) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != bin_dir)
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"),
               XDG_DATA_HOME=str(tmp_path / "data"))  # fmt: skip
    script = "set -euo pipefail\n" + install_blocks()[marker]
    done = subprocess.run(
        ["bash", "-c", script], cwd=clone, env=env, capture_output=True, text=True, timeout=840
    )
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    assert "written: verified=True" in done.stdout
    installed = subprocess.run(
        [str(clone / ".venv" / "bin" / "python"), "-c", "import mddframes; print(mddframes.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert str(clone / ".venv") in installed.stdout  # installed, not the checkout on the path
