"""Which row of one payload corresponds to which row of another.

The overlay knows where each row came from and passes that along (``origin``). When
two payloads are compared without it (e.g. what was read against what the service
holds now), rows are matched by the declared primary key when it identifies every
row, else by content: identical rows first, then a longest-common-subsequence match
of the rows' JSON texts (like a line diff), pairing the remaining rows in order.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from mddframes.codec.values import canonical_json


def primary_key_columns(columns: Sequence[dict[str, Any]]) -> list[str]:
    """The names of the declared columns flagged ``primaryKey`` (in declared order).

    A snake_case service spells the flag ``primary_key``; documents are kept as served.
    """
    return [c["name"] for c in columns if c.get("primaryKey", c.get("primary_key")) is True]


def key_of(row: dict[str, Any], names: Sequence[str]) -> tuple[Any, ...] | None:
    """A hashable primary-key value of a row (None if a key column is absent or null)."""
    parts: list[Any] = []
    for name in names:
        value = row.get(name)
        if value is None:
            return None
        kind = type(value)
        # the type is part of the key: "1", 1, 1.0 and True are four different keys
        parts.append((kind, canonical_json(value) if kind in (dict, list) else value))
    return tuple(parts)


def _by_key(
    old_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]], names: Sequence[str]
) -> list[int | None] | None:
    old_keys = [key_of(row, names) for row in old_rows]
    if any(k is None for k in old_keys) or len(set(old_keys)) != len(old_keys):
        return None
    position = {k: i for i, k in enumerate(old_keys)}
    origin: list[int | None] = []
    taken: set[int] = set()
    for row in new_rows:
        p = position.get(key_of(row, names))
        if p is None or p in taken:
            origin.append(None)
        else:
            taken.add(p)
            origin.append(p)
    # a row whose key changed in place: its old row, at the same position, is unmatched
    for i, p in enumerate(origin):
        if p is None and i < len(old_rows) and i not in taken:
            taken.add(i)
            origin[i] = i
    return origin


def _by_content(old_rows: list[dict[str, Any]], new_rows: list[dict[str, Any]]) -> list[int | None]:
    if len(old_rows) == len(new_rows):
        # the common case of edits in place: pair by position, no sequence matching
        return list(range(len(new_rows)))
    old_text = [canonical_json(row) for row in old_rows]
    new_text = [canonical_json(row) for row in new_rows]
    origin: list[int | None] = [None] * len(new_rows)
    matcher = difflib.SequenceMatcher(None, old_text, new_text, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            for offset in range(min(i2 - i1, j2 - j1)):
                origin[j1 + offset] = i1 + offset
    return origin


def align_rows(
    old_rows: list[dict[str, Any]],
    new_rows: list[dict[str, Any]],
    *,
    primary_key: Sequence[str] = (),
) -> list[int | None]:
    """For each new row, the position of its old row, or None for an added row.

    Parameters
    ----------
    old_rows, new_rows : list of dict
        The rows of the two payloads.
    primary_key : sequence of str, optional
        Declared primary-key columns. Used when every old row has a unique, non-null
        key; a new row whose key is not among the old keys is an added row, unless
        the old row at its position is matched by no key (then the key was edited
        in place).

    Returns
    -------
    list of int or None
        One entry per new row; each old position appears at most once. Old positions
        that appear nowhere are deleted rows.
    """
    if primary_key:
        matched = _by_key(old_rows, new_rows, primary_key)
        if matched is not None:
            return matched
    return _by_content(old_rows, new_rows)
