"""A large table or mapping payload -> frame, without the whole document in memory.

:func:`frame_from_chunks` reads a JSON document as a stream of byte chunks (an HTTP
body): each chunk goes into a zlib compressor (the document is kept, compressed, for
the write-back context: :class:`KeptJson`) and into an incremental parser (ijson's
C backend) that hands over one row object at a time; rows are split into per-column
value lists in batches and dropped, so the rows never exist all at once as dicts
(which is what makes ``json.loads`` of a table cost about five times its size).
The frame is then built by the same column code as :func:`~mddframes.codec.from_payload`
and is identical to ``from_payload(json.loads(document))``.

Exactness: with ``use_float=True`` ijson gives the same values as ``json.loads``
(floats are parsed from the same text, strings and key order alike) except for
integers outside the int64 range and floats beyond the double range, which yajl
refuses: such a document is parsed a second time, from the kept bytes, with numbers
as ``int``/``Decimal`` and every ``Decimal`` turned into the ``float`` that
``json.loads`` makes of the same text.
yajl also turns an unpaired UTF-16 surrogate escape (``"\\ud800"``) into ``"?"``:
a document holding one is left to ``json.loads``, as is anything else the stream
cannot vouch for (no rows found, a row that is not an object, a byte-order mark,
invalid JSON): :func:`frame_from_chunks` then returns no frame and the caller decodes
the kept document as usual, so errors read exactly as for a small document.
Objects with duplicate keys in the envelope (RFC 8259: not interoperable) are not
supported by the stream: ``json.loads`` keeps the last, the stream sees each.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any

import ijson
import pandas as pd

from mddframes.codec.frame import ROWS_KEYS, Kind, declared_columns, frame_of_columns

#: Rows split into columns at a time (bounds the row dicts alive at once).
BATCH_ROWS = 2048
#: Size of the pieces :meth:`KeptJson.chunks` hands out.
CHUNK_SIZE = 256 * 1024
#: zlib level of the kept document: level 1 keeps a table at about a fifth of its
#: size at ~150 MB/s; higher levels gain little on JSON and cost three times more.
COMPRESS_LEVEL = 1

# An escaped UTF-16 surrogate that is not part of a pair (yajl would give "?").
_LONE_SURROGATE = re.compile(
    rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_LOOK_AHEAD = 12  # bytes a match needs after its start (escape + following escape)
_LOOK_BEHIND = 6  # bytes before it


@dataclass(frozen=True, eq=False)
class KeptJson:
    """A JSON document kept zlib-compressed, with the SHA-256 of its bytes.

    Attributes
    ----------
    compressed : bytes
        The document, compressed.
    size : int
        Its size in bytes, uncompressed.
    sha256 : str
        SHA-256 (hex) of the uncompressed bytes, exactly as received.
    """

    compressed: bytes
    size: int
    sha256: str

    def chunks(self, size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The document's bytes, decompressed piece by piece (about ``size`` each)."""
        inflater = zlib.decompressobj()
        step = max(1, size // 4)  # JSON compresses about 4 to 5 times at level 1
        for start in range(0, len(self.compressed), step):
            piece = inflater.decompress(self.compressed[start : start + step])
            if piece:
                yield piece
        rest = inflater.flush()
        if rest:
            yield rest

    def content(self) -> bytes:
        """The document's bytes (the whole of it, decompressed)."""
        return zlib.decompress(self.compressed)

    def loads(self) -> Any:
        """The document parsed by :func:`json.loads` (the whole of it, each call)."""
        return json.loads(self.content())

    def __repr__(self) -> str:
        return f"<KeptJson of {self.size:,} bytes, {len(self.compressed):,} compressed>"


class _Keeper:
    """Compresses and hashes the chunks of a document as they pass."""

    def __init__(self) -> None:
        self._compressor = zlib.compressobj(COMPRESS_LEVEL)
        self._hash = hashlib.sha256()
        self._parts: list[bytes] = []
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self._hash.update(chunk)
        self.size += len(chunk)
        part = self._compressor.compress(chunk)
        if part:
            self._parts.append(part)

    def finish(self) -> KeptJson:
        self._parts.append(self._compressor.flush())
        compressed = b"".join(self._parts)
        self._parts = []
        return KeptJson(compressed, self.size, self._hash.hexdigest())


class _SurrogateWatch:
    """Notices an unpaired surrogate escape anywhere in a stream of chunks."""

    def __init__(self) -> None:
        self.found = False
        self._buffer = b""
        self._checked = 0  # position in _buffer from where matches are still unchecked

    def feed(self, chunk: bytes, *, last: bool = False) -> None:
        if self.found:
            return
        buffer = self._buffer + chunk
        # a match starting this close to the end may need bytes that have not come yet
        limit = len(buffer) if last else len(buffer) - _LOOK_AHEAD
        for match in _LONE_SURROGATE.finditer(buffer, self._checked):
            if match.start() >= limit:
                break
            self.found = True
            return
        keep_from = max(0, max(limit, self._checked) - _LOOK_BEHIND)
        self._buffer = buffer[keep_from:]
        self._checked = max(limit, self._checked) - keep_from


class _Columns:
    """The target ijson sends row objects to: splits them into per-column value lists.

    ``None`` stands for a null and for an absent key alike, as in ``from_payload``;
    columns keep the order in which their keys are first seen.
    """

    def __init__(self, exact: bool) -> None:
        self.columns: dict[str, list[Any]] = {}
        self.rows = 0
        self.bad_row = False
        self._exact = exact
        self._batch: list[Any] = []

    def send(self, row: Any) -> None:
        if type(row) is not dict:
            self.bad_row = True  # from_payload names the row; leave it the error
            return
        self._batch.append(row)
        if len(self._batch) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        batch, self._batch = self._batch, []
        if not batch:
            return
        for name in dict.fromkeys(chain.from_iterable(batch)):
            column = self.columns.get(name)
            if column is None:
                column = self.columns[name] = [None] * self.rows
            values = [row.get(name) for row in batch]
            column.extend(_as_floats(values) if self._exact else values)
        self.rows += len(batch)
        for column in self.columns.values():
            if len(column) < self.rows:
                column.extend([None] * (self.rows - len(column)))


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


class _NeedsExact(Exception):
    """A number yajl cannot hold (an integer outside int64, a float beyond the double
    range): parse again with ``use_float=False``."""


class _Unsure(Exception):
    """Something only ``json.loads`` can vouch for."""


def _parse(chunks: Iterable[bytes], kind: Kind, *, exact: bool, on_chunk: Any = None) -> Any:
    """Feed ``chunks`` to the row parser (and the metadata parser of a table).

    Returns the filled :class:`_Columns` and the metadata objects seen.
    """
    prefix = ROWS_KEYS[kind][0] + ".item"
    columns = _Columns(exact)
    options = {} if exact else {"use_float": True}
    rows_parser = ijson.items_coro(columns, prefix, **options)
    metadata = ijson.sendable_list()
    # the metadata usually comes before the rows: once it is complete, stop parsing for it
    metadata_parser = ijson.items_coro(metadata, "metadata", **options) if kind == "table" else None
    first = True
    for chunk in chunks:
        if on_chunk is not None:
            on_chunk(chunk)
        if not chunk:
            continue
        if first:
            first = False
            if chunk.startswith(b"\xef\xbb\xbf") or b"\x00" in chunk[:4]:
                raise _Unsure("a byte-order mark or a UTF-16/32 encoding")
        try:
            if metadata_parser is not None:
                metadata_parser.send(chunk)
                if metadata:
                    metadata_parser = None
            rows_parser.send(chunk)
        except ijson.IncompleteJSONError as exc:
            if "overflow" in str(exc) and not exact:
                raise _NeedsExact from None
            raise _Unsure(str(exc)) from None
        except (ijson.JSONError, UnicodeDecodeError, ValueError) as exc:
            raise _Unsure(str(exc)) from None
        if columns.bad_row:
            raise _Unsure("a row that is not an object")
    try:
        rows_parser.close()
        if metadata_parser is not None:
            metadata_parser.close()
    except ijson.IncompleteJSONError as exc:
        if "overflow" in str(exc) and not exact:
            raise _NeedsExact from None
        raise _Unsure(str(exc)) from None
    except (ijson.JSONError, UnicodeDecodeError, ValueError) as exc:
        raise _Unsure(str(exc)) from None
    columns.flush()
    if columns.bad_row:
        raise _Unsure("a row that is not an object")
    return columns, list(metadata)


def frame_from_chunks(
    chunks: Iterable[bytes], kind: Kind = "table"
) -> tuple[pd.DataFrame | None, KeptJson]:
    """Parse a table or mapping document streamed as byte chunks into its frame.

    Parameters
    ----------
    chunks : iterable of bytes
        The document (UTF-8 JSON), in pieces of any size; read to the end.
    kind : {"table", "mapping"}
        Which kind of payload it is.

    Returns
    -------
    (pandas.DataFrame or None, KeptJson)
        The frame, identical to ``from_payload(json.loads(document), kind)``, and the
        document kept compressed. The frame is None when the stream cannot vouch for
        the document (see the module notes): decode ``kept`` as a whole instead, which
        also raises the errors a malformed document deserves.
    """
    keeper = _Keeper()
    watch = _SurrogateWatch()

    def keep(chunk: bytes) -> None:
        keeper.add(chunk)
        watch.feed(chunk)

    source = iter(chunks)
    try:
        columns, metadata = _parse(source, kind, exact=False, on_chunk=keep)
    except (_NeedsExact, _Unsure) as exc:
        for chunk in source:  # keep the rest of the document, unparsed
            keep(chunk)
        kept = keeper.finish()
        if isinstance(exc, _Unsure) or _lone_surrogate(watch):
            return None, kept
        try:
            columns, metadata = _parse(kept.chunks(), kind, exact=True)
        except (_NeedsExact, _Unsure):
            return None, kept
    else:
        kept = keeper.finish()
        if _lone_surrogate(watch):
            return None, kept
    if columns.rows < 2:
        # no rows, or one "row" that may be the value of a key "item" of an object
        # under "data" rather than an element of a list: json.loads tells
        return None, kept
    declared = declared_columns({"metadata": metadata[-1]}, kind) if metadata else []
    frame = frame_of_columns(columns.columns, columns.rows, declared)
    return frame, kept


def _lone_surrogate(watch: _SurrogateWatch) -> bool:
    watch.feed(b"", last=True)
    return watch.found
