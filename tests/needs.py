"""One home for "this test needs X": under CI a missing X fails, elsewhere it skips.

CI installs every tool the suite drives (``.ci/run``: Chromium, LibreOffice, a Java
runtime, the ``dev`` extra), so a test that skips there for want of one would turn CI
green without checking what it claims. :func:`require` and :func:`require_module` are
what every test calls instead of ``pytest.skip``/``importorskip`` for a missing tool;
the markers of :data:`MARKER_NEEDS` require their tools for every test they mark
(``tests/conftest.py`` calls :func:`require` before the test's fixtures run).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest


def under_ci() -> bool:
    """True when ``CI`` says so (``1``, ``true``, ``yes``; ``.ci/run`` exports ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class Tool:
    """Something a test needs: whether it is here, and how to get it."""

    what: str
    present: Callable[[], bool]
    how: str


def _module(name: str) -> Callable[[], bool]:
    return lambda: importlib.util.find_spec(name) is not None


def _program(name: str) -> Callable[[], bool]:
    return lambda: shutil.which(name) is not None


#: Debian's Chromium binary (tests/browser/labpage.py drives it; ``/usr/bin/chromium``
#: is a wrapper script that adds flags).
CHROMIUM = Path("/usr/lib/chromium/chromium")
_DEV = "pip install -e '.[dev]'"

TOOLS: dict[str, Tool] = {
    "chromium": Tool(f"Chromium ({CHROMIUM})", CHROMIUM.exists, "apt-get install chromium"),
    "playwright": Tool("the Python package 'playwright'", _module("playwright"), _DEV),
    "jupyterlab": Tool("the Python package 'jupyterlab'", _module("jupyterlab"), _DEV),
    "pillow": Tool("the Python package 'PIL' (pillow)", _module("PIL"), _DEV),
    "psutil": Tool("the Python package 'psutil'", _module("psutil"), _DEV),
    "soffice": Tool(
        "LibreOffice (soffice)", _program("soffice"), "apt-get install libreoffice-calc-nogui"
    ),
    "pyspark": Tool("the Python package 'pyspark'", _module("pyspark"), _DEV),
    "java": Tool("a Java runtime (java)", _program("java"), "apt-get install default-jre-headless"),
    "sphinx": Tool("the docs tool sphinx", _module("sphinx"), _DEV),
    "pyarrow": Tool("the Python package 'pyarrow'", _module("pyarrow"), _DEV),
    "pygments": Tool("the Python package 'pygments'", _module("pygments"), _DEV),
    "mddframes-script": Tool(
        "the 'mddframes' console script next to this Python",
        lambda: Path(sys.executable).with_name("mddframes").exists(),
        "pip install -e .",
    ),
}

#: The markers that say what their tests drive: each requires these tools.
MARKER_NEEDS: dict[str, tuple[str, ...]] = {
    "browser": ("chromium", "playwright", "jupyterlab", "pillow", "psutil"),
    "spreadsheet_program": ("soffice",),
    "spark": ("pyspark", "java"),
    "docs": ("sphinx",),
}


def require(*names: str) -> None:
    """Fail under CI, else skip, unless every named tool of :data:`TOOLS` is here.

    Callable in a test, a fixture or at a module's top level.
    """
    missing = [TOOLS[name] for name in names if not TOOLS[name].present()]
    if not missing:
        return
    lacks = "; ".join(f"{tool.what} ({tool.how})" for tool in missing)
    if under_ci():
        pytest.fail(f"CI must run this test, but this machine lacks {lacks}", pytrace=False)
    pytest.skip(f"needs {lacks}", allow_module_level=True)


def require_module(name: str) -> ModuleType:
    """:func:`pytest.importorskip` that fails under CI (``name``: a key of :data:`TOOLS`)."""
    require(name)
    return importlib.import_module(name)


def require_for_markers(marker_names: set[str]) -> None:
    """:func:`require` the tools of every marker of :data:`MARKER_NEEDS` in ``marker_names``."""
    require(*(tool for marker, tools in MARKER_NEEDS.items() if marker in marker_names
              for tool in tools))  # fmt: skip
