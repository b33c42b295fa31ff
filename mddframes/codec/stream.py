"""A large table or mapping payload -> frame, without the whole document in memory.

Fast path: the rows are cut into batches of about a megabyte as the chunks arrive and
each batch is decoded by orjson (:mod:`mddframes.codec.splitter`, exact fallback to
``json.loads`` per batch: big integers and lone surrogates come out as ``json.loads``
makes them). What follows describes the incremental parser, which takes over from the
kept bytes for any document the splitter cannot vouch for.

:func:`frame_from_chunks` reads a JSON document as a stream of byte chunks (an HTTP
body): each chunk goes into a compressor (the document is kept, compressed, for
the write-back context: :class:`~mddframes.codec.kept.KeptJson`) and into an incremental parser (ijson's
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

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import ijson
import pandas as pd

from mddframes.codec.align import primary_key_columns
from mddframes.codec.arrow_rows import ArrowRows, arrow_frame
from mddframes.codec.column_batches import ColumnBatches
from mddframes.codec.fastjson import nested_deeper
from mddframes.codec.frame import ROWS_KEYS, ColumnFinish, declared_columns, frame_of_columns
from mddframes.codec.kept import CHUNK_SIZE, Keeper, KeptJson
from mddframes.codec.kinds import Kind
from mddframes.codec.read_route import Parsed, Route, choose_route
from mddframes.codec.splitter import RowSplitter
from mddframes.codec.values import canonical_bytes, canonical_json

#: Rows split into columns at a time (bounds the row dicts alive at once).
BATCH_ROWS = 2048

# An escaped UTF-16 surrogate, high (D800-DBFF) or low (DC00-DFFF). A literal first
# byte lets the regex engine skip to each backslash; most documents have none.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_ESCAPE = 6  # bytes of one \uXXXX escape
_LOOK_AHEAD = 2 * _ESCAPE  # bytes a high escape needs to see its low partner


def _is_high(escape: bytes) -> bool:
    return escape[3:4] in (b"8", b"9", b"a", b"b", b"A", b"B")


class _SurrogateWatch:
    """Notices an unpaired surrogate escape anywhere in a stream of chunks.

    An escape right after a backslash also counts (it may be an escaped backslash
    followed by ``ud800`` text, or not): a false alarm only sends the document to
    ``json.loads``.
    """

    def __init__(self) -> None:
        self.found = False
        self._buffer = b""  # one byte of context, then the bytes not yet judged
        self._start = 0  # where the unjudged bytes begin in _buffer

    def feed(self, chunk: bytes, *, last: bool = False) -> None:
        if self.found:
            return
        buffer = self._buffer + chunk if self._buffer else chunk
        # an escape starting this close to the end may have its partner in the next chunk
        limit = len(buffer) if last else len(buffer) - _LOOK_AHEAD
        position = self._start
        while True:
            match = _SURROGATE_ESCAPE.search(buffer, position)
            if match is None or match.start() >= limit:
                break
            start = match.start()
            partner = _SURROGATE_ESCAPE.match(buffer, start + _ESCAPE)
            if (
                (start > 0 and buffer[start - 1] == 0x5C)  # a backslash before it
                or not _is_high(match.group())  # a low escape without its high one
                or partner is None
                or _is_high(partner.group())
            ):
                self.found = True
                return
            position = start + 2 * _ESCAPE
        keep = max(position, limit)
        if keep > 0:
            self._buffer, self._start = buffer[keep - 1 :], 1
        else:
            self._buffer, self._start = buffer, position


class _NeedsExact(Exception):
    """A number yajl cannot hold (an integer outside int64, a float beyond the double
    range): parse again with ``use_float=False``."""


class _Unsure(Exception):
    """Something only ``json.loads`` can vouch for."""


@contextmanager
def _parse_failures(exact: bool) -> Iterator[None]:
    """ijson's failures as this route's: a number too large for the fast parser asks for
    the exact one (unless this is it), anything else makes the route unsure."""
    try:
        yield
    except ijson.IncompleteJSONError as exc:
        if "overflow" in str(exc) and not exact:
            raise _NeedsExact from None
        raise _Unsure(str(exc)) from None
    except (ijson.JSONError, UnicodeDecodeError, ValueError) as exc:
        raise _Unsure(str(exc)) from None


def _parse(chunks: Iterable[bytes], kind: Kind, *, exact: bool, on_chunk: Any = None) -> Any:
    """Feed ``chunks`` to the row parser (and the metadata parser of a table).

    Returns the filled :class:`~mddframes.codec.column_batches.ColumnBatches` and the metadata objects seen.
    """
    prefix = ROWS_KEYS[kind][0] + ".item"
    columns = ColumnBatches(exact)
    options = {} if exact else {"use_float": True}
    rows_parser = ijson.items_coro(columns.rows, prefix, **options)
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
        with _parse_failures(exact):
            if metadata_parser is not None:
                metadata_parser.send(chunk)
                if metadata:
                    metadata_parser = None
            rows_parser.send(chunk)
        columns.flush(at_least=BATCH_ROWS)
        if columns.bad_row:
            raise _Unsure("a row that is not an object")
    with _parse_failures(exact):
        rows_parser.close()
        if metadata_parser is not None:
            metadata_parser.close()
    columns.flush()
    if columns.bad_row:
        raise _Unsure("a row that is not an object")
    return columns, list(metadata)


def frame_from_chunks(
    chunks: Iterable[bytes],
    kind: Kind = "table",
    *,
    finish: ColumnFinish | None = None,
    from_arrow: ColumnFinish | None = None,
    on_route: Callable[[Route], None] | None = None,
) -> tuple[pd.DataFrame | None, KeptJson]:
    """Parse a table or mapping document streamed as byte chunks into its frame.

    Parameters
    ----------
    chunks : iterable of bytes
        The document (UTF-8 JSON), in pieces of any size; read to the end.
    kind : {"table", "mapping"}
        Which kind of payload it is.
    finish : callable, optional
        Called with each column's name and array as it is built; the frame holds what
        it returns (see :func:`~mddframes.codec.frame.frame_of_columns`). Not called
        when no frame is returned.
    from_arrow : callable, optional
        The native route (:mod:`~mddframes.codec.arrow_rows`): called with the name and
        the pyarrow ChunkedArray of each column whose default array is the plain image
        of its Arrow array (text, numbers, booleans, declared dates), instead of
        ``finish``; the frame holds what it returns (the default backend's array of
        it, or an Arrow-backed one). Without it, every column is built from its values.
    on_route : callable, optional
        Called with the route that gave the result
        (:func:`~mddframes.codec.read_route.choose_route`: ``"arrow"``, ``"splitter"``,
        ``"ijson"``, or ``"kept"`` when no frame is returned).

    Returns
    -------
    (pandas.DataFrame or None, KeptJson)
        The frame, identical to ``from_payload(json.loads(document), kind)``, and the
        document kept compressed. The frame is None when the stream cannot vouch for
        the document (see the module notes): decode ``kept`` as a whole instead, which
        also raises the errors a malformed document deserves.

    Notes
    -----
    The rows are first cut into batches as the chunks arrive
    (:class:`~mddframes.codec.splitter.RowSplitter`) and each batch is parsed into
    Arrow columns by pyarrow's JSON reader (:class:`~mddframes.codec.arrow_rows.ArrowRows`,
    the ``"arrow"`` route). A document whose frame that route cannot vouch for is
    decoded again from the kept bytes, batch by batch, by orjson (``"splitter"``); one
    the splitter cannot vouch for is parsed again by the incremental parser (ijson), as
    described above.
    """
    frame, kept, route = _split_frame(chunks, kind, finish, from_arrow)
    if on_route is not None:
        on_route(route)
    return frame, kept


def _split_frame(
    chunks: Iterable[bytes],
    kind: Kind,
    finish: ColumnFinish | None,
    from_arrow: ColumnFinish | None,
) -> tuple[pd.DataFrame | None, KeptJson, Route]:
    """:func:`frame_from_chunks`, and the route taken."""
    keeper = Keeper()
    native = ArrowRows()
    found = 0

    def take(count: int) -> None:
        nonlocal found
        found += count

    splitter = RowSplitter(ROWS_KEYS[kind][0], take, prove=native.take_batch)
    first = True
    for chunk in chunks:
        keeper.add(chunk)
        if first and chunk:
            first = False
            if chunk.startswith(b"\xef\xbb\xbf") or b"\x00" in chunk[:4]:
                splitter.fail()  # a byte-order mark or UTF-16/32: json.loads decides
        splitter.feed(chunk)
    splitter.finish()
    kept = keeper.finish()
    envelope = None if splitter.failed else splitter.envelope
    split = Parsed(vouched=envelope is not None, rows=found)
    route = choose_route(splitter=split, arrow=native.refusal is None)
    if route == "arrow" and envelope is not None:
        declared = declared_columns(envelope, kind)
        layout = None  # (taken before the frame takes the columns)
        if kind == "table":
            layout = native.layout(splitter.head, splitter.tail, primary_key_columns(declared))
        frame = arrow_frame(native, declared, kind, finish=finish, from_arrow=from_arrow)
        if frame is not None:
            return frame, replace(kept, layout=layout), "arrow"
        route = choose_route(splitter=split, arrow=False)
    if route == "splitter" and envelope is not None:
        frame = _batched_frame(kept, kind, declared_columns(envelope, kind), finish)
        return frame, kept, "splitter"
    if route == "kept":
        return None, kept, "kept"
    parsed = _frame_from_kept(kept, kind, split, finish)
    return parsed, kept, "ijson" if parsed is not None else "kept"


def _batched_frame(
    kept: KeptJson, kind: Kind, declared: list[dict[str, Any]], finish: ColumnFinish | None
) -> pd.DataFrame:
    """The frame of a kept document the splitter vouched for, from Python objects: its
    batches decoded by orjson again and split into column lists."""
    columns = ColumnBatches(exact=False)

    def take(rows: list[dict[str, Any]]) -> None:
        columns.rows.extend(rows)
        columns.flush()

    RowSplitter(ROWS_KEYS[kind][0], take).split(kept.chunks())
    return frame_of_columns(columns.finish(), columns.count, declared, finish=finish, kind=kind)


def _frame_from_kept(
    kept: KeptJson, kind: Kind, split: Parsed, finish: ColumnFinish | None
) -> pd.DataFrame | None:
    """The frame of a kept document by the incremental parser (ijson), or None."""
    parsed = _ijson_parse(kept, kind)
    found = Parsed(vouched=False, rows=0) if parsed is None else Parsed(True, parsed[0].count)
    if choose_route(splitter=split, ijson=found) != "ijson" or parsed is None:
        return None
    columns, metadata = parsed
    declared = declared_columns({"metadata": metadata[-1]}, kind) if metadata else []
    return frame_of_columns(columns.finish(), columns.count, declared, finish=finish, kind=kind)


def _ijson_parse(kept: KeptJson, kind: Kind) -> tuple[ColumnBatches, list[Any]] | None:
    """ijson's columns and metadata objects of a kept document; None if it cannot vouch."""
    if nested_deeper(kept.chunks()):
        return None  # json.loads refuses it, with a ResponseFormatError for the caller
    watch = _SurrogateWatch()
    try:
        columns, metadata = _parse(kept.chunks(), kind, exact=False, on_chunk=watch.feed)
    except (_NeedsExact, _Unsure) as exc:
        if isinstance(exc, _Unsure) or _lone_surrogate(watch):
            return None
        try:
            columns, metadata = _parse(kept.chunks(), kind, exact=True)
        except (_NeedsExact, _Unsure):
            return None
    else:
        if _lone_surrogate(watch):
            return None
    return columns, metadata


def _lone_surrogate(watch: _SurrogateWatch) -> bool:
    watch.feed(b"", last=True)
    return watch.found


def same_document(kept: KeptJson, payload: Any, kind: Kind = "table") -> bool:
    """Whether a kept document holds exactly ``payload`` (equal canonical JSON).

    Checked a batch of rows at a time (:class:`~mddframes.codec.splitter.RowSplitter`),
    so the document is never parsed whole. True means the same content with the same
    types (key order aside), as ``canonical_json(loads(kept)) == canonical_json(payload)``
    says; False also when the document cannot be checked this way, so the caller then
    compares the whole documents.
    """
    key = ROWS_KEYS[kind][0]
    rows = payload.get(key) if isinstance(payload, dict) else None
    if not isinstance(rows, list):
        return False
    position = 0
    equal = True

    def compare(batch: list[dict[str, Any]]) -> None:
        nonlocal position, equal
        end = position + len(batch)
        if equal and (
            end > len(rows) or canonical_bytes(batch) != canonical_bytes(rows[position:end])
        ):
            equal = False
        position = end

    splitter = RowSplitter(key, compare)
    if not splitter.split(kept.chunks(), stop=lambda: not equal):
        return False
    if not equal or position != len(rows):  # the last batch came with finish()
        return False
    expected = {name: ([] if name == key else value) for name, value in payload.items()}
    return canonical_json(splitter.envelope) == canonical_json(expected)  # small: exact


def load_document(kept: KeptJson, kind: Kind = "table") -> Any:
    """A kept table or mapping document parsed whole: exactly ``json.loads`` of its bytes.

    The rows are parsed a batch at a time by orjson (:class:`RowSplitter`), faster
    than ``json.loads`` (docs/internals.md, Performance) and without orjson's transient
    memory of a whole document; a document the splitter cannot vouch for goes to ``json.loads``.
    """
    key = ROWS_KEYS[kind][0]
    rows: list[Any] = []
    splitter = RowSplitter(key, rows.extend)
    if not splitter.split(kept.chunks()) or splitter.envelope is None:
        del rows
        return kept.loads()
    document = splitter.envelope
    document[key] = rows  # the same key keeps its place in the key order
    return document


def content_digest(chunks: Iterable[bytes | memoryview], kind: Kind = "table") -> str | None:
    """SHA-256 of a document's canonical JSON (key order ignored), batch by batch.

    Equal digests mean equal content with equal types, as for two documents whose
    ``canonical_bytes`` are equal; None when the document cannot be digested this
    way (the splitter gave up, or a value needs the slow canonical encoding): the
    caller then compares the parsed documents.
    """
    key = ROWS_KEYS[kind][0]
    digest = hashlib.sha256()
    unsure = False
    first = True

    def add(batch: list[dict[str, Any]]) -> None:
        nonlocal unsure, first
        encoded = canonical_bytes(batch)
        if encoded.startswith(b"json:"):
            unsure = True
            return
        if not first:
            digest.update(b",")
        first = False
        digest.update(encoded[1:-1])

    splitter = RowSplitter(key, add)
    if not splitter.split(chunks, stop=lambda: unsure) or unsure:
        return None
    envelope = canonical_bytes(splitter.envelope)
    if envelope.startswith(b"json:"):
        return None
    digest.update(b"|" + envelope)
    return digest.hexdigest()


def byte_chunks(data: bytes, size: int = CHUNK_SIZE) -> Iterator[memoryview]:
    """``data`` in pieces of ``size`` bytes (views: no copies)."""
    view = memoryview(data)
    for start in range(0, len(view), size):
        yield view[start : start + size]
