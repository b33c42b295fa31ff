"""Row objects split into per-column value lists, a batch of rows at a time.

The streamed reads that decode Python objects (:mod:`mddframes.codec.stream`: ijson's
incremental parse, and the splitter's orjson batches for a document the native engine
stands aside from) turn rows into columns a batch at a time, so that the row dicts
never exist all at once.
"""

from __future__ import annotations

import decimal
from itertools import chain, repeat
from typing import Any

import ijson


class ColumnBatches:
    """Row objects split into per-column value lists as they arrive.

    ijson appends each row to :attr:`rows` (a plain list: no Python call per row);
    :meth:`flush` moves them into :attr:`columns` batch by batch. ``None`` stands for
    a null and for an absent key alike, as in ``from_payload``; columns keep the order
    in which their keys are first seen.
    """

    def __init__(self, exact: bool) -> None:
        self.rows = ijson.sendable_list()
        self.columns: dict[str, list[Any]] = {}
        self.count = 0
        self.bad_row = False
        self._exact = exact

    def flush(self, at_least: int = 1) -> None:
        if len(self.rows) < at_least:
            return
        batch = self.rows[:]
        del self.rows[:]
        if set(map(type, batch)) != {dict}:
            self.bad_row = True  # from_payload names the row; leave it the error
            return
        size = len(batch)
        for name in dict.fromkeys(chain.from_iterable(batch)):
            values = self.columns.get(name)
            if values is None:
                values = self.columns[name] = [None] * self.count
            elif len(values) < self.count:  # rows of earlier batches without the key
                values.extend([None] * (self.count - len(values)))
            batch_values = list(map(dict.get, batch, repeat(name, size)))  # faster than a listcomp
            values.extend(_as_floats(batch_values) if self._exact else batch_values)
        del batch
        self.count += size

    def finish(self) -> dict[str, list[Any]]:
        """The columns, each with one value per row (None where a row lacks the key)."""
        for values in self.columns.values():
            if len(values) < self.count:
                values.extend([None] * (self.count - len(values)))
        return self.columns


def _as_floats(values: list[Any]) -> list[Any]:
    """Values with every ``Decimal`` (nested ones too) turned into the float
    ``json.loads`` makes of the same text."""
    types = set(map(type, values))
    if not types & {decimal.Decimal, dict, list}:
        return values
    return [_float_value(v) for v in values]


def _float_value(value: Any) -> Any:
    kind = type(value)
    if kind is decimal.Decimal:
        return float(value)  # from the Decimal's own text: the same correctly rounded float
    if kind is dict:
        return {k: _float_value(v) for k, v in value.items()}
    if kind is list:
        return [_float_value(v) for v in value]
    return value
