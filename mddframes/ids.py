"""Turning what a user passes as "some ids" into a clean list, with one rule everywhere.

Bulk calls (reads, exports, packages, deployment) take ids as a list, tuple, Series,
Index or a DataFrame with an id column. The service's ids are strings, and an id is
sent exactly as given, so this refuses rather than guesses: a lone string (iterating
it would send one request per character), a missing or blank id, and an id that is not
a string (a number has often lost leading zeros on its way through a CSV file).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias

import pandas as pd

from mddframes.errors import DataShapeError, InvalidArgumentError

#: The columns a frame of elements may carry its ids in, in order of preference.
ELEMENT_ID_COLUMNS = ("id", "structure_id", "structureId")


#: Some ids as a user passes them: a list, tuple, Series or Index of strings, or a frame
#: with an id column (its first column named in ``id_columns``).
Ids: TypeAlias = Iterable[str] | pd.DataFrame


def id_list(ids: Ids, *, what: str, id_columns: Sequence[str] = ELEMENT_ID_COLUMNS) -> list[str]:
    """The distinct ids of ``ids``, first occurrence first.

    Parameters
    ----------
    ids : list, tuple, Series, Index or DataFrame
        The ids; a DataFrame gives its first column named in ``id_columns``.
    what : str
        How to name the argument in errors (e.g. ``"export_scripts ids"``).
    id_columns : sequence of str
        The id columns a DataFrame may have.

    Returns
    -------
    list of str

    Raises
    ------
    InvalidArgumentError
        For a lone string, something that is not a collection, or an entry that is
        missing, blank or not a string (the message names its position).
    DataShapeError
        For a DataFrame without any of ``id_columns``.
    """
    if isinstance(ids, pd.DataFrame):
        column = next((c for c in id_columns if c in ids.columns), None)
        if column is None:
            raise DataShapeError(
                f"{what}: the frame has no id column (looked for {', '.join(map(repr, id_columns))};"
                f" its columns are {list(ids.columns)})"
            )
        ids = ids[column]
    if isinstance(ids, str | bytes):
        raise InvalidArgumentError(
            f"{what} must be a list of ids, not the single string {ids!r}; wrap it in a list"
        )
    if not isinstance(ids, Iterable):
        raise InvalidArgumentError(f"{what} must be a list of ids, got {type(ids).__name__}")
    values = list(ids)
    for position, value in enumerate(values):
        if isinstance(value, str) and value.strip():
            continue
        if isinstance(value, str):
            problem = "a blank id"
        elif value is None or pd.isna(value):
            problem = "missing (drop missing ids first, e.g. tree['table_id'].dropna())"
        else:
            problem = (
                f"{value!r}, a {type(value).__name__}; ids are strings (convert with "
                ".astype(str) if the value really is the id)"
            )
        raise InvalidArgumentError(f"{what}: entry {position} is {problem}")
    return list(dict.fromkeys(values))


def require_id(value: Any, *, what: str) -> str:
    """``value`` if it is a usable single id (a non-empty string), else a clear error.

    Raises
    ------
    InvalidArgumentError
        Naming ``what`` and the value given.
    """
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"{what} must be a non-empty string, got {value!r}")
    return value


def close_matches(unknown: Sequence[str], known: Iterable[str], *, limit: int = 3) -> str:
    """``"; did you mean ...?"`` naming the known ids closest to the unknown ones, or ``""``.

    For a message about ids that were not found, where the caller already holds the ids
    that exist (a tree it read, a folder it pulled): a typo then gets its correction.

    Parameters
    ----------
    unknown : sequence of str
        The ids that were not found (the first few are matched).
    known : iterable of str
        The ids that exist.
    limit : int
        At most this many suggestions per unknown id.

    Returns
    -------
    str
        Empty when nothing is close.

    Examples
    --------
    >>> close_matches(["tbl-1090"], ["tbl-0109", "tbl-0190", "dwh-0001"])
    "; did you mean 'tbl-0190' or 'tbl-0109'?"
    """
    import difflib

    pool = list(dict.fromkeys(known))
    suggestions: list[str] = []
    for word in unknown[:5]:
        for match in difflib.get_close_matches(word, pool, n=limit, cutoff=0.6):
            if match not in suggestions:
                suggestions.append(match)
    if not suggestions:
        return ""
    return "; did you mean " + " or ".join(map(repr, suggestions[:limit])) + "?"
