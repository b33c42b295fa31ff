"""The payload of an edited large table, built batch by batch from the kept original.

:func:`overlay_document` does what :func:`~mddframes.codec.overlay`,
:func:`~mddframes.codec.check_payload` and :func:`~mddframes.codec.diff_payloads` do
for a whole table, without ever holding the table parsed: the original document (kept
compressed by the read) is cut into batches of rows by
:class:`~mddframes.codec.splitter.RowSplitter`. A batch where the frame holds no
change goes into the new document as the very bytes it was read as; a batch with a
change is overlaid, checked and diffed on its own (the same functions, on a payload of
that batch) and written anew. Where a batch may hold a change comes from the frame's
:class:`~mddframes.codec.fingerprint.FrameFingerprint` (JSON ``object`` columns
included), and from a comparison by content for a column no digest covers.

Each batch is checked by the stages of the completeness check
(:data:`mddframes.codec.check.STAGES`) that look at rows one by one; the stages that
need the whole table (duplicate primary keys, columns not declared in the metadata)
run once at the end, on what every batch left behind: its keys, and the columns the
read saw. The outcome is the payload, diff and report the whole-document path gives:
the report sorts its lines by stage and place, whoever made them.

It covers edits of cells of a frame that lines up with its read (the write's rule,
:func:`~mddframes.writing.route.choose_write_route`, has said so before it is called);
what only the document shows raises :class:`StreamUnsupported` before anything is sent,
and the caller takes the whole-document path. Those late exits are listed in the rule's
docstring, each under the words its exception starts with.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import orjson
import pandas as pd

from mddframes.codec import check
from mddframes.codec import splitter as splitter_module
from mddframes.codec.align import key_of, primary_key_columns
from mddframes.codec.check import CheckReport, run_stages
from mddframes.codec.check_context import CheckContext, Record
from mddframes.codec.diff import Diff, concat_changes, diff_payloads
from mddframes.codec.fastjson import loads_strict_or_none
from mddframes.codec.fingerprint import FrameFingerprint, rows_in
from mddframes.codec.frame import ROWS_KEYS, declared_columns, frame_of_arrays
from mddframes.codec.frame_overlay import overlay
from mddframes.codec.kept import KeptJson
from mddframes.codec.row_layout import RowLayout, cut, key_hash, key_hashes, key_values
from mddframes.codec.splitter import RowSplitter
from mddframes.codec.values import (
    ABSENT,
    canonical_bytes,
    is_missing_json,
    same_json_column,
)

_KEY = ROWS_KEYS["table"][0]

#: The overlay cuts batches of a quarter of a read's: each batch is held parsed while it
#: is compared, beside the new document's pieces, and the batch with the edit is
#: overlaid and checked whole (peak memory and time of a one-cell write: figures in
#: docs/performance.md).
OVERLAY_BATCH_SHARE = 4

#: The late exit of a kept document that does not line up with the read's fingerprint.
NOT_AS_READ = "the document does not hold the rows the frame was read from"
#: The late exit of a kept document that its layout does not describe.
NOT_ITS_LAYOUT = "the document does not divide as its layout says"


class StreamUnsupported(Exception):
    """This edit or this document needs the whole-document path (the message says why)."""


@dataclass(frozen=True)
class RowBatches:
    """A table document held as the bytes of its parts, never joined: it is sent, hashed
    and compressed piece by piece (:meth:`pieces`).

    Attributes
    ----------
    head : bytes
        Up to and including the rows' ``[``.
    batches : tuple of bytes
        The rows, a batch at a time, each without the comma before it (the bytes they
        were read as, or written anew).
    batch_rows : tuple of int
        The rows of each batch (a row is found by parsing only the batch that holds it).
    tail : bytes
        From the rows' ``]`` to the end.
    """

    head: bytes
    batches: tuple[bytes, ...]
    batch_rows: tuple[int, ...]
    tail: bytes

    def pieces(self) -> tuple[bytes, ...]:
        """The document's bytes in order: the head, the batches and their commas, the tail."""
        pieces = [self.head]
        for i, batch in enumerate(self.batches):
            pieces.extend((b",", batch) if i else (batch,))
        pieces.append(self.tail)
        return tuple(pieces)


@dataclass(frozen=True)
class StreamedPayload:
    """The outcome of :func:`overlay_document`.

    Attributes
    ----------
    document : RowBatches
        The new document (UTF-8 JSON); no batches when ``report`` has errors.
    diff : Diff
        What it changes.
    report : CheckReport
        Its completeness check.
    fingerprint : FrameFingerprint or None
        The fingerprint of the frame written (taken while looking for its edits): the
        context of the next write of the same frame.
    layout : RowLayout or None
        Where the new document's batches lie, with each row's key hash (None when
        ``report`` has errors): the next write cuts its kept copy there.
    """

    document: RowBatches
    diff: Diff
    report: CheckReport
    fingerprint: FrameFingerprint | None = None
    layout: RowLayout | None = None


def overlay_document(
    kept: KeptJson,
    frame: pd.DataFrame,
    fingerprint: FrameFingerprint,
    *,
    allow_deletes: bool = False,
    object_id: Any = None,
    convert: Callable[[Any], Any] | None = None,
) -> StreamedPayload:
    """The new document of an edited table frame, from the kept document it was read from.

    Parameters
    ----------
    kept : KeptJson
        The document the frame was read from (a streamed read's context).
    frame : pandas.DataFrame
        The frame, edited in its cells only.
    fingerprint : FrameFingerprint
        The fingerprint the read took of the frame.
    allow_deletes : bool, default False
        As for :func:`~mddframes.codec.check_payload`.
    object_id : optional
        The table id named in the report.
    convert : callable, optional
        Turns a slice of one of ``frame``'s column arrays into the array the read made
        (:func:`~mddframes.frames.backends.default_slice`: an Arrow-backed frame is
        written as its numpy-nullable form, converting only the block hashes' slices
        and the batches that hold a change).

    Returns
    -------
    StreamedPayload

    Raises
    ------
    ValueError
        ``frame`` does not fit ``fingerprint`` (rows or columns added, deleted or
        moved): the write's rule sends such a frame to the parsed route first.
    StreamUnsupported
        The whole-document path must do this write (see the module notes).
    """
    if not fingerprint.fits(frame):
        # a precondition (the rule's step 7), not an exit: never silently a wrong overlay
        raise ValueError("overlay_document needs a frame that lines up with its read's fingerprint")
    builder = _Builder(kept, frame, fingerprint, allow_deletes, object_id, convert)
    layout = kept.layout
    if layout is not None and layout.fits(kept.size, fingerprint.n_rows):
        head, tail, envelope = _take_layout(builder, kept, layout)
    else:
        head, tail, envelope = _take_split(builder, kept)
    if builder.position != fingerprint.n_rows:
        raise StreamUnsupported(f"{NOT_AS_READ} (fewer rows)")
    if builder.envelope is None:
        builder.envelope = envelope
    elif canonical_bytes(builder.envelope) != canonical_bytes(envelope):
        raise StreamUnsupported("the document has attributes after its rows")
    return builder.result(head, tail)


def _take_split(builder: _Builder, kept: KeptJson) -> tuple[bytes, bytes, dict[str, Any] | None]:
    """Hand the builder the batches of the kept document, cut by the
    splitter (which proves each cut by parsing the batch); its head, tail and envelope."""
    splitter = RowSplitter(_KEY, lambda rows, raw: builder.take(raw, rows), raw=True,
                           batch_bytes=_overlay_batch_bytes())  # fmt: skip
    builder.head = lambda: splitter.head
    if not splitter.split(kept.chunks()):
        raise StreamUnsupported("the document cannot be cut into batches of rows")
    return splitter.head, splitter.tail, splitter.envelope


def _take_layout(
    builder: _Builder, kept: KeptJson, layout: RowLayout
) -> tuple[bytes, bytes, dict[str, Any] | None]:
    """Hand the builder the batches of a kept document cut where its layout says (a
    batch that may hold no change is not parsed); its head, tail and envelope."""
    pieces = cut(kept.chunks(), layout)

    def piece() -> bytes:  # a layout is made with its document: never wrong, but exact
        try:
            return next(pieces)
        except ValueError as wrong:
            raise StreamUnsupported(f"{NOT_ITS_LAYOUT}: {wrong}") from None

    head = piece()
    builder.head = lambda: head
    builder._begin()
    for rows in layout.batch_rows:
        builder.take_known(piece(), rows, layout)
    tail = piece()
    envelope = loads_strict_or_none(head + tail)
    return head, tail, envelope if type(envelope) is dict else None


def _overlay_batch_bytes() -> int:
    # (looked up when called: tests make the splitter's batches small)
    return splitter_module.BATCH_BYTES // OVERLAY_BATCH_SHARE


#: What a batch of rows is wrapped in to be cut again by the splitter.
_OPENING = b'{"' + _KEY.encode() + b'":['


def _as_read(array: Any) -> Any:
    # an object column as an ndarray: frame_of_arrays keeps those object (pandas 3
    # would make a column of strings ``str``)
    return np.asarray(array) if array.dtype == object else array


class _Builder:
    """Takes the batches of the original one after the other (see :func:`overlay_document`)."""

    def __init__(
        self, kept: KeptJson, frame: pd.DataFrame, fingerprint: FrameFingerprint,
        allow_deletes: bool, object_id: Any, convert: Callable[[Any], Any] | None = None,
    ) -> None:  # fmt: skip
        self.kept = kept
        self.frame = frame
        self.fingerprint = fingerprint
        self.allow_deletes = allow_deletes
        self.object_id = object_id
        self.convert = convert
        self.candidates, self.frame_print = fingerprint.survey(frame, convert)
        self.by_content = {
            name: frame[name].to_numpy(dtype=object)
            for name in fingerprint.columns
            if fingerprint.digests[name] is None
        }
        self.templates: dict[str, Any] = {
            name: ABSENT for name, first in fingerprint.first_value.items() if first < 0
        }
        self.head: Callable[[], bytes] = lambda: b""
        self.envelope: dict[str, Any] | None = None
        self.declared: dict[str, dict[str, Any]] = {}
        self.keys: _PrimaryKeys | None = None
        self.position = 0
        self.pieces: list[bytes] = []
        self.piece_rows: list[int] = []
        self.records: list[Record] = []
        self.changes: list[Diff] = []

    def take_known(self, raw: bytes, count: int, layout: RowLayout) -> None:
        """The next batch of a document cut by its layout: its bytes and its rows' count
        (parsed only when :meth:`_needs_rows`; :meth:`_begin` was called after the head)."""
        start, stop = self.position, self.position + count
        if not self._needs_rows(start, stop, layout):
            self.position = stop  # (the layout fits: its rows are the fingerprint's)
            self._add(raw, count)
            if self.keys is not None:
                self.keys.add_known(layout, start, stop)
            return
        if len(raw) > 2 * _overlay_batch_bytes():  # a read's batch (four times larger)
            self._take_in_parts(raw, stop)
            return
        rows = loads_strict_or_none(b"[" + raw + b"]")
        if type(rows) is not list or len(rows) != count or not all(type(r) is dict for r in rows):
            raise StreamUnsupported(f"{NOT_ITS_LAYOUT}: batch {len(self.pieces)} is not its rows")
        self.take(raw, rows)

    def _take_in_parts(self, raw: bytes, stop: int) -> None:
        """A large batch handed over in overlay-sized parts, cut (and each cut proven)
        by the splitter: no more rows are held parsed at once than :func:`_take_split`
        holds."""
        splitter = RowSplitter(_KEY, lambda rows, part: self.take(part, rows), raw=True,
                               batch_bytes=_overlay_batch_bytes())  # fmt: skip
        if not splitter.split((_OPENING, raw, b"]}")) or self.position != stop:
            raise StreamUnsupported(f"{NOT_ITS_LAYOUT}: batch {len(self.pieces)} is not its rows")

    def _needs_rows(self, start: int, stop: int, layout: RowLayout) -> bool:
        """Whether rows ``start:stop`` must be parsed: the fingerprint says they may have
        changed, a column is compared by content, a column's first value is there, or
        the layout has no key hashes for a table with a primary key."""
        if self.by_content or (self.keys is not None and layout.key_hashes is None):
            return True
        if any(start <= first < stop and name not in self.templates
               for name, first in self.fingerprint.first_value.items()):  # fmt: skip
            return True
        return bool(self._may_change(start, stop))

    def _may_change(self, start: int, stop: int) -> list[str]:
        """The columns whose fingerprint says rows ``start:stop`` may have changed."""
        return [name for name, rows in self.candidates.items() if len(rows_in(rows, start, stop))]

    def take(self, raw: bytes, rows: list[dict[str, Any]]) -> None:
        """The next batch: its bytes and its rows (the splitter parsed them)."""
        count = len(rows)
        start, stop = self.position, self.position + count
        self.position = stop
        if self.envelope is None:
            self._begin()
        if stop > self.fingerprint.n_rows:
            raise StreamUnsupported(f"{NOT_AS_READ} (more rows)")
        columns = self._may_change(start, stop)
        self._learn_templates(rows, start, stop)
        columns += [name for name, values in self.by_content.items()
                    if not same_json_column(_column(rows, name), values[start:stop])]  # fmt: skip
        if not columns:
            self._add(raw, count)
            if self.keys is not None:
                self.keys.add(rows, start, ())
            return
        late = [name for name in columns if name not in self.templates]
        if late:
            raise StreamUnsupported(f"a cell changed before the first value of column {late[0]!r}")
        self._overlay(rows, start, stop, raw, columns)

    def _begin(self) -> None:
        envelope = loads_strict_or_none(self.head() + b"]}")
        if type(envelope) is not dict or envelope.get(_KEY) != []:
            raise StreamUnsupported("the attributes before the rows are not a JSON object")
        self.envelope = envelope
        declared = declared_columns(envelope, "table")
        self.declared = {c["name"]: c for c in declared}
        primary_key = primary_key_columns(declared)
        self.keys = _PrimaryKeys(primary_key, self.fingerprint.n_rows) if primary_key else None

    def _learn_templates(self, rows: list[dict[str, Any]], start: int, stop: int) -> None:
        for name, first in self.fingerprint.first_value.items():
            if start <= first < stop and name not in self.templates:
                value = rows[first - start].get(name, ABSENT)
                if is_missing_json(value):
                    raise StreamUnsupported(f"{NOT_AS_READ} (column {name!r} lost its first value)")
                self.templates[name] = value

    def _overlay(
        self, rows: list[dict[str, Any]], start: int, stop: int, raw: bytes, columns: list[str]
    ) -> None:
        """Overlay rows ``start:stop`` of the frame on the batch, comparing only
        ``columns``: those the fingerprint or a comparison by content says may have
        changed there (every other column of the batch is as read)."""
        assert self.envelope is not None
        batch = {**self.envelope, _KEY: rows}
        # in the frame's order: a key a row did not have is added in that order
        compared = set(columns)
        columns = [name for name in self.fingerprint.columns if name in compared]
        index = pd.RangeIndex(stop - start)
        convert = self.convert or (lambda array: array)  # (only the batches with a change)
        part = frame_of_arrays(
            {name: _as_read(convert(self.frame[name].array[start:stop])) for name in columns},
            index,
        )
        templates = {name: self.templates.get(name, ABSENT) for name in columns}
        result = overlay(part, batch, kind="table", templates=templates, compare=columns)
        new_rows = result.payload[_KEY]
        touched = [i for i, row in enumerate(new_rows) if row is not rows[i]]
        for i in touched:
            if any(name not in rows[i] and name not in self.declared for name in new_rows[i]):
                # the order of the undeclared columns may change: the whole check tells
                raise StreamUnsupported("an undeclared key is added to a row")
        kept_at = [p for p in result.origin if p is not None]
        if len(kept_at) != len(result.origin):  # fits() has ruled new rows out already
            raise StreamUnsupported(f"{NOT_AS_READ} (a row added in a batch)")
        labels = [start + p for p in kept_at]  # every row kept, in place
        context = CheckContext(result.payload, batch, allow_deletes=self.allow_deletes,
                               object_id=self.object_id, origin=result.origin, labels=labels,
                               offset=start, touched=touched)  # fmt: skip
        records = run_stages(context, [s for s in check.STAGES if not s.whole_table])
        self.changes.append(diff_payloads(batch, result.payload, kind="table",
                                          origin=result.origin, labels=labels))  # fmt: skip
        for record in records:
            if record["row"] is None:
                raise StreamUnsupported(f"a table-wide problem in one batch: {record['problem']}")
        self.records.extend(records)
        if self.keys is not None:
            self.keys.add(new_rows, start, touched)
        if any(record["level"] == "error" for record in records):
            return
        # the rows written anew, or (a candidate block where no row changed) the bytes
        # as they were read
        self._add(_dump_rows(new_rows) if touched else raw, stop - start)

    def _add(self, piece: bytes, rows: int) -> None:
        self.pieces.append(piece)
        self.piece_rows.append(rows)

    def result(self, head: bytes, tail: bytes) -> StreamedPayload:
        whole = [s for s in check.STAGES if s.whole_table]
        records = [*self.records, *run_stages(_TableOfBatches(self), whole)]
        report = CheckReport.from_records(records)
        batches = tuple(self.pieces) if report.ok else ()
        self.pieces = []
        document = RowBatches(head, batches, tuple(self.piece_rows), tail)
        layout = None
        if report.ok:
            keys = self.keys
            layout = RowLayout(len(head), tuple(map(len, batches)), document.batch_rows,
                               len(tail), keys.hashes if keys else None,
                               keys.present if keys else None)  # fmt: skip
        return StreamedPayload(document, concat_changes(self.changes), report, self.frame_print,
                               layout)  # fmt: skip

    def _rows_again(self) -> Iterator[list[dict[str, Any]]]:
        """The original's rows once more, batch by batch (for the rare second look)."""
        batches: list[list[dict[str, Any]]] = []
        splitter = RowSplitter(_KEY, batches.append)
        for chunk in self.kept.chunks():
            splitter.feed(chunk)
            yield from batches
            batches.clear()
        splitter.finish()
        yield from batches


class _TableOfBatches(CheckContext):
    """The whole table as its batches left it: what the whole-table stages read.

    Its rows are not held: the keys the rows had come from the read's fingerprint, the
    groups of rows sharing a primary key from :class:`_PrimaryKeys`.
    """

    def __init__(self, builder: _Builder) -> None:
        envelope = builder.envelope if builder.envelope is not None else {}
        keys = builder.keys
        super().__init__(envelope, envelope, kind="table", object_id=builder.object_id,
                         labels=range(builder.fingerprint.n_rows),
                         touched=sorted(keys.touched) if keys is not None else [])  # fmt: skip
        self._keys = keys
        self._rows_again = builder._rows_again
        self._columns = builder.fingerprint.columns

    def row_keys(self) -> Iterable[str]:
        return self._columns

    def key_groups(self) -> Iterable[list[int]]:
        return self._keys.groups(self._rows_again) if self._keys is not None else []

    def key_values(self, i: int) -> list[Any]:
        assert self._keys is not None
        return self._keys.touched[i][2]


class _PrimaryKeys:
    """The duplicate-primary-key check of a table seen batch by batch.

    Every row's key is kept as one 64-bit hash (8 bytes a row, not the keys
    themselves, in row order: the new document's layout keeps them for the next write);
    an edited row whose hash is another row's too is looked at again, exactly
    (:func:`~mddframes.codec.align.key_of`), in a second pass over the original that
    only such a write (a duplicate, or a hash collision) pays for.
    """

    def __init__(self, names: list[str], n_rows: int) -> None:
        self.names = names
        self.hashes = np.zeros(n_rows, dtype=np.int64)
        self.present = np.zeros(n_rows, dtype=bool)  # the row has a key (none of it null)
        self.touched: dict[int, tuple[Any, int, list[Any]]] = {}  # position: key, hash, values

    def add(self, rows: list[dict[str, Any]], start: int, touched: Iterable[int]) -> None:
        values = key_values([_column(rows, name) for name in self.names])
        stop = start + len(rows)
        self.hashes[start:stop], self.present[start:stop] = key_hashes(values)
        for i in touched:
            key = key_of(rows[i], self.names)  # None: no key, never a duplicate
            digest = key_hash(values[i]) if key is not None else 0
            self.touched[start + i] = (key, digest, [rows[i].get(k) for k in self.names])

    def add_known(self, layout: RowLayout, start: int, stop: int) -> None:
        """The hashes of rows ``start:stop`` from the layout of their document (the same
        bytes, so the same keys)."""
        assert layout.key_hashes is not None and layout.has_key is not None
        self.hashes[start:stop] = layout.key_hashes[start:stop]
        self.present[start:stop] = layout.has_key[start:stop]

    def groups(self, rows_again: Any) -> list[list[int]]:
        """The positions of the rows whose key an edited row has, when another row has
        it too (by hash, then exactly), each group in row order."""
        if not self.touched:
            return []
        every = self.hashes[self.present]
        suspects = {
            key for key, digest, _ in self.touched.values()
            if key is not None and np.count_nonzero(every == digest) > 1
        }  # fmt: skip
        if not suspects:
            return []
        positions: dict[Any, list[int]] = {key: [] for key in suspects}
        position = 0
        for rows in rows_again():
            for row in rows:
                entry = self.touched.get(position)
                key = entry[0] if entry is not None else key_of(row, self.names)
                if key in positions:
                    positions[key].append(position)
                position += 1
        return list(positions.values())


def _column(rows: list[dict[str, Any]], name: str) -> list[Any]:
    """A column's values in a batch of rows (None for null or absent)."""
    return list(map(dict.get, rows, repeat(name, len(rows))))


def _dump_rows(rows: list[dict[str, Any]]) -> bytes:
    """The rows as JSON, without the list's brackets; exact (orjson, else ``json``)."""
    try:
        return orjson.dumps(rows)[1:-1]
    except (orjson.JSONEncodeError, TypeError):
        # integers beyond 64 bits, lone surrogates: json writes them exactly
        return json.dumps(rows, separators=(",", ":"), allow_nan=False).encode("ascii")[1:-1]
