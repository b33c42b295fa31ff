"""docs/wire-format.md's tables, made from the wire profile.

The page holds two generated tables verbatim: the assumptions (:data:`~.rows.ROWS`)
and the dialects (:data:`~.dialects.DIALECTS`); tests/wire/test_page.py fails when the
page and the profile disagree. After changing either, regenerate the page with::

    python -m mddframes.wire.page docs/wire-format.md
"""

from __future__ import annotations

import sys
from pathlib import Path

from mddframes.wire.dialects import DIALECTS
from mddframes.wire.rows import ROWS

ASSUMPTIONS_HEADER = (
    "| # | Operation | The description shows | We assume (the emulator serves) "
    "| The client tolerates a difference by | Dialect exercising the alternative |"
)
DIALECTS_HEADER = "| Dialect | Alternative | What the client does | Doctor reports `differs` in |"


def _table(header: str, rows: list[list[str]]) -> str:
    columns = header.count("|") - 1
    lines = [header, "|" + "---|" * columns]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "".join(line + "\n" for line in lines)


def assumptions_markdown() -> str:
    """The table of assumptions, one row each (Markdown, as the page holds it)."""
    return _table(
        ASSUMPTIONS_HEADER,
        [[str(r.number), r.operation, r.shows, r.assumed, r.tolerated, r.dialects] for r in ROWS],
    )


def dialects_markdown() -> str:
    """The table of dialects (Markdown, as the page holds it)."""
    return _table(
        DIALECTS_HEADER,
        [
            [f"`{e.name}`", e.alternative, e.client_does, e.doctor_differs]
            for e in DIALECTS.values()
        ],
    )


def tables(text: str) -> dict[str, str]:
    """The page's tables, by header line: each header and the lines that follow it."""
    found: dict[str, str] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line in (ASSUMPTIONS_HEADER, DIALECTS_HEADER):
            end = number
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            found[line] = "".join(item + "\n" for item in lines[number:end])
    return found


def rendered(text: str) -> str:
    """``text`` (the page) with both tables made anew from the profile."""
    generated = {ASSUMPTIONS_HEADER: assumptions_markdown(), DIALECTS_HEADER: dialects_markdown()}
    for header, table in tables(text).items():
        text = text.replace(table, generated[header], 1)
    return text


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page given as the argument (default docs/wire-format.md) in place."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "docs/wire-format.md")
    text = path.read_text("utf-8")
    path.write_text(rendered(text), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
