"""Which decode route reads one table answer: the rule, in one function.

A table answer becomes a frame by one of five routes:

- ``"whole"``: the body is read whole and decoded by ``fastjson.loads`` (orjson where it
  agrees with ``json.loads``), then :func:`~mddframes.codec.from_payload`.
- ``"arrow"``: the body is streamed; :class:`~mddframes.codec.splitter.RowSplitter`
  cuts the rows into batches as the chunks arrive (orjson proves each cut) and
  pyarrow's JSON reader parses each batch into Arrow columns
  (:mod:`~mddframes.codec.arrow_rows`), from which the frame is built.
- ``"splitter"``: the same batches decoded into Python objects by orjson (again, from
  the kept bytes) and split into column batches, for a document the native engine
  refused.
- ``"ijson"``: the kept (compressed) bytes of the streamed body are parsed again by
  ijson's incremental C parser.
- ``"kept"``: the kept bytes are decoded whole, as the ``"whole"`` route decodes a body,
  so that errors read exactly as for a small answer.

:func:`choose_route` is asked at each step with what is known so far (the size before
reading; then what the splitter made of the document; then what ijson made of it) and
names the route that gives the frame, or the next one to try.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The five ways one table answer is decoded (see the module notes).
Route = Literal["whole", "arrow", "splitter", "ijson", "kept"]

#: Table answers larger than this (or of unknown size) are parsed as a stream
#: (:mod:`mddframes.codec.stream`); smaller ones whole, which is faster on small documents.
STREAM_THRESHOLD = 1 << 20

#: The fewest rows a streamed parse must find to give the frame itself.
MIN_STREAMED_ROWS = 2


@dataclass(frozen=True)
class Parsed:
    """What one streamed parse (the splitter, or ijson) made of a whole document.

    Attributes
    ----------
    vouched : bool
        Whether the parse vouches that its rows and envelope are what ``json.loads``
        makes of the document.
    rows : int
        The rows it found.
    """

    vouched: bool
    rows: int


def choose_route(
    length: int | None = None,
    *,
    splitter: Parsed | None = None,
    arrow: bool = True,
    ijson: Parsed | None = None,
) -> Route:
    """The route that reads a table answer, given what is known of it so far.

    Parameters
    ----------
    length : int or None
        The body's size in bytes (``Content-Length``); None when unknown (no such
        header, or a ``Content-Encoding`` that makes the decoded size differ). Only the
        first step looks at it.
    splitter : Parsed, optional
        What the splitter made of the streamed body; None before it ran.
    arrow : bool, default True
        Whether the native engine (pyarrow's JSON reader) vouched for every batch the
        splitter cut, and for the columns it made of them.
    ijson : Parsed, optional
        What ijson made of the kept bytes; None before it ran.

    Returns
    -------
    {"whole", "arrow", "splitter", "ijson", "kept"}
        Before the splitter ran: ``"whole"`` or ``"splitter"`` (stream the body). After:
        the route whose result is the frame, or ``"ijson"`` when that is to be tried next.

    Notes
    -----
    The rule, in order:

    1. Size known and at most :data:`STREAM_THRESHOLD` (1 MiB): ``"whole"``. A small
       document decodes fastest in one call, and its parsed payload is small enough
       to keep as the write-back context. Larger or unknown size (a compressed or
       chunked answer): ``"splitter"``, so the document is never held as parsed JSON
       (peak memory within about four times its size, where a whole parse costs about
       seven) and the write-back context keeps it compressed.
    2. The splitter vouched and found at least :data:`MIN_STREAMED_ROWS` rows:
       ``"arrow"`` when the native engine vouched too (the fastest, and no Python object
       per value; docs/performance.md), else ``"splitter"`` (three to four times
       faster than ijson; the engine refuses nested cells, duplicate keys, integers of
       19 digits or more, ...: :mod:`~mddframes.codec.arrow_rows`). Vouched with fewer:
       ``"kept"``; no rows may mean no list of rows at all, which only the whole
       decode can tell (and a small answer costs little to decode whole).
    3. The splitter could not vouch (no top-level ``"data"`` list of objects, a row
       that is not an object, a NaN literal, a byte-order mark or a UTF-16/32
       encoding, invalid JSON): ``"ijson"``.
    4. ijson vouched and found at least :data:`MIN_STREAMED_ROWS` rows: ``"ijson"``
       (one row may be the value of a key ``"item"`` of an object under ``"data"``
       rather than an element of a list). Otherwise (a byte-order mark or UTF-16/32,
       invalid JSON, a lone UTF-16 surrogate escape that yajl would turn into ``"?"``,
       a number not even its exact pass can hold): ``"kept"``, whose errors are those
       of a small answer.

    The content type is not looked at: every route parses the body as JSON and names
    the content type only in the error of a body that is not JSON. Dialects change no
    rule: a dialect that spells the rows key otherwise (``"rows"``) is never vouched
    for by the streamed parsers, which look for ``"data"`` only, and so reads through
    ``"kept"``; the snake-case dialect keeps ``"data"`` (a user key, never renamed).
    """
    if splitter is None:
        small = length is not None and length <= STREAM_THRESHOLD
        return "whole" if small else "splitter"
    if splitter.vouched:
        if splitter.rows < MIN_STREAMED_ROWS:
            return "kept"
        return "arrow" if arrow else "splitter"
    if ijson is None:
        return "ijson"
    return "ijson" if ijson.vouched and ijson.rows >= MIN_STREAMED_ROWS else "kept"
