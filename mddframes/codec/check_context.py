"""What every stage of the completeness check reads: :class:`CheckContext`.

The context holds the new payload, what the service holds, the options, and what the
stages derive from them once (the declared columns, how rows match, which rows were
touched); see :mod:`mddframes.codec.check`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from itertools import chain
from typing import Any

from mddframes.codec.align import align_rows, key_of, primary_key_columns
from mddframes.codec.frame import ROWS_KEYS, declared_columns
from mddframes.codec.kinds import Kind
from mddframes.codec.values import json_type

#: A problem record: the keys of ``REPORT_COLUMNS``, ``rank`` and ``at``.
Record = dict[str, Any]


def _rows_of(payload: Any, kind: Kind) -> tuple[str | None, list[Any] | None]:
    if not isinstance(payload, dict):
        return None, None
    for key in ROWS_KEYS[kind]:
        if key in payload and isinstance(payload[key], list):
            return key, payload[key]
    return None, None


class CheckContext:
    """What every stage reads: the new payload, what the service holds, the options.

    Parameters
    ----------
    new, current : dict
        The payload about to be sent, and the one it replaces.
    kind : {"table", "mapping"}
    allow_deletes : bool
        Allow rows (and undeclared columns) to disappear.
    object_id : optional
        The id the report names; default ``current["id"]``.
    origin, labels : sequence, optional
        As for :func:`check_payload`.
    offset : int, default 0
        The position of the first row in the whole table, when the payloads hold one
        batch of its rows: the place (``at``) of every record counts from it, so that
        the records of all batches sort as those of the whole table would.
    touched : list of int, optional
        The rows that are not the very objects of the current payload, when the
        caller knows them; default: found from ``origin``.
    """

    def __init__(
        self,
        new: Any,
        current: Any,
        *,
        kind: Kind = "table",
        allow_deletes: bool = False,
        object_id: Any = None,
        origin: Sequence[int | None] | None = None,
        labels: Sequence[Any] | None = None,
        offset: int = 0,
        touched: list[int] | None = None,
    ) -> None:
        self.new = new
        self.current = current or {}
        self.kind: Kind = kind
        self.allow_deletes = allow_deletes
        self.table = object_id if object_id is not None else self.current.get("id")
        self.current_key, current_rows = _rows_of(current, kind)
        self.current_rows: list[Any] = current_rows or []
        self.new_key, self.found_rows = _rows_of(new, kind)
        self.labels = labels
        self.offset = offset
        self._origin = origin
        self._touched = touched

    def problem(self, level: str, problem: str, at: tuple[int, ...], *, row: Any = None,
                column: Any = None, old: Any = None, new: Any = None) -> Record:  # fmt: skip
        """One problem record of this payload (the runner adds the stage's rank)."""
        return {"level": level, "table": self.table, "row": row, "column": column,
                "problem": problem, "old": old, "new": new, "at": at}  # fmt: skip

    @property
    def rows(self) -> list[Any]:
        """The new payload's rows (empty when it has none: the rows stage stops then)."""
        return self.found_rows if self.found_rows is not None else []

    @cached_property
    def columns(self) -> list[dict[str, Any]]:
        """The declared columns: the new payload's, else the current one's."""
        return declared_columns(self.new if declared_columns(self.new, self.kind)
                                else self.current, self.kind)  # fmt: skip

    @cached_property
    def declared(self) -> dict[str, dict[str, Any]]:
        """The declared columns by name."""
        return {c["name"]: c for c in self.columns}

    @cached_property
    def primary_key(self) -> list[str]:
        """The primary-key column names (empty: no key)."""
        return primary_key_columns(self.columns)

    @cached_property
    def origin(self) -> Sequence[int | None]:
        """For each new row, the position of the current row it comes from (or None)."""
        origin = self._origin
        if origin is None:
            origin = align_rows(self.current_rows, self.rows, primary_key=self.primary_key)
        if len(origin) != len(self.rows):
            raise ValueError(f"origin has {len(origin)} entries for {len(self.rows)} rows")
        return origin

    @cached_property
    def touched(self) -> list[int]:
        """The new rows that are not the very objects of the current payload (edited,
        new, or from a payload built elsewhere): only they can bring a new problem."""
        if self._touched is not None:
            return self._touched
        rows, current = self.rows, self.current_rows
        return [i for i, p in enumerate(self.origin) if p is None or rows[i] is not current[p]]

    def row_keys(self) -> Iterable[str]:
        """Every key of the new rows, in first-seen order."""
        return self._new_keys

    @cached_property
    def _new_keys(self) -> dict[str, None]:
        return dict.fromkeys(chain.from_iterable(self.rows))

    @cached_property
    def gone_columns(self) -> dict[str, None]:
        """The keys a kept row had and no new row has, in the current rows' order (a
        column lost; deleted rows are reported as such)."""
        kept_rows = (self.current_rows[p] for p in self.origin if p is not None)
        new_keys = set(self.row_keys())
        return {n: None for n in dict.fromkeys(chain.from_iterable(kept_rows)) if n not in new_keys}

    @cached_property
    def column_types(self) -> dict[str, set[str]]:
        """The JSON types each column of the current rows holds (nulls aside)."""
        types: dict[str, set[str]] = {}
        for row in self.current_rows:
            for name, value in row.items():
                if value is not None:
                    types.setdefault(name, set()).add(json_type(value))
        return types

    def label(self, i: int) -> Any:
        """What the report calls new row ``i``."""
        if self.labels is not None:
            return self.labels[i]
        p = self.origin[i]
        return p if p is not None else f"new[{i}]"

    def key_groups(self) -> Iterable[list[int]]:
        """The new rows sharing a primary key, each group in row order (groups of one
        included), the groups in the order of their first row."""
        groups: dict[Any, list[int]] = {}
        for i, row in enumerate(self.rows):
            key = key_of(row, self.primary_key)
            if key is not None:
                groups.setdefault(key, []).append(i)
        return groups.values()

    def key_values(self, i: int) -> list[Any]:
        """The primary-key values of new row ``i``."""
        return [self.rows[i].get(k) for k in self.primary_key]
