"""The runnable parts of a Markdown page, as the tests that run the documentation read them.

- :func:`marked_blocks`: the ``bash`` blocks a page marks with ``<!-- NAME: ... -->`` on
  the line before them (getting-started's installs and its two shells).
- :func:`code_files`: the files a page shows as ``{code-block}`` with a ``:caption:``
  (the script of the second shell), by caption.
- :func:`first_installs`: the ``pip install`` commands a page names in its first
  paragraph (what its blocks need beyond getting-started's install).
- Run as a script (``python tests/doc_blocks.py PAGE [EXPRESSION ...]``), it runs the
  page's fenced ``python`` blocks in order in one namespace, as a reader pasting them
  into one session, then checks that each EXPRESSION is true there; as
  ``python tests/doc_blocks.py --pages WORK PAGE ...``, it runs several pages in turn
  (:func:`run_pages`). It imports nothing but
  the standard library, so any venv can run it (the fresh one of tests/docs/test_install.py
  has no pytest, no sybil).
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from pathlib import Path

_MARKED = re.compile(r"<!-- ([\w-]+):[^\n]*-->\n```bash\n(.*?)```", re.DOTALL)
_CODE_FILE = re.compile(r"^```\{code-block\} python\n:caption: (\S+)\n\n(.*?)^```$", re.M | re.S)
_PYTHON = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)
_INSTALL = re.compile(r"`(pip install [^`]+)`")


def marked_blocks(text: str) -> dict[str, str]:
    """The marked ``bash`` blocks of a page's text, by marker."""
    return dict(_MARKED.findall(text))


def code_files(text: str) -> dict[str, str]:
    """The ``{code-block} python`` files of a page's text, by caption."""
    return dict(_CODE_FILE.findall(text))


def first_installs(text: str) -> list[str]:
    """The ``pip install`` commands of the first paragraph after a page's title."""
    paragraphs = [p for p in text.split("\n\n") if p.strip() and not p.startswith("# ")]
    return _INSTALL.findall(paragraphs[0]) if paragraphs else []


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The fenced ``python`` blocks of a page's text, with the line each starts on."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _PYTHON.finditer(text)]


def run_page(path: Path, expectations: list[str]) -> int:
    """Run the page's Python blocks in one namespace; 0 when all ran and all held."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    blocks = python_blocks(path.read_text("utf-8"))
    for line, source in blocks:
        try:
            exec(compile(source, f"{path.name}:{line}", "exec"), namespace)
        except Exception:
            print(f"{path.name} line {line} failed:\n{traceback.format_exc()}", file=sys.stderr)
            offline = namespace.get("offline")
            if offline is not None:  # stop the page's emulator
                offline.close()  # type: ignore[attr-defined]
            return 1
    for expression in expectations:
        if not eval(expression, namespace):
            print(f"{path.name}: not true after its blocks: {expression}", file=sys.stderr)
            return 1
    print(f"{path.name}: {len(blocks)} blocks ran")
    return 0


def run_pages(work: Path, pages: list[Path]) -> int:
    """Run each page as :func:`run_page` does, one after the other in this process, each in
    a folder of its own under ``work`` that is also its ``HOME``, with the environment as
    it was before the page; 0 when every page ran (a failed page does not stop the rest).

    One process for all the pages: each of its own would import pandas, pyarrow and
    mddframes again (2-3 s a page on a loaded two-core machine).
    """
    failed = 0
    start = Path.cwd()
    for page in pages:
        folder = work / page.stem
        folder.mkdir(parents=True)
        environment = dict(os.environ)
        os.environ["HOME"] = str(folder)
        os.chdir(folder)
        try:
            failed += run_page(page, []) != 0
        finally:
            os.chdir(start)
            os.environ.clear()
            os.environ.update(environment)
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "--pages":
        raise SystemExit(run_pages(Path(sys.argv[2]), [Path(a) for a in sys.argv[3:]]))
    raise SystemExit(run_page(Path(sys.argv[1]), sys.argv[2:]))
