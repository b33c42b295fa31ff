"""The spellings of true and false that spreadsheet programs write into a saved CSV file.

A pulled CSV writes a boolean cell as JSON, ``true`` or ``false``. LibreOffice Calc and
Excel read that as a boolean and save it as ``TRUE`` / ``FALSE``; pandas and Python's
``str`` write ``True`` / ``False``. Such a cell is read as the boolean it spells, exactly
these four spellings and no other (``1``, ``yes``, ``tRuE`` and padded forms stay
errors), and only in a column where nothing else is meant: one declared ``BOOLEAN``, or
one whose every other non-null cell is a boolean too. Elsewhere (a JSON column that also
holds numbers or text) the spelling is ambiguous and the file is refused, naming the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: What spreadsheet programs write for JSON ``true`` / ``false``, and nothing more.
SPELLINGS: dict[str, bool] = {"TRUE": True, "FALSE": False, "True": True, "False": False}


@dataclass(frozen=True)
class SpelledBoolean:
    """A cell written as one of :data:`SPELLINGS`, not yet taken as a boolean.

    Attributes
    ----------
    raw : str
        The cell as the file holds it.
    place : str
        Where it is (file and line), for the refusal.
    """

    raw: str
    place: str


def spelled(raw: str, place: str) -> SpelledBoolean | None:
    """The cell ``raw`` as a :class:`SpelledBoolean` when it is exactly a spelling, else None."""
    return SpelledBoolean(raw, place) if raw in SPELLINGS else None


def settle_spellings(cells: list[Any], *, declared_boolean: bool) -> SpelledBoolean | None:
    """Turn a column's spelled booleans into booleans, in place, where the column is boolean.

    Parameters
    ----------
    cells : list
        The column's cells as read (JSON values, None, :class:`SpelledBoolean`).
    declared_boolean : bool
        The column is declared ``BOOLEAN`` (or another spelling of that type).

    Returns
    -------
    SpelledBoolean or None
        None when every spelled cell became a boolean (or there was none); else the
        first spelled cell of a column that holds other values too (nothing changed):
        the caller refuses the file naming it.
    """
    pending = [i for i, cell in enumerate(cells) if type(cell) is SpelledBoolean]
    if not pending:
        return None
    only_booleans = all(
        cell is None or type(cell) is bool or type(cell) is SpelledBoolean for cell in cells
    )
    if not (declared_boolean or only_booleans):
        first: SpelledBoolean = cells[pending[0]]
        return first
    for i in pending:
        cells[i] = SPELLINGS[cells[i].raw]
    return None
