"""The rows of a streamed table or mapping document, parsed a batch at a time by orjson.

:class:`RowSplitter` is fed a document's chunks as they arrive. It finds the rows
array (``"data": [`` or ``"columnMappings": [``), then cuts the bytes that follow into
batches of whole rows of about :data:`BATCH_BYTES` and parses each batch with
:func:`mddframes.codec.fastjson.loads_strict_or_none` (orjson, exact fallback to
``json``), so a large document is never parsed, nor held as bytes, whole.

Where to cut needs no JSON tokenizer of its own. A cut goes at a ``}`` followed by
``,`` and ``{`` (whitespace allowed): such a place may be a true boundary between two
rows, or lie inside a string or a nested list of objects. The batch from the last
true boundary to the candidate parses as ``[...]`` only if the candidate is a true
boundary too (inside a string the batch ends in an open string; inside a nested
value it ends unbalanced), so a parse that succeeds proves the cut; a failed one moves
on to the next candidate. The rows end at a ``}`` followed by ``]``, proved the same
way. The envelope (everything but the rows) is then parsed with an empty rows array
and must hold the rows key exactly once, at the top, as an empty list: otherwise the
match was not the top-level key and the splitter reports :attr:`failed`.

Anything unusual (no rows key in the first :data:`MAX_HEAD` bytes, a row that is not
an object, too many failed cuts in a row) makes the splitter stop and report
:attr:`failed`; the caller then parses the kept document another way. It never gives
a wrong answer: every value comes from an exact decode of the very bytes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from mddframes.codec.fastjson import loads_strict_or_none

#: A batch is cut at the first candidate after this many bytes.
BATCH_BYTES = 1 << 20
#: The rows key must appear within this many bytes of the start.
MAX_HEAD = 16 << 20
#: Failed candidates tolerated per batch before the splitter gives up.
MAX_MISSES = 8

#: Where one row may end and the next begin (a candidate cut, see the module notes).
ROW_GAP = re.compile(rb"\}\s*,\s*\{")
_ROWS_END = re.compile(rb"\}\s*\]")
_OPEN_END = re.compile(rb"\s*\]")


class RowSplitter:
    """Feed a document's chunks; receive its rows in batches, then its envelope.

    Parameters
    ----------
    key : str
        The rows key (``"data"`` for a table, ``"columnMappings"`` for a mapping).
    on_rows : callable
        Called with each batch of rows (a list of dicts), in document order; with
        ``raw``, also with the batch's bytes (the rows as they are in the document,
        without the commas around the batch).
    raw : bool, default False
        Hand over each batch's bytes too (and keep :attr:`head` and :attr:`tail`).
    prove : callable, optional
        Proves a candidate batch instead of orjson: called with the batch's bytes
        (the rows without the commas around them), it returns None when they are not
        a sequence of whole row objects, else what ``on_rows`` is then called with.
        Not with ``raw``: ``prove`` is handed the bytes already.
    batch_bytes : int, optional
        Cut a batch at the first candidate after this many bytes; default
        :data:`BATCH_BYTES`.

    Attributes
    ----------
    failed : bool
        True once the splitter gave up (the caller must parse the document another
        way); batches already handed over are then to be discarded.
    envelope : dict or None
        After :meth:`finish` without failure: the document with an empty rows list.
    head : bytes
        With ``raw`` or ``prove``, once the rows began: the document's bytes up to and
        including the rows' ``[``.
    tail : bytes
        With ``raw`` or ``prove``, after :meth:`finish`: the bytes from the rows' ``]`` on.
    """

    def __init__(
        self,
        key: str,
        on_rows: Callable[..., None],
        *,
        raw: bool = False,
        prove: Callable[[bytes], Any] | None = None,
        batch_bytes: int | None = None,
    ) -> None:
        if raw and prove is not None:
            raise ValueError("raw and prove exclude each other: prove is handed the bytes")
        quoted = re.escape(b'"' + key.encode() + b'"')
        self._key_open = re.compile(quoted + rb"\s*:\s*\[")
        self._key_any = re.compile(quoted + rb"\s*:")
        self._key = key
        self._on_rows = on_rows
        self._head = bytearray()
        self._buffer = bytearray()
        self._in_rows = False
        self._batch_bytes = BATCH_BYTES if batch_bytes is None else batch_bytes
        self._scan_from = self._batch_bytes  # where the next cut candidate is looked for
        self._misses = 0
        self._raw = raw
        self._prove = prove
        self.failed = False
        self.envelope: dict[str, Any] | None = None
        self.head = b""
        self.tail = b""

    def fail(self) -> None:
        """Give up: drop what is buffered and ignore what follows."""
        self.failed = True
        self._head = bytearray()
        self._buffer = bytearray()

    def feed(self, chunk: bytes | memoryview) -> None:
        """Take the next piece of the document."""
        if self.failed:
            return
        if self._in_rows:
            self._buffer += chunk
            self._take()
            return
        self._head += chunk
        match = self._key_open.search(self._head)
        if match is None:
            if len(self._head) > MAX_HEAD:
                self.fail()
            return
        self._buffer = self._head[match.end() :]
        del self._head[match.end() :]
        if self._raw or self._prove is not None:
            self.head = bytes(self._head)
        self._in_rows = True
        self._take()

    def _take(self) -> None:
        """Parse and hand over whole batches while more than a batch is buffered."""
        while len(self._buffer) > self._scan_from:
            # positions only: a live match would pin the bytearray, which cannot shrink then
            gap = _span(ROW_GAP, self._buffer, self._scan_from)
            if gap is None:
                return  # no candidate yet: wait for more bytes
            proved = self._proof(gap[0] + 1)
            if proved is not None:
                del self._buffer[: gap[1] - 1]  # keep the next row's "{"
                self._scan_from, self._misses = self._batch_bytes, 0
                self._hand(*proved)
                continue
            self._misses += 1
            self._scan_from = gap[1]
            if self._misses > MAX_MISSES:
                self.fail()
                return

    def _proof(self, end: int) -> tuple[Any, bytes | None] | None:
        """What ``buffer[:end]`` hands over (and its bytes, with ``raw``) if it is a
        sequence of whole row objects, else None."""
        if self._prove is not None:
            proved = self._prove(bytes(self._buffer[:end]))
            return None if proved is None else (proved, None)
        rows = self._rows(end)
        if rows is None:
            return None
        return rows, bytes(self._buffer[:end]) if self._raw else None

    def _rows(self, end: int) -> list[dict[str, Any]] | None:
        """The rows of ``buffer[:end]`` if it is a sequence of whole row objects."""
        rows = loads_strict_or_none(b"[" + self._buffer[:end] + b"]")
        if type(rows) is not list or not all(type(row) is dict for row in rows):
            return None
        return rows

    def split(
        self, chunks: Iterable[bytes | memoryview], stop: Callable[[], bool] = lambda: False
    ) -> bool:
        """Feed a whole document and finish: True when every row and the envelope came out.

        Reading stops early, returning False, once the splitter fails or ``stop()`` is
        true (the caller has seen enough, e.g. a row that differs).
        """
        for chunk in chunks:
            self.feed(chunk)
            if self.failed or stop():
                return False
        self.finish()
        return not self.failed and self.envelope is not None

    def finish(self) -> None:
        """The document is complete: hand over the last rows and check the envelope."""
        if self.failed:
            return
        if not self._in_rows:
            self.fail()
            return
        close = None
        empty = _OPEN_END.match(self._buffer)
        if empty is not None:
            close = empty.end() - 1
        else:
            position = 0
            for _ in range(MAX_MISSES + 1):
                end = _span(_ROWS_END, self._buffer, position)
                if end is None:
                    break
                proved = self._proof(end[0] + 1)
                if proved is not None:
                    self._hand(*proved)
                    close = end[1] - 1
                    break
                position = end[1]
        if close is None:
            self.fail()
            return
        tail = self._buffer[close:]
        self._buffer = bytearray()
        envelope = loads_strict_or_none(self._head + tail)
        if (
            type(envelope) is not dict
            or envelope.get(self._key) != []
            or len(self._key_any.findall(self._head)) + len(self._key_any.findall(tail)) != 1
        ):
            self.fail()
            return
        self._head = bytearray()
        self.envelope = envelope
        if self._raw or self._prove is not None:
            self.tail = bytes(tail)

    def _hand(self, proved: Any, raw: bytes | None) -> None:
        if self._raw:
            self._on_rows(proved, raw)
        else:
            self._on_rows(proved)


def _span(pattern: re.Pattern[bytes], data: bytearray, start: int) -> tuple[int, int] | None:
    match = pattern.search(data, start)
    return None if match is None else match.span()
