"""The rows of a streamed table parsed by a native engine: pyarrow's JSON reader.

:class:`ArrowRows` takes the batches :class:`~mddframes.codec.splitter.RowSplitter` cuts
(the rows' bytes as they are in the document) and parses each as newline-delimited JSON
in pyarrow's reader: every ``},{`` between two rows becomes ``}\\n{``. Inside a string
that would make a raw newline, which no JSON string may hold, and inside a nested value
it would leave a line unbalanced, so a wrong cut fails the parse instead of giving a
wrong value. Each column of each batch is kept as its Arrow array; no Python object per
value is ever made on this route, and the frame's columns are built from Arrow
(:func:`arrow_frame`).

Exactness: the splitter proved each batch valid JSON (strict: no ``NaN`` literal) before
it is handed here, and the frame must equal ``from_payload(json.loads(document))``. The
reader departs from ``json.loads`` in ways it refuses (the batch, and with it the
document, then takes the route that decodes Python objects) or in ways guarded here:

- an integer beyond int64 becomes a ``double`` silently: a batch with a run of 19 digits
  or more that is not a fraction is refused (:func:`~mddframes.codec.fastjson.may_hold_big_int`);
- an int beside a float in one column of a batch becomes a ``double`` too, so a
  ``double`` column stands for JSON numbers whose ints are not known: it is taken only
  where the frame holds every number as a float anyway (any declared family but JSON,
  and a mapping's inferred columns), and only when no int of a batch with a ``double``
  column can lose anything as a float (16 digits or more: beyond 2**53; ``-0``, which
  the float makes ``-0.0`` where ``json.loads`` makes the int 0);
- text that looks like a date-time is parsed into a ``timestamp``: such a batch is read
  again with those columns declared ``string`` to the reader, and later batches too;
- nested values (objects, lists), duplicate keys, a lone surrogate escape, text and
  numbers in one column of a batch: the reader raises or makes a nested type, and the
  document is refused.

Everything else the reader gives is the value ``json.loads`` gives: strings, booleans,
int64 integers and correctly rounded doubles (the cases are pinned by
``tests/codec/test_arrow_rows.py`` and by the differential test against the plain route).

pyarrow (a core dependency) is imported only when this route is taken.
"""

from __future__ import annotations

import importlib
import io
import re
from typing import Any

import numpy as np
import pandas as pd

from mddframes.codec.arrow_columns import ArrowText, date_column, read_pool
from mddframes.codec.dtypes import UNDECLARED, type_family
from mddframes.codec.fastjson import may_hold_big_int, may_hold_long_int
from mddframes.codec.frame import ColumnFinish, declared_type, frame_of_columns
from mddframes.codec.kinds import Kind
from mddframes.codec.splitter import ROW_GAP

#: An integer of this many digits may be beyond 2**53 (9007199254740992): not exact
#: in a ``double``.
FLOAT_EXACT_DIGITS = 16

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
    """Batches of a document's rows parsed into Arrow columns, or the reason they are not.

    Attributes
    ----------
    refusal : str or None
        Why the engine cannot vouch for the document (then every batch is dropped and
        the caller reads it another way); None while every batch was taken.
    count : int
        The rows taken so far.
    """

    def __init__(self) -> None:
        self.refusal: str | None = None
        self.count = 0
        # name -> [(first row, array)], names in first-seen order
        self._chunks: dict[str, list[tuple[int, Any]]] = {}
        self._text: set[str] = set()  # read as text: the reader took them for dates

    def refuse(self, why: str) -> None:
        """Give up on the document: drop what was parsed, ignore what follows."""
        self.refusal = why
        self._chunks = {}

    def add(self, raw: bytes, count: int) -> None:
        """Parse one batch: the rows' bytes as the splitter cut them, ``count`` rows."""
        if self.refusal is not None:
            return
        if may_hold_big_int(raw):
            self.refuse("an integer of 19 digits or more (beyond int64?)")
            return
        pa = _pyarrow()
        try:
            table = _read(raw, self._text)
            dates = [f.name for f in table.schema if pa.types.is_timestamp(f.type)]
            if dates:  # the reader took text for date-times: read it as text
                order = table.column_names
                self._text.update(dates)
                table = _read(raw, self._text).select(order)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeError) as exc:
            self.refuse(f"pyarrow's JSON reader: {exc}")
            return
        if table.num_rows != count:
            self.refuse(f"{table.num_rows} rows where the batch holds {count}")
            return
        kinds = {field.name: _kind(field.type) for field in table.schema}
        odd = [name for name, kind in kinds.items() if kind is None]
        if odd:
            self.refuse(f"column {odd[0]!r} holds nested values or text among numbers")
            return
        if "float" in kinds.values() and (
            may_hold_long_int(raw, FLOAT_EXACT_DIGITS) or _NEGATIVE_ZERO_INT.search(raw)
        ):
            self.refuse("an integer beside floats that a float would not hold exactly")
            return
        for name, column in zip(table.column_names, table.columns, strict=True):
            if kinds[name] != "null":
                self._chunks.setdefault(name, []).extend(
                    (self.count, chunk) for chunk in column.chunks
                )
            else:
                self._chunks.setdefault(name, [])
        self.count += count

    def names(self) -> list[str]:
        """The row keys in first-seen order."""
        return list(self._chunks)

    def take(self, name: str) -> list[tuple[int, Any]]:
        """A column's arrays with the row each starts at (dropped from here)."""
        return self._chunks.pop(name, [])


def _read(raw: bytes, text: set[str]) -> Any:
    pa, json = _pyarrow(), _json()
    lines = ROW_GAP.sub(_ROW_BREAK, raw)
    explicit = pa.schema([(name, pa.string()) for name in sorted(text)]) if text else None
    parse = json.ParseOptions(
        explicit_schema=explicit,
        unexpected_field_behavior="infer",
        newlines_in_values=b"\n" in raw or b"\r" in raw,
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
    """A column's arrays with ints (that many nulls) for the rows it has no value in."""
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
    if arrays and all(_kind(array.type) == "str" for array in arrays):
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
    kinds = {_kind(array.type) for array in arrays}
    if len(kinds) != 1:
        return None  # kinds mixed across batches, or no value at all
    kind = kinds.pop()
    assert kind is not None  # ArrowRows refused every other type
    if kind == "str" and type_family(data_type) in ("date", "datetime"):
        return date_column([part if type(part) is int else ArrowText(part) for part in parts])
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
        floats = any(type(part) is not int and _kind(part.type) == "float" for part in parts)
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
