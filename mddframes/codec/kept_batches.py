"""A streamed write's new document, kept compressed one zlib member per batch of rows.

A streamed write (:mod:`mddframes.codec.streamed_overlay`) cuts the document a frame was
read from into batches of rows and sends the batches it does not change as the bytes
they were read as. :func:`keep_batches` keeps its new document as the next write's
context: a :class:`~mddframes.codec.stream.KeptJson` whose members are the document's
head (up to and including the rows' ``[``), one member per batch (each after the first
with its comma first) and its tail. A batch the write took from a document kept so is
its very member: only the batches it changed are compressed (after a read, whose
document is one zlib stream, every batch is, once). The next write takes the batches
from the members (:func:`batches_of`): no cutting, and no parse of a batch it need not
look into. The members were whole rows when they were made (a batch the splitter
proved by parsing it, or rows the write dumped), and a kept document never changes.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from mddframes.codec.stream import COMPRESS_LEVEL, KeptJson


@dataclass
class BatchPlan:
    """How a new document's bytes fall into members, as the write built it.

    Attributes
    ----------
    head_size : int
        The bytes of the head.
    sizes : list of int
        Each batch's bytes, without the comma before it.
    rows : list of int
        Each batch's rows.
    reused : list of bytes or None
        Each batch's member when the batch is the one of a kept document's member, at
        the same place (None: compressed from the new document).
    head, tail : bytes or None
        The head's and the tail's members when kept as they were.
    """

    head_size: int = 0
    sizes: list[int] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    reused: list[bytes | None] = field(default_factory=list)
    head: bytes | None = None
    tail: bytes | None = None

    def add(self, size: int, rows: int, member: bytes | None) -> None:
        """One more batch."""
        self.sizes.append(size)
        self.rows.append(rows)
        self.reused.append(member)


def keep_batches(body: bytes, plan: BatchPlan) -> KeptJson:
    """``body`` kept compressed one member per batch, as ``plan`` says it falls.

    Parameters
    ----------
    body : bytes
        The document: head, the batches joined by commas, tail.
    plan : BatchPlan
        Where its batches are, and the members that can be kept as they are.

    Returns
    -------
    KeptJson
        With ``batch_rows``.
    """
    view = memoryview(body)
    members = [plan.head if plan.head is not None else _compress(view[: plan.head_size])]
    position = plan.head_size
    for i, (size, member) in enumerate(zip(plan.sizes, plan.reused, strict=True)):
        stop = position + size + (1 if i else 0)  # a batch after the first: its comma too
        members.append(member if member is not None else _compress(view[position:stop]))
        position = stop
    members.append(plan.tail if plan.tail is not None else _compress(view[position:]))
    digest = hashlib.sha256(body).hexdigest()
    return KeptJson(tuple(members), len(body), digest, tuple(plan.rows))


def _compress(data: memoryview) -> bytes:
    return zlib.compress(data, COMPRESS_LEVEL)


def batches_of(kept: KeptJson) -> tuple[bytes, Iterator[tuple[bytes, bytes, int]], bytes]:
    """The head, the batches and the tail of a document kept one member per batch.

    Parameters
    ----------
    kept : KeptJson
        With ``batch_rows``.

    Returns
    -------
    (bytes, iterator, bytes)
        The head's bytes; each batch as its bytes (without the comma before it), its
        member and its rows, decompressed one at a time as the iterator is read; the
        tail's bytes.

    Raises
    ------
    ValueError
        ``kept`` is not kept one member per batch.
    """
    counts = kept.batch_rows
    if counts is None or len(kept.members) != len(counts) + 2:
        raise ValueError("the document is not kept one member per batch of rows")
    members = kept.members[1:-1]

    def batches() -> Iterator[tuple[bytes, bytes, int]]:
        for i, (member, count) in enumerate(zip(members, counts, strict=True)):
            raw = zlib.decompress(member)
            if i:
                if raw[:1] != b",":
                    raise ValueError("a batch after the first does not start with a comma")
                raw = raw[1:]
            yield raw, member, count

    return zlib.decompress(kept.members[0]), batches(), zlib.decompress(kept.members[-1])
