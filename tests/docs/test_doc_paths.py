"""The repository stands on its own: every file path a page, a docstring, a comment or a
script names is a file of the repository, and nothing names a file outside it.

A path is a token with a slash whose first part is a top-level entry of the repository
(``docs/guide/arrow.md``, ``tests/cli/...``) or of the package (``codec/frame.py``, as
module docs name them), ending in a file suffix or a slash; globs and templates
(``*``, ``{}``, ``<>``) are patterns, not paths. It may be relative to the repository, the
package, the naming file's folder or ``docs/``. The CHANGELOG is history (it names files
since removed) and ``.gitignore`` names what must not be committed: both are left out of
the first check only.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "mddframes"
#: what the documentation build writes, named before it exists
GENERATED = ("docs/reference/_generated/",)
_SKIPPED_DIRS = {".git", "_build", "__pycache__", "build", "dist", "node_modules"}
_SUFFIXES = (".py", ".md", ".toml", ".ipynb", ".cfg", ".sh", ".png", ".css", ".html", ".rst",
             ".json", ".txt", ".yml", ".yaml")  # fmt: skip
_TOKEN = re.compile(r"(?<![\w./:-])((?:\.\./|\./)*[A-Za-z_.][\w.-]*(?:/[\w.*{}<>-]+)+/?)")


def _files() -> Iterator[Path]:
    """Every text file of the checkout git keeps or would keep (no venv, build output, caches).

    Asked of git, not walked: what the suite writes while it runs (hypothesis' database,
    build folders) is ignored by .gitignore and names paths of this machine.
    """
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    for name in sorted(filter(None, listed.split("\0"))):
        path = REPO / name
        parts = path.relative_to(REPO).parts
        if any(p in _SKIPPED_DIRS for p in parts):
            continue
        if path.is_file() and path.suffix not in (".png", ".xlsx", ".har", ".zip", ".gz"):
            yield path


def _roots() -> set[str]:
    return (
        {p.name for p in REPO.iterdir()}
        | {p.stem for p in PACKAGE.iterdir()}
        | {p.name for p in PACKAGE.iterdir()}
    )


def missing_paths(text: str, where: Path, roots: set[str]) -> list[str]:
    """The repository paths ``text`` (of the file ``where``) names that do not exist."""
    missing = []
    for found in _TOKEN.finditer(text):
        token = found.group(1).rstrip(".")
        bare = re.sub(r"^(\.\./|\./)+", "", token)
        if not (token.endswith(_SUFFIXES) or token.endswith("/")):
            continue
        if re.search(r"[*{}<>]", token) or bare.startswith(GENERATED):
            continue
        if bare.split("/")[0] not in roots and not token.startswith(".."):
            continue
        bases = (REPO, PACKAGE, where.parent, REPO / "docs")
        if not any((base / token).exists() for base in bases):
            missing.append(
                f"{where.relative_to(REPO)}:{text.count(chr(10), 0, found.start()) + 1}: {token}"
            )
    return missing


def test_every_repository_path_named_exists():
    roots = _roots()
    missing = []
    for path in _files():
        if path.name in ("CHANGELOG.md", ".gitignore") or path == Path(__file__).resolve():
            continue
        missing += missing_paths(path.read_text("utf-8", errors="replace"), path, roots)
    assert missing == []


def test_a_missing_path_is_found_and_a_real_one_is_not():
    # the check itself can fail: a made-up module and a moved test file are reported
    where = REPO / "docs" / "internals.md"
    text = "see `codec/frame.py`, mddframes/codec/nope.py, ../README.md and tests/test_x.py."
    assert missing_paths(text, where, _roots()) == [
        "docs/internals.md:1: mddframes/codec/nope.py",
        "docs/internals.md:1: tests/test_x.py",
    ]


def test_nothing_names_a_file_outside_the_repository():
    outside = re.compile(
        r"DESIGN\.md|\bDESIGN (section|\d)|(?<![\w-])(\.\./)+shared\b|(?<![\w.-])shared/\w"
        r"|/work/"
    )
    here = Path(__file__).resolve()
    named = [
        f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for path in _files() if path != here
        for text in [path.read_text("utf-8", errors="replace")]
        for m in outside.finditer(text)
    ]  # fmt: skip
    assert named == []
