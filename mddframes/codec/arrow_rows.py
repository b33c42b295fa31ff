"""The rows of a streamed table parsed by a native engine: pyarrow's JSON reader.

:class:`ArrowRows` takes the batches :class:`~mddframes.codec.splitter.RowSplitter` cuts
(the rows' bytes as they are in the document) and parses each as newline-delimited JSON
in pyarrow's reader: every ``},{`` between two rows becomes ``}\\n{``. Inside a string
that makes a raw newline, which no JSON string may hold, and inside a nested value it
leaves a line unbalanced, so a wrong cut fails the parse instead of giving a wrong
value. Each column of each batch is kept as its Arrow array, and the frame's columns
are built from Arrow (:func:`arrow_frame`): no Python object per value is made for a
column of text, numbers or booleans.

Exactness: the splitter proved each batch valid JSON (strict: no ``NaN`` literal) and
hands over its rows decoded as ``json.loads`` decodes them; the frame must equal
``from_payload(json.loads(document))``. Where the reader departs from ``json.loads``, the
batch (or one column of it) takes those Python values instead of the reader's:

- an integer beyond int64 becomes a ``double`` silently: a batch with a run of 19 digits
  or more that is not a fraction (:func:`~mddframes.codec.fastjson.may_hold_big_int`);
- an int beside a float in one column of a batch becomes a ``double``: a batch whose
  ``double`` column reaches 2**53 (an int there may have lost digits) or holds a
  ``-0.0`` where the batch has a ``-0`` literal (``json.loads`` makes the int 0);
- nested values (objects, lists) come back as Arrow structs and lists, which lose key
  order and absent keys: that column of the batch;
- duplicate keys, a lone surrogate escape, text and numbers in one column: the reader
  raises, and the whole batch takes the Python values;
- text that looks like a date-time is parsed into a ``timestamp``: the batch is read
  again with those columns declared ``string`` to the reader (and later batches too).

One departure is left for the whole column to decide: a ``double`` column stands for
JSON numbers whose ints are not known, so it is taken only where the frame holds every
number of the column as a float anyway (:func:`float_column_allowed`); elsewhere (a
table's JSON or undeclared column) the document is read again by the route of Python
objects.

Everything else the reader gives is the value ``json.loads`` gives: strings, booleans,
int64 integers and correctly rounded doubles (pinned by ``tests/codec/test_arrow_rows.py``,
and by differential tests against the plain route).

pyarrow (a core dependency) is imported only when this route is taken.
"""

from __future__ import annotations

import importlib
import io
import re
from collections.abc import Iterator
from itertools import chain, repeat
from typing import Any

import numpy as np
import pandas as pd

from mddframes.codec.arrow_columns import date_column, read_pool
from mddframes.codec.dtypes import TIME_UNIT, UNDECLARED, type_family
from mddframes.codec.fastjson import loads_strict_or_none, may_hold_big_int, orjson_or_none
from mddframes.codec.frame import ColumnFinish, declared_type, frame_of_columns
from mddframes.codec.kinds import Kind
from mddframes.codec.row_layout import RowLayout, key_hashes, key_values
from mddframes.codec.splitter import ROW_GAP

#: Ints beyond this magnitude are not all exact in a ``double``.
_FLOAT_EXACT_INT = 2**53

# "-0" as an int (a false alarm in an exponent or in text only costs the batch its speed)
_NEGATIVE_ZERO_INT = re.compile(rb"-0(?![0-9.eE])")
_ROW_BREAK = b"}\n{"
# what the reader makes of JSON scalars that json.loads makes the same of
_SCALAR_KINDS = {"string": "str", "int64": "int", "double": "float", "bool": "bool"}


#: The declared families whose default array of one kind of values is that kind's
#: Arrow array as it is (``string``, ``Int64``, ``Float64``, ``boolean``), with no
#: misfit; ``None``: an unknown type or a table's undeclared key (text only), and a
#: mapping's inferred columns (every kind; told apart by ``data_type is None``).
_PLAIN_FAMILIES: dict[str, frozenset[str | None]] = {
    "str": frozenset({"string", "decimal", None}),
    "int": frozenset({"integer"}),
    "float": frozenset({"float"}),
    "bool": frozenset({"boolean"}),
}


def _plain(kind: str, data_type: Any) -> bool:
    if data_type is None:  # a mapping: the values decide, and one kind is its plain dtype
        return True
    return type_family(data_type) in _PLAIN_FAMILIES[kind]


def _pyarrow() -> Any:
    pa = importlib.import_module("pyarrow")
    importlib.import_module("pyarrow.compute")  # pa.compute is there once imported
    return pa


def _json() -> Any:
    return importlib.import_module("pyarrow.json")


class ArrowRows:
    """Batches of a document's rows parsed into Arrow columns, with exact fallbacks.

    Each batch comes with its rows as Python objects too (the splitter decoded them to
    prove its cut): a column the reader cannot give exactly in a batch (nested values)
    takes that batch's Python values instead, and a batch the reader refuses (or that
    a guard refuses) takes them for every column. So the engine never gives up on a
    document for one odd batch; :attr:`refusal` is set only where the frame cannot be
    built from these parts (:func:`arrow_frame`).

    Attributes
    ----------
    refusal : str or None
        Why the document must be read another way; None while it need not be.
    count : int
        The rows taken so far.
    python_batches : int
        The batches taken whole as Python values (for the route's report and tests).
    """

    def __init__(self) -> None:
        self.refusal: str | None = None
        self.count = 0
        self.python_batches = 0
        # name -> [(first row, Arrow array or list of values)], names in first-seen order
        self._parts: dict[str, list[tuple[int, Any]]] = {}
        self._text: set[str] = set()  # read as text: the reader took them for dates
        self._batch_bytes: list[int] = []  # each batch taken: its bytes, its rows
        self._batch_rows: list[int] = []

    def refuse(self, why: str) -> None:
        """Give up on the document: drop what was parsed, ignore what follows."""
        self.refusal = why
        self._parts = {}

    def take_batch(self, raw: bytes) -> int | None:
        """Take one candidate batch (the rows' bytes as the splitter cut them).

        Returns
        -------
        int or None
            The batch's rows when they are a valid sequence of JSON objects (the cut is
            proven), None when they are not (the splitter tries a later cut).

        Notes
        -----
        A flat batch (no bracket but each row's own brace: no nested value, and so no
        depth) is proven by the reader alone: a parse that succeeds with one row per
        ``},{`` between rows. Any other batch is decoded by orjson first (strict,
        within its depth limit: the reader, which recurses without one, never sees a
        deeper batch), and the reader then gives its scalar columns.
        """
        lines, gaps = ROW_GAP.subn(_ROW_BREAK, raw)
        count = gaps + 1
        flat = raw.count(b"{") == count and b"[" not in raw
        if flat and b"NaN" not in raw and b"Infinity" not in raw and not may_hold_big_int(raw):
            table = self._table(lines, raw, count)
            if table is not None:
                self._keep_table(table, None)
                self._taken(raw, count)
                return count
        rows = orjson_or_none(b"[" + raw + b"]")
        if rows is not None:  # within the depth limit: the reader may parse it
            if type(rows) is not list or not all(type(row) is dict for row in rows):
                return None
            table = self._table(lines, raw, len(rows)) if len(rows) == count else None
        else:
            rows = loads_rows(raw)
            if rows is None:
                return None
            table = None
        if table is None:
            self.python_batches += 1
            for name in dict.fromkeys(chain.from_iterable(rows)):
                self._keep(name, list(map(dict.get, rows, repeat(name, len(rows)))))
        else:
            self._keep_table(table, rows)
        self._taken(raw, len(rows))
        return len(rows)

    def _taken(self, raw: bytes, count: int) -> None:
        self.count += count
        self._batch_bytes.append(len(raw))
        self._batch_rows.append(count)

    def layout(self, head: bytes, tail: bytes, key_names: list[str]) -> RowLayout | None:
        """Where the batches taken lie in the document, with each row's key hash (before
        :func:`arrow_frame` takes the columns); None once refused.

        The key columns' values are those ``json.loads`` gives (the module notes), or
        floats equal to its ints (a ``double`` column), which hash as those ints do.
        """
        if self.refusal is not None:
            return None
        hashes = has_key = None
        if len(key_names) == 1:  # a part at a time: no Python object per row held
            hashes = np.zeros(self.count, dtype=np.int64)
            has_key = np.zeros(self.count, dtype=bool)
            at = 0
            for part in self._values(key_names[0]):
                stop = at + len(part)
                hashes[at:stop], has_key[at:stop] = key_hashes(part)
                at = stop
        elif key_names:
            columns = [list(chain.from_iterable(self._values(name))) for name in key_names]
            hashes, has_key = key_hashes(key_values(columns))
        return RowLayout(len(head), tuple(self._batch_bytes), tuple(self._batch_rows),
                         len(tail), hashes, has_key)  # fmt: skip

    def _values(self, name: str) -> Iterator[list[Any]]:
        """A column's values in every row taken, a part at a time (None where a row has
        none), its parts placed as :func:`column_chunks` places them for the frame."""
        for part in column_chunks(self._parts.get(name, []), self.count):
            if type(part) is int:
                yield [None] * part
            else:
                yield part if type(part) is list else part.to_pylist()

    def _keep_table(self, table: Any, rows: list[dict[str, Any]] | None) -> None:
        for name, column in zip(table.column_names, table.columns, strict=True):
            kind = _kind(column.type)
            if kind is None:  # nested values: this column of this batch as Python's
                assert rows is not None  # a flat batch has none
                self._keep(name, list(map(dict.get, rows, repeat(name, len(rows)))))
            elif kind == "null":
                self._parts.setdefault(name, [])
            else:
                for chunk in column.chunks:
                    self._keep(name, chunk)

    def _keep(self, name: str, part: Any) -> None:
        self._parts.setdefault(name, []).append((self.count, part))

    def _table(self, lines: bytes, raw: bytes, count: int) -> Any | None:
        """The batch as an Arrow table, or None when the reader cannot give it exactly."""
        pa = _pyarrow()
        newlines = b"\n" in raw or b"\r" in raw
        try:
            table = _read(lines, self._text, newlines)
            dates = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
            if dates:  # the reader took text for date-times: read it as text
                order = table.column_names
                self._text.update(dates)
                table = _read(lines, self._text, newlines).select(order)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeError):
            return None  # duplicate keys, a lone surrogate, text and numbers in a column
        if table.num_rows != count:
            return None
        floats = [column for column in table.columns if _kind(column.type) == "float"]
        if floats and _int_lost_in_floats(raw, floats):
            return None
        return table

    def names(self) -> list[str]:
        """The row keys in first-seen order."""
        return list(self._parts)

    def take(self, name: str) -> list[tuple[int, Any]]:
        """A column's parts with the row each starts at (dropped from here)."""
        return self._parts.pop(name, [])


def _int_lost_in_floats(raw: bytes, floats: list[Any]) -> bool:
    """Whether a ``double`` column may hold an int of ``raw`` that a float changes.

    An int beyond 2**53 makes a float of at least that magnitude, so a column whose
    values all stay below it holds none; ``-0`` becomes ``-0.0``, so a column holds one
    only if the batch has such a literal and the column a negative zero.
    """
    pa = _pyarrow()
    compute = pa.compute
    negative_zero = _NEGATIVE_ZERO_INT.search(raw) is not None
    for column in floats:
        largest = compute.max(compute.abs(column)).as_py()
        if largest is not None and largest >= _FLOAT_EXACT_INT:
            return True
        if negative_zero and _has_negative_zero(column):
            return True
    return False


def _has_negative_zero(column: Any) -> bool:
    data = column.to_numpy()  # nulls as NaN
    return bool(np.any((data == 0) & np.signbit(data)))


def loads_rows(raw: bytes) -> list[dict[str, Any]] | None:
    """The rows of a batch decoded as ``json.loads`` decodes them (strict), or None."""
    rows = loads_strict_or_none(b"[" + raw + b"]")
    if type(rows) is not list or not all(type(row) is dict for row in rows):
        return None
    return rows


def _read(lines: bytes, text: set[str], newlines: bool) -> Any:
    pa, json = _pyarrow(), _json()
    explicit = pa.schema([(name, pa.string()) for name in sorted(text)]) if text else None
    parse = json.ParseOptions(
        explicit_schema=explicit,
        unexpected_field_behavior="infer",
        newlines_in_values=newlines,
    )
    # one block: the rows are parsed whole, whatever their whitespace
    read = json.ReadOptions(block_size=len(lines) + 64, use_threads=False)
    # every explicit column comes back, all null where the batch has no such key: the
    # same values (a null and an absent key are both None), and its name was seen before
    return json.read_json(io.BytesIO(lines), read_options=read, parse_options=parse,
                          memory_pool=read_pool())  # fmt: skip


def _kind(arrow_type: Any) -> str | None:
    pa = _pyarrow()
    if pa.types.is_null(arrow_type):
        return "null"
    return _SCALAR_KINDS.get(str(arrow_type))


def float_column_allowed(data_type: Any, kind: str) -> bool:
    """Whether a column the reader made ``double`` may be taken as floats.

    Only where the frame holds every JSON number of the column as a float whatever its
    ints: any declared family but JSON (a misfit is inferred as ``Float64`` too), and a
    mapping's columns (inferred); not a table's JSON, undeclared or unknown-type
    column, which keeps each value as ``json.loads`` makes it.
    """
    family = type_family(data_type)
    if family is None:
        return kind == "mapping" and data_type is None
    return family != "json"


def column_chunks(chunks: list[tuple[int, Any]], n_rows: int) -> list[Any]:
    """A column's parts (Arrow arrays, lists of Python values) with ints (that many
    nulls) for the rows it has no value in."""
    parts: list[Any] = []
    at = 0
    for start, array in chunks:
        if start > at:
            parts.append(start - at)
        parts.append(array)
        at = start + len(array)
    if n_rows > at:
        parts.append(n_rows - at)
    return parts


def values_of(parts: list[Any]) -> list[Any]:
    """A column's values as ``json.loads`` makes them (``None`` for a null or a gap);
    equal strings of a text column one object where repeats pay (:func:`text_objects`)."""
    arrays = [part for part in parts if type(part) is not int]
    if arrays and all(type(part) is not list and _kind(part.type) == "str" for part in arrays):
        pa = _pyarrow()
        chunked = pa.chunked_array([
            pa.nulls(part, pa.string(), memory_pool=read_pool()) if type(part) is int else part
            for part in parts
        ], type=pa.string())  # fmt: skip
        listed: list[Any] = text_objects(chunked).tolist()
        return listed
    values: list[Any] = []
    for part in parts:
        if type(part) is int:
            values.extend([None] * part)
        elif type(part) is list:
            values.extend(part)
        else:
            values.extend(part.to_pylist())
    return values


#: Distinct values per value above which a text column's equal values are not made one
#: object: a column of mostly distinct text would only pay for the lookup.
SHARED_AT_MOST = 0.5


def text_objects(chunked: Any) -> np.ndarray:
    """A text column's values as a numpy ``object`` array of ``str`` (None for a null).

    Equal values are one object when the first chunk's values repeat enough
    (:data:`SHARED_AT_MOST`): metadata columns repeat a few values (types, codes,
    flags, owners), and a ``str`` costs 50 to 80 bytes before its text, so one object
    per distinct value instead of one per cell keeps a frame of text near the size of
    its payload. Values are immutable: sharing them is invisible.

    Parameters
    ----------
    chunked : pyarrow.ChunkedArray
        A ``string`` column.

    Returns
    -------
    numpy.ndarray
        One ``str`` or None per value.
    """
    pa = _pyarrow()
    first = next((chunk for chunk in chunked.chunks if len(chunk)), None)
    if first is None or pa.compute.count_distinct(first).as_py() > SHARED_AT_MOST * len(first):
        distinct: np.ndarray = chunked.to_numpy(zero_copy_only=False)
        return distinct
    encoded = chunked.dictionary_encode()
    uniques = encoded.chunks[0].dictionary
    table = np.empty(len(uniques) + 1, dtype=object)
    table[:-1] = uniques.to_numpy(zero_copy_only=False)  # the last entry: None, for nulls
    indices = pa.chunked_array([chunk.indices for chunk in encoded.chunks])
    shared: np.ndarray = table[indices.fill_null(len(uniques)).to_numpy()]
    return shared


def plain_chunked(parts: list[Any], data_type: Any) -> Any | None:
    """The column as one Arrow array of the type its default array is the plain image
    of, or None (the caller builds it from its values).

    A declared DATE/TIMESTAMP text column comes back parsed (as
    :func:`~mddframes.codec.arrow_columns.date_column` parses it); text, int64, double and
    boolean columns of one kind come back as they are where
    their default array is that kind's plain image, with no misfit to warn of
    (:data:`_PLAIN_FAMILIES`).
    """
    pa = _pyarrow()
    arrays = [part for part in parts if type(part) is not int]
    if any(type(part) is list for part in arrays):
        return None  # a batch of Python values
    kinds = {_kind(array.type) for array in arrays}
    if len(kinds) != 1:
        return None  # kinds mixed across batches, or no value at all
    kind = kinds.pop()
    assert kind is not None  # ArrowRows keeps nested columns as Python values
    family = type_family(data_type)
    if kind == "str" and family in ("date", "datetime"):
        plain_dates = _plain_iso_column(parts, family)
        if plain_dates is not None:
            return plain_dates
        return date_column(parts)
    if not _plain(kind, data_type):
        return None
    arrow_type = arrays[0].type
    return pa.chunked_array(
        [
            pa.nulls(part, type=arrow_type, memory_pool=read_pool()) if type(part) is int else part
            for part in parts
        ],
        type=arrow_type,
    )


# The one spelling of a date, and of a UTC date-time to the second, that Arrow's cast
# reads as the codec's parse does (both refuse a day that does not exist); years from
# 1000, which every parse holds in microseconds.
_PLAIN_DATE = r"^[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}$"
_PLAIN_UTC = r"^[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"


def _plain_iso_column(parts: list[Any], family: str) -> Any | None:
    """A declared DATE column of plain dates, or a date-time column of UTC date-times
    to the second, parsed by Arrow's cast; None for any other text (the codec's parse
    decides then, :func:`~mddframes.codec.arrow_columns.date_column`).

    The codec's parse makes of those spellings exactly these instants and dtypes
    (``datetime64[us]`` for dates, ``datetime64[us, UTC]`` for ``...Z``): the
    differential tests hold the two side by side.
    """
    pa = _pyarrow()
    compute = pa.compute
    chunked = pa.chunked_array(
        [pa.nulls(part, pa.string()) if type(part) is int else part for part in parts],
        type=pa.string(),
    )
    if chunked.null_count == len(chunked):
        return None  # no value: the declared type alone decides the dtype
    pattern = _PLAIN_DATE if family == "date" else _PLAIN_UTC
    if not compute.all(compute.match_substring_regex(chunked, pattern)).as_py():
        return None
    try:
        if family == "date":
            return chunked.cast(pa.date32()).cast(pa.timestamp(TIME_UNIT))
        return chunked.cast(pa.timestamp(TIME_UNIT, tz="UTC"))
    except pa.ArrowInvalid:  # a day that does not exist: the codec's parse keeps the text
        return None


class _ColumnParts(dict[str, list[Any]]):
    """Column name -> its parts (:func:`column_chunks`); :meth:`pop` gives its values."""

    def pop(self, name: str, default: Any = None) -> Any:
        parts = super().pop(name, None)
        return default if parts is None else values_of(parts)


def arrow_frame(
    rows: ArrowRows,
    declared: list[dict[str, Any]],
    kind: Kind = "table",
    *,
    finish: ColumnFinish | None = None,
    from_arrow: ColumnFinish | None = None,
) -> pd.DataFrame | None:
    """The frame of the rows :class:`ArrowRows` took, or None when it cannot vouch for it.

    Parameters
    ----------
    rows : ArrowRows
        Every batch of the document taken (its columns are consumed).
    declared : list of dict
        The declared columns (:func:`~mddframes.codec.frame.declared_columns`).
    kind : {"table", "mapping"}
        Which kind of payload the rows are of.
    finish : callable, optional
        As :func:`~mddframes.codec.frame.frame_of_columns`: called with each column
        built from its values.
    from_arrow : callable, optional
        Called with the name and the pyarrow ChunkedArray of each column whose default
        array is the plain image of its Arrow array (:func:`plain_chunked`); the frame
        holds what it returns. Without it every column is built from its values.

    Returns
    -------
    pandas.DataFrame or None
        The frame ``from_payload(json.loads(document), kind)`` gives, with the arrays
        ``finish`` and ``from_arrow`` return; None when the engine refused a batch, or
        a column it made ``double`` is one whose ints the frame must keep as ints
        (:func:`float_column_allowed`): the caller reads the document another way.
    """
    if rows.refusal is not None:
        return None
    data_types = {column["name"]: declared_type(column) for column in declared}
    untyped = UNDECLARED if kind == "table" else None
    columns = _ColumnParts()
    for name in rows.names():
        parts = column_chunks(rows.take(name), rows.count)
        data_type = data_types.get(name)
        if data_type is None:
            data_type = untyped
        floats = any(type(part) not in (int, list) and _kind(part.type) == "float"
                     for part in parts)  # fmt: skip
        if floats and not float_column_allowed(data_type, kind):
            rows.refuse(f"column {name!r}: numbers whose ints must stay ints")
            return None
        columns[name] = parts
    direct = None
    if from_arrow is not None:
        convert = from_arrow

        def direct(name: str, data_type: Any) -> Any:
            parts = dict.get(columns, name)
            chunked = None if parts is None else plain_chunked(parts, data_type)
            return None if chunked is None else convert(name, chunked)

    return frame_of_columns(columns, rows.count, declared, finish=finish, direct=direct,
                            kind=kind)  # fmt: skip
