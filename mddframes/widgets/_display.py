"""Small display helpers the panels share."""

from __future__ import annotations

from typing import Any

import pandas as pd


def highlight_rows(frame: pd.DataFrame, mask: pd.Series, colour: str) -> Any:
    """``frame`` with the rows where ``mask`` is True on a coloured background.

    Falls back to the plain frame where pandas' Styler cannot be used (it needs
    jinja2, which mddframes does not require): the panels also say in words which
    rows the colour marks, so nothing depends on it.
    """
    try:
        import jinja2  # noqa: F401  (the Styler's renderer)
    except ImportError:
        return frame
    marked = mask.fillna(False).astype(bool).to_numpy()
    style = f"background-color: {colour}"

    def paint(row: pd.Series) -> list[str]:
        return [style if marked[frame.index.get_loc(row.name)] else ""] * len(row)

    return frame.style.apply(paint, axis=1)


def id_summary(ids: list[str], limit: int = 10) -> str:
    """``'a', 'b' and 3 more``: ids in a sentence without flooding it."""
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
