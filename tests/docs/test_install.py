"""The install a newcomer reads is the install that works: the documented commands, run as
written, in a fresh venv, from a copy of the checkout, and then everything the docs show
run in that venv, not in the dev one.

docs/guide/getting-started.md marks its install blocks with an ``<!-- install... -->``
comment; each runs in bash (``set -euo pipefail``) in a fresh copy of the sources (the
clone the page starts from), and must end with the demo's verified write. The README and
the docs' home page show the first block's commands, word for word. In the venv the first
block made, the README's Python blocks run as written (tests/doc_blocks.py runs them: that
venv has no pytest), and so does every page of the guide: first those that name no
``pip install`` in their first paragraph, then, after those commands ran, the others.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from doc_blocks import first_installs, marked_blocks, python_blocks

import mddframes

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guide" / "getting-started.md"
RUNNER = REPO / "tests" / "doc_blocks.py"

pytestmark = [pytest.mark.packaging, pytest.mark.slow, pytest.mark.timeout(1500)]


def install_blocks() -> dict[str, str]:
    """The marked install blocks of the getting-started page, by marker."""
    blocks = marked_blocks(GUIDE.read_text("utf-8"))
    return {name: block for name, block in blocks.items() if name.startswith("install")}


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


class FreshInstall:
    """A copy of the checkout with the venv one install block made in it, and the reader's
    environment (the system's python3, no ``MDD_*``, a home of its own)."""

    def __init__(self, root: Path, marker: str) -> None:
        self.root = root
        self.clone = root / "mddframes"
        shutil.copytree(REPO, self.clone, ignore=shutil.ignore_patterns(
            ".git", ".venv*", "_build", "__pycache__", "*.egg-info", "build", "dist", ".*_cache",
        ))  # fmt: skip
        dropped = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "VIRTUAL_ENV")
        env = {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("MDD_")}
        # the system's python3, not this venv's: the reader starts from a bare machine
        bin_dir = str(Path(os.environ.get("VIRTUAL_ENV", "/nonexistent")) / "bin")
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != bin_dir)
        env.update(HOME=str(root), XDG_CACHE_HOME=str(root / "cache"),
                   XDG_DATA_HOME=str(root / "data"), XDG_CONFIG_HOME=str(root / "config"),
                   XDG_STATE_HOME=str(root / "state"))  # fmt: skip
        # pip's download cache stays the machine's: what is checked is that the block
        # installs and runs, not the network; each install still resolves and unpacks
        # every package into its fresh venv
        env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR") or str(
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip"
        )
        self.env = env
        self.output = self.bash(install_blocks()[marker], timeout=840)

    def bash(self, script: str, *, timeout: float = 600) -> str:
        """Run ``script`` in bash (``set -euo pipefail``) in the clone; its output."""
        script = "set -euo pipefail\n" + script
        done = subprocess.run(["bash", "-c", script], cwd=self.clone, env=self.env,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip
        assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def run_page(self, page: Path, *expectations: str) -> str:
        """Run ``page``'s Python blocks with the venv's python, in a folder of their own."""
        work = self.root / "pages" / page.stem
        work.mkdir(parents=True)
        return self._run_blocks([str(self._copy(page)), *expectations], work, page.name)

    def run_pages(self, pages: list[Path], work: str) -> str:
        """Run the pages' Python blocks in one process of the venv's python, each page in a
        folder of its own under ``work`` (tests/doc_blocks.py's ``--pages``)."""
        folder = self.root / work
        folder.mkdir(parents=True)
        arguments = ["--pages", str(folder), *(str(self._copy(page)) for page in pages)]
        return self._run_blocks(arguments, folder, ", ".join(page.name for page in pages))

    def _copy(self, page: Path) -> Path:
        return self.clone / page.relative_to(REPO)  # the page as the clone has it

    def _run_blocks(self, arguments: list[str], cwd: Path, what: str) -> str:
        runner = self.clone / RUNNER.relative_to(REPO)
        done = subprocess.run(
            [str(self.clone / ".venv" / "bin" / "python"), str(runner), *arguments],
            cwd=cwd, env={**self.env, "HOME": str(cwd)}, capture_output=True, text=True,
            timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, f"{what}:\n{done.stdout}\n{done.stderr}"
        return done.stdout


@pytest.fixture(scope="module")
def documented(tmp_path_factory) -> FreshInstall:
    """The venv getting-started's first install block makes, as the README shows it."""
    return FreshInstall(tmp_path_factory.mktemp("documented"), "install")


@pytest.mark.emulator  # the demo starts one
@pytest.mark.parametrize("marker", ["install", "install-wheel"])
def test_the_documented_install_runs_as_written_in_a_fresh_venv(marker, request, tmp_path):
    if marker == "install":
        fresh = request.getfixturevalue("documented")
    else:
        fresh = FreshInstall(tmp_path, marker)
    assert "written: verified=True" in fresh.output
    installed = subprocess.run(
        [str(fresh.clone / ".venv" / "bin" / "python"), "-c",
         "import mddframes, mddframes.emulator; print(mddframes.__file__, mddframes.__version__)"],
        cwd=fresh.root, env=fresh.env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    where, version = installed.stdout.split()
    assert where.startswith(str(fresh.clone / ".venv"))  # installed, not the checkout
    assert version == mddframes.__version__


@pytest.mark.emulator  # the README's tour starts one
def test_the_readme_runs_as_written_in_the_documented_install(documented):
    readme = REPO / "README.md"
    assert len(python_blocks(readme.read_text("utf-8"))) >= 5
    # the tour's edit written and verified (its snapshot and lineage ran on the way)
    edited = 'countries.loc[countries["alpha2"] == "DE", "name"].item() == "Deutschland"'
    assert "README.md:" in documented.run_page(readme, "result.verified", edited)


def _guide_pages() -> list[Path]:
    pages = sorted((REPO / "docs" / "guide").glob("*.md"))
    return [p for p in pages if python_blocks(p.read_text("utf-8"))]


@pytest.mark.emulator  # every page starts one
def test_every_guide_page_runs_in_the_documented_install_with_what_it_names(documented):
    pages = _guide_pages()
    named = {p: first_installs(p.read_text("utf-8")) for p in pages}
    # a page that names nothing needs nothing more than the documented install
    plain = [page for page in pages if not named[page]]
    ran = documented.run_pages(plain, "plain-pages")
    commands = sorted({c for found in named.values() for c in found})
    assert commands, "no page names an install: is the first-paragraph rule still read?"
    documented.bash(". .venv/bin/activate\n" + "\n".join(commands))
    extra = [page for page in pages if named[page]]
    ran += documented.run_pages(extra, "pages-with-installs")
    # every page said it ran its blocks (a runner that skipped one would not)
    assert sorted(line.split(":")[0] for line in ran.splitlines() if " blocks ran" in line) == (
        sorted(page.name for page in pages)
    )
