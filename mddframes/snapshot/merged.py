"""One schema across a snapshot's files of a kind: a name of several types is JSON text.

A snapshot's ``tables/`` (and ``mappings/``) folder is one dataset for the engines
(``spark.read.option("mergeSchema", "true")``, DuckDB's ``union_by_name``, polars'
``diagonal_relaxed``): each name must have one Parquet type in every file. A column's
type follows its declared type (:data:`~mddframes.codec.dtypes.DTYPE_RULES`), so a name
declared with different types in different tables (``code``: STRING in some tables,
INTEGER in others), or whose values do not fit its declared type in one table, has
several. That cannot be known before the last table is read, so the snapshot writer
settles it once every file of the kind is written (:func:`one_type_per_name`):

**The rule.** A name whose files give it more than one (Parquet type, encoding) is
written as JSON text (``mddframes.encoding = json``: one canonical JSON document per
cell, the encoding of the long frames' ``object`` columns) in every file of its kind.
It is lossless: a string cell is its JSON string (``"A1"``), a number its JSON number
(``7``, ``1.5``), a boolean ``true``/``false``, a date or date-time its ISO 8601 text
as a JSON string in microseconds (``"2024-03-05T00:25:00.000000"``, ``Z`` appended in
a UTC column), a missing cell a Parquet null. Each field keeps its pandas dtype in its
metadata (``mddframes.dtype``), so ``read_snapshot`` gives each table back with the
dtype ``read_table`` gives it (:func:`~mddframes.snapshot.arrow_columns.arrow_to_frame`).

A rewritten file keeps its row groups (the manifest's ``row_group``/``offset`` stay
right), its envelopes and the payload digests of its objects (the content is the
same); it replaces the old one atomically and is journaled again with its new SHA-256,
so a rerun after a kill here keeps it or reads its objects again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mddframes.codec.values import canonical_cells
from mddframes.snapshot.arrow_columns import ENCODING_KEY, JSON_ENCODING
from mddframes.snapshot.bundles import ENVELOPES_KEY, Journal
from mddframes.snapshot.layout import ID_COLUMNS

__all__ = ["json_cells", "mixed_names", "one_type_per_name"]


def _encoding(field: pa.Field) -> str:
    encoding: bytes = (field.metadata or {}).get(ENCODING_KEY, b"")
    return encoding.decode()


def mixed_names(paths: Iterable[Path]) -> set[str]:
    """The names that have more than one (Arrow type, encoding) across these files.

    Parameters
    ----------
    paths : iterable of pathlib.Path
        Parquet files (only their footers are read).

    Returns
    -------
    set of str
        The names to write as JSON text in every file.
    """
    seen: dict[str, set[tuple[str, str]]] = {}
    for path in paths:
        for field in pq.read_schema(path):
            seen.setdefault(field.name, set()).add((str(field.type), _encoding(field)))
    return {name for name, types in seen.items() if len(types) > 1}


def json_cells(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column's cells as canonical JSON text (see the module docstring).

    Parameters
    ----------
    column : pyarrow.Array or pyarrow.ChunkedArray
        A column of a snapshot file that is not JSON text yet (strings, integers,
        floats, booleans, timestamps).

    Returns
    -------
    pyarrow.Array
        Arrow strings, a null where the cell is null.

    Examples
    --------
    >>> json_cells(pa.array(["A1", None])).to_pylist()
    ['"A1"', None]
    >>> json_cells(pa.array([7, None, 2**40])).to_pylist()
    ['7', None, '1099511627776']
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_timestamp(column.type):
        values: list[Any] = _iso_texts(column)
    else:
        values = column.to_pylist()
    return pa.array(canonical_cells(values), type=pa.string())


def _iso_texts(column: pa.Array) -> list[str | None]:
    """Timestamps as ISO 8601 text in microseconds (``Z`` for a column in a zone)."""
    # nulls filled first: an int64 column with nulls would come out as float64 (inexact)
    ticks = pc.fill_null(column.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    unit = column.type.unit
    stamps = ticks.astype(f"datetime64[{unit}]").astype("datetime64[us]")
    if column.type.tz is not None:
        texts = np.datetime_as_string(stamps, unit="us", timezone="UTC")
    else:
        texts = np.datetime_as_string(stamps, unit="us", timezone="naive")
    valid = column.is_valid().to_numpy(zero_copy_only=False)
    return [str(t) if ok else None for t, ok in zip(texts, valid, strict=True)]


def one_type_per_name(
    folder: Path, kind: str, entries: list[dict[str, Any]], journal: Journal
) -> list[str]:
    """Rewrite the files of a kind so that every name has one type in all of them.

    Parameters
    ----------
    folder : pathlib.Path
        The (partial) snapshot folder.
    kind : {"table", "mapping"}
        Which files.
    entries : list of dict
        The manifest entries of the objects written (``"file"`` set), to journal a
        rewritten file's objects again.
    journal : Journal
        The snapshot's journal.

    Returns
    -------
    list of str
        The files rewritten (relative paths), in order.
    """
    by_file: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if entry["kind"] == kind:
            by_file.setdefault(entry["file"], []).append(entry)
    names = mixed_names(folder / relative for relative in by_file)
    rewritten = []
    for relative, objects in by_file.items():
        path = folder / relative
        schema = pq.read_schema(path)
        todo = [
            n for n in schema.names if n in names and _encoding(schema.field(n)) != JSON_ENCODING
        ]
        if todo:
            _rewrite(path, todo, ID_COLUMNS[kind])
            journal.record(relative, objects)
            rewritten.append(relative)
    return rewritten


def _rewrite(path: Path, names: list[str], id_column: str) -> None:
    """The file with ``names`` as JSON text, row group by row group, replaced atomically."""
    source = pq.ParquetFile(path)
    schema = source.schema_arrow
    for name in names:
        old = schema.field(name)
        metadata = {**(old.metadata or {}), ENCODING_KEY: JSON_ENCODING.encode()}
        new = pa.field(name, pa.string(), nullable=True, metadata=metadata)
        schema = schema.set(schema.get_field_index(name), new)
    temporary = path.with_name(path.name + ".tmp")
    with pq.ParquetWriter(temporary, schema, write_statistics=[id_column]) as writer:
        for number in range(source.num_row_groups):
            table = source.read_row_group(number)
            for name in names:
                index = table.schema.get_field_index(name)
                table = table.set_column(index, schema.field(name), json_cells(table[name]))
            writer.write_table(table.replace_schema_metadata(schema.metadata),
                               row_group_size=max(table.num_rows, 1))  # fmt: skip
        envelopes = (source.metadata.metadata or {}).get(ENVELOPES_KEY)
        if envelopes is not None:
            writer.add_key_value_metadata({ENVELOPES_KEY: envelopes})
    source.close()
    os.replace(temporary, path)
