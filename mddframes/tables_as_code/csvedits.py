"""What ordinary CSV editors do to a pulled CSV file: undone where exact, else pointed out.

**Bare empty fields.** Python's :mod:`csv`, pandas' ``to_csv``, LibreOffice and Excel
write an empty string and a missing cell alike, as an empty unquoted field. So in a
*text* column of a *pulled* row (one whose ``row`` cell names a row of the service),
a bare empty field means "empty", not "null": it becomes the empty string where the
service holds the empty string in that cell, and null everywhere else (a new row, a
cell the service holds null or a value in). While the service still holds the rows
as pulled, the service's cell is the pulled cell, so an untouched cell plans no
change whichever program saved the file. The cost: a CSV cannot turn a pulled empty
string into null (edit that cell in the JSON or xlsx format). JSON-encoded columns
are not affected: an empty string there is the JSON text ``""``, a non-empty field
that every CSV writer keeps.

**Numbers written anew.** A spreadsheet program that opens a CSV reads number-like
text as numbers and writes them back its own way: ``0000123`` -> ``123``, ``12.50``
-> ``12.5``, ``12345678901234567890`` -> ``1.23456789012346E+19``. The file then plans
changes nobody made. :func:`resaved_note` recognises them: a cell of a pulled row
whose value in the file and on the service are the same number written differently
(equal to 5 significant digits, which the shortest scientific notation keeps). A
column counts as re-formatted when at least :data:`RESAVED_MIN_CELLS` of its cells
that differ from the service are such, and they are at least half of them: a
spreadsheet re-formats *every* such cell of a column, while a person fixing data by
hand touches one or two of them, and other edits in the same column (fewer than the
re-formatted cells) do not hide the pattern.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

import pandas as pd

from mddframes.codec import depth

#: A column is reported as re-formatted from this many same-number changes on.
RESAVED_MIN_CELLS = 3

# a number as text: sign, digits with an optional point, an optional exponent
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SAME_NUMBER_TOLERANCE = 1e-5


def resolve_bare_empties(
    frame: pd.DataFrame,
    bare: dict[str, list[int]],
    labels: list[int | None],
    rows: list[dict[str, Any]],
) -> pd.DataFrame:
    """``frame`` with its bare empty fields made empty strings where ``rows`` hold one.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file's rows (RangeIndex); not modified.
    bare : dict
        Column -> the frame rows whose field in that text column was a bare empty field.
    labels : list of int or None
        For each frame row, the row of ``rows`` it is (None: a new row).
    rows : list of dict
        What the service holds now.

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself when nothing is resolved, else a shallow copy with new columns.
    """
    resolved = frame
    for column, positions in bare.items():
        empties = [
            i for i in positions
            if (label := labels[i]) is not None and label < len(rows)
            and rows[label].get(column) == ""
        ]  # fmt: skip
        if not empties:
            continue
        if resolved is frame:
            resolved = frame.copy(deep=False)
        values = resolved[column]
        # a column that was all empty may have a non-text dtype: hold the text as objects
        text = values.dtype == object or isinstance(values.dtype, pd.StringDtype)
        values = values.copy() if text else values.astype(object)
        values.iloc[empties] = ""
        resolved[column] = values
    return resolved


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        if isinstance(value, numbers.Real):
            number = float(value)
        elif isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            number = float(value)
        else:
            return None
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def same_number_rewritten(old: Any, new: Any) -> bool:
    """Whether a change from ``old`` to ``new`` is one number written another way.

    Both are numbers or number-like text, and they agree to 5 significant digits
    (``"0042"`` -> ``"42"``, ``"1.50"`` -> ``"1.5"``, ``9007199254740993`` ->
    ``9.00719925474099e15``).
    """
    a, b = _number(old), _number(new)
    if a is None or b is None:
        return False
    return math.isclose(a, b, rel_tol=_SAME_NUMBER_TOLERANCE)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def resaved_note(frame: pd.DataFrame, rows: list[dict[str, Any]], file: str) -> str | None:
    """The plan's note when ``file`` looks re-saved by a spreadsheet program, else None.

    Parameters
    ----------
    frame : pandas.DataFrame
        The file's rows as :meth:`.files.ObjectFile.frame_for` labels them (a label
        below ``len(rows)`` is that row of the service).
    rows : list of dict
        What the service holds now.
    file : str
        The file's name, for the message.

    Notes
    -----
    The file is compared with the service here, not through the writer's diff, so
    the note is there also when the check refuses the object (a spreadsheet turns
    64-bit ids into floats: "type drift").
    """
    changed: dict[str, int] = {}
    rewritten: dict[str, list[tuple[int, Any, Any]]] = {}
    for column in frame.columns:
        for label, new in zip(frame.index, frame[column].tolist(), strict=True):
            if not 0 <= label < len(rows):
                continue
            old, new = rows[label].get(column), None if _missing(new) else new
            if depth.equal(old, new):
                continue
            changed[column] = changed.get(column, 0) + 1
            if same_number_rewritten(old, new):
                rewritten.setdefault(column, []).append((label, old, new))
    flagged = {
        column: cells for column, cells in rewritten.items()
        if len(cells) >= RESAVED_MIN_CELLS and 2 * len(cells) >= changed[column]
    }  # fmt: skip
    if not flagged:
        return None
    count = sum(len(cells) for cells in flagged.values())
    column, cells = next(iter(flagged.items()))
    label, old, new = cells[0]
    return (
        f"{file} looks re-saved by a spreadsheet program: {count} cell(s) of column(s) "
        f"{', '.join(flagged)} hold the same number written another way (e.g. row {label} "
        f"{column}: {old!r} -> {new!r}); such programs read CSV text as numbers (leading "
        "zeros, trailing decimal zeros and long ids are lost). Edit this object as a "
        "workbook instead: pull it with --file-format xlsx (that replaces the CSV file)"
    )
