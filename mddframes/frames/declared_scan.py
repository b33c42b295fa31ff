"""The declared types of many tables before their rows: what ``iter_tables`` settles first.

Within one ``iter_tables`` run, a name declared with types whose dtypes differ
(:data:`~mddframes.codec.dtypes.DTYPE_RULES`: in DWH, ``code`` is STRING in some tables
and INTEGER in others) is ``object`` in every chunk, the first one included, whichever
tables share a chunk. The service has no call that lists tables' declarations without
their rows (``getTable`` is the only one; ``getRawData`` needs each table's element id),
so once the first chunk is read, :func:`mixed_declared_names` asks ``getTable`` for
every later id of the run (the first chunk's documents, just read, hold their own) and
reads each answer only up to its rows: the declarations come
first in the service's documents (``metadata`` before ``data``), and the body is closed
there, so the scan costs one request per table and a few kilobytes each, never the rows
(a document with its rows first is read through, parsed as events and dropped, never
held). A run of one chunk needs no scan (its frame is built from all its tables at once).

What the scan cannot see stays decided by the values, as it must be: a value that does
not fit its declared type (a ``BIGINT`` beyond 64 bits, with a ``DeclaredTypeWarning``),
a ``TIMESTAMP`` whose values carry no zone, an undeclared key: the column is ``object``
from the chunk that shows it on (the chunks before it had no such value).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

import ijson

from mddframes.bulk import iter_bulk
from mddframes.codec import depth
from mddframes.codec.dtypes import declared_dtype
from mddframes.codec.frame import declared_columns, declared_type
from mddframes.codec.kept import KeptJson
from mddframes.doc_sections import documented
from mddframes.errors import MddError

if TYPE_CHECKING:
    from mddframes.api import Api

__all__ = ["declarations_of", "mixed_declared_names"]

#: The top-level keys after which a table document holds no more declarations.
_ROWS_KEYS = frozenset({"data", "rows"})


class _Chunks:
    """A byte-chunk iterator as the file-like object ijson reads, keeping what it gave."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self.given: list[bytes] = []

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson's probe of bytes or text: nothing taken
            return b""
        chunk = next(self._chunks, b"")
        self.given.append(chunk)
        return chunk

    def whole(self) -> bytes:
        """Everything: what was given, then the rest."""
        return b"".join([*self.given, *self._chunks])


def declarations_of(chunks: Iterable[bytes]) -> list[dict[str, Any]]:
    """A table document's ``metadata.columns``, read from its first bytes only.

    Parameters
    ----------
    chunks : iterable of bytes
        The document, as it arrives.

    Returns
    -------
    list of dict
        The declared columns (objects with a string ``name``); empty when the document
        declares none. Reading stops at the rows once the declarations are read.

    Examples
    --------
    >>> declarations_of([b'{"metadata": {"columns": [{"name": "a", "dataType": "INT"}]},',
    ...                  b' "data": [{"a": 1}]}'])
    [{'name': 'a', 'dataType': 'INT'}]
    """
    source = _Chunks(iter(chunks))
    try:
        metadata = _metadata(ijson.parse(source, use_float=True))
    except ijson.JSONError:
        # what yajl refuses (an integer beyond 64 bits, ...) json.loads reads: the
        # whole document then, parsed as the table's read parses it
        return declared_columns(depth.loads(source.whole(), what="a table document"))
    columns = metadata.get("columns") if isinstance(metadata, dict) else None
    if not isinstance(columns, list):
        return []
    return [c for c in columns if isinstance(c, dict) and isinstance(c.get("name"), str)]


def _metadata(events: Iterator[tuple[str, str, Any]]) -> Any:
    """The value of the document's ``metadata`` key, the events read up to the rows."""
    metadata: Any = None
    for prefix, event, value in events:
        if prefix != "" or event != "map_key":
            continue
        if value == "metadata":
            builder, depth = ijson.ObjectBuilder(), 0
            for _prefix, inner_event, inner_value in events:
                builder.event(inner_event, inner_value)
                depth += inner_event in ("start_map", "start_array")
                depth -= inner_event in ("end_map", "end_array")
                if depth == 0:
                    break
            metadata = builder.value
        elif value in _ROWS_KEYS and metadata is not None:
            break
    return metadata


def _declarations(api: Api, table_id: str) -> list[dict[str, Any]] | None:
    try:
        with api.get_table_stream(table_id) as body:
            return declarations_of(body.chunks())
    except (MddError, ValueError):  # its own read, next, reports it
        return None


@documented
def mixed_declared_names(
    api: Api,
    ids: list[str],
    *,
    read: Iterable[KeptJson] = (),
    max_workers: int,
    progress: bool | None,
    desc: str,
) -> set[str]:
    """The names the tables of a run declare with types of different dtypes.

    Parameters
    ----------
    {api}
    ids : list of str
        The tables of the run not read yet: each one's declarations are asked for.
    read : iterable of KeptJson, optional
        The documents of the tables already read (the first chunk's): their
        declarations are read from these, with no request.
    max_workers : int
        Concurrent requests.
    progress : bool, optional
        Show a progress bar (as the run's own).
    desc : str
        The run's name, for the progress bar.

    Returns
    -------
    set of str
        Names whose declared types give different dtypes
        (:func:`~mddframes.codec.dtypes.declared_dtype`). A table whose answer fails
        here is left out: its own read, next, reports the failure.
    """
    dtypes: dict[str, set[str]] = {}
    outcomes = iter_bulk(lambda table_id: _declarations(api, table_id), ids, ahead=2 * max_workers,
                         max_workers=max_workers, progress=progress,
                         desc=f"{desc} (declared types)")  # fmt: skip
    scanned = (columns for _position, _table_id, columns, _error in outcomes)
    for columns in chain((declarations_of(kept.chunks()) for kept in read), scanned):
        for column in columns or ():
            dtypes.setdefault(column["name"], set()).add(declared_dtype(declared_type(column)))
    return {name for name, found in dtypes.items() if len(found) > 1}
