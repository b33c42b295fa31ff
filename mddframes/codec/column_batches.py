"""Row objects split into per-column batches, each batch held as compactly as it can be.

The streamed reads (:mod:`mddframes.codec.stream`) turn rows into columns a batch at a
time, so that the row dicts never exist all at once; :func:`pack_batch` keeps each batch of a
column as numpy data (numbers, booleans) or as one joined string (text) where that gives
the values back exactly (Python objects cost 24 to 60 bytes each plus their text, packed
values 1 to 8, or their text), which is what keeps a read's peak memory near three
times the document. :func:`unpack` hands equal text values of a column back as one
object (:class:`_SharedText`), which is what keeps the frame itself small.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from itertools import chain, repeat
from typing import Any

import ijson
import numpy as np


class _Packed:
    """One batch of one column held compactly: numpy data and a mask of the Nones."""

    __slots__ = ("data", "missing")

    def __init__(self, data: np.ndarray, missing: np.ndarray | None) -> None:
        self.data = data
        self.missing = missing

    def values(self) -> list[Any]:
        values: list[Any] = self.data.tolist()
        if self.missing is None:
            return values
        return [
            None if gap else value for value, gap in zip(values, self.missing.tolist(), strict=True)
        ]


class _Joined:
    """One batch of a text column held as one string: the values joined by NUL (and a
    mask of the Nones). One ``str`` object of the batch's characters costs a fraction of
    its values' objects (about 50 bytes each, plus their text); ``split`` gives them
    back exactly."""

    __slots__ = ("text", "missing")

    def __init__(self, text: str, missing: np.ndarray | None) -> None:
        self.text = text
        self.missing = missing

    def values(self) -> list[Any]:
        values: list[Any] = self.text.split(_SEPARATOR)
        if self.missing is None:
            return values
        return [
            None if gap else value for value, gap in zip(values, self.missing.tolist(), strict=True)
        ]


_NONE = type(None)
_SEPARATOR = "\x00"


def pack_batch(values: list[Any]) -> list[Any] | _Packed | _Joined | int:
    """A batch of a column's values in the most compact form that gives them back exactly.

    An int (that many Nones), numpy data for ints within int64, floats and booleans
    (Python objects cost 24 to 60 bytes each, these 1 to 8), strings joined into one
    (:class:`_Joined`), or the list itself for anything else.
    """
    types = set(map(type, values))
    has_none = _NONE in types
    types.discard(_NONE)
    if not types:
        return len(values)
    if len(types) > 1:
        return values
    kind = types.pop()
    missing = (
        np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        if has_none
        else None
    )
    if kind is str:
        text = _SEPARATOR.join(["" if v is None else v for v in values] if has_none else values)
        if text.count(_SEPARATOR) != len(values) - 1:
            return values  # a value holds a NUL itself: the split would cut it
        return _Joined(text, missing)
    data: np.ndarray
    try:
        if kind is int:
            data = np.array([0 if v is None else v for v in values], dtype=np.int64)
        elif kind is float:
            data = np.array([0.0 if v is None else v for v in values], dtype=np.float64)
        elif kind is bool:
            data = np.array([v is True for v in values], dtype=bool)
        else:
            return values
    except OverflowError:  # beyond int64
        return values
    return _Packed(data, missing)


def packed_numbers(part: Any) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The numpy data and the mask of Nones of a batch :func:`pack_batch` packed as
    numbers or booleans; None for any other form of batch."""
    return (part.data, part.missing) if type(part) is _Packed else None


def _keep(values: list[Any]) -> list[Any]:
    return values


def unpack(parts: list[Any]) -> list[Any]:
    """A column's batches as one list of its values; equal text values share one object."""
    values: list[Any] = []
    shared = _SharedText()
    for part in parts:
        if type(part) is int:
            values.extend([None] * part)
        elif type(part) is list:
            values.extend(part)
        elif type(part) is _Joined:
            values.extend(shared.of(part.values()))
        else:
            values.extend(part.values())
    return values


#: Distinct values per value above which a column's text stops being shared: a column
#: of mostly distinct text would only fill the table.
_SHARED_AT_MOST = 0.5


class _SharedText:
    """Equal strings of one column made one object, while that pays.

    Metadata columns repeat a few values (types, codes, flags, names of a few owners);
    a ``str`` costs 50 to 80 bytes before its text, so one object per distinct value
    instead of one per cell takes a text column's objects from its row count down to
    its distinct count. Values are immutable: sharing them is invisible. The table is
    dropped for good once a column turns out mostly distinct.
    """

    __slots__ = ("_table", "_seen")

    def __init__(self) -> None:
        self._table: dict[str, str] | None = {}
        self._seen = 0

    def of(self, values: list[Any]) -> list[Any]:
        table = self._table
        if table is None:
            return values
        shared = list(map(table.setdefault, values, values))  # None gaps share None
        self._seen += len(values)
        if len(table) > _SHARED_AT_MOST * self._seen:
            self._table = None
        return shared


class _PackedColumns(dict[str, list[Any]]):
    """Column name -> packed batches; :meth:`pop` gives back the plain value list."""

    def pop(self, name: str, default: Any = None) -> Any:
        parts = super().pop(name, None)
        return default if parts is None else unpack(parts)

    def parts(self, name: str) -> list[Any] | None:
        """A column's packed batches as they are (None for a column no row has)."""
        return self.get(name)


class ColumnBatches:
    """Row objects split into per-column batches as they arrive.

    ijson appends each row to :attr:`rows` (a plain list: no Python call per row);
    :meth:`flush` moves them into :attr:`columns` batch by batch. ``None`` stands for
    a null and for an absent key alike, as in ``from_payload``; columns keep the order
    in which their keys are first seen.
    """

    def __init__(self, exact: bool, *, pack: bool | Callable[[list[Any]], Any] = True) -> None:
        self.rows = ijson.sendable_list()
        # a function of its own packs the batches of the Arrow route (arrow_columns)
        self._pack = pack if callable(pack) else pack_batch if pack else _keep
        self.columns = _PackedColumns()
        self.count = 0
        self.bad_row = False
        self._exact = exact
        self._filled: dict[str, int] = {}

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
            parts = self.columns.get(name)
            if parts is None:
                parts = self.columns[name] = [self.count] if self.count else []
            values = list(map(dict.get, batch, repeat(name, size)))  # faster than a listcomp
            parts.append(self._pack(_as_floats(values) if self._exact else values))
            self._filled[name] = self.count + size
        del batch
        self.count += size
        for name, filled in self._filled.items():
            if filled < self.count:
                self.columns[name].append(self.count - filled)
                self._filled[name] = self.count


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
