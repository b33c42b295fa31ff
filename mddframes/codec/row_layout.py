"""Where a kept table document's batches of rows lie, and each row's primary-key hash.

A streamed write (:func:`~mddframes.codec.streamed_overlay.overlay_document`) cuts the
kept document into batches and parses each one, because the cut must be proven (only a
parse shows that a batch holds whole rows) and the duplicate-key check needs every row's
key. The document it then sends is made of those very batches; its :class:`RowLayout`
says where each one lies and keeps the hash of each row's key. The copy of that document
kept for the next write carries its layout (:attr:`~mddframes.codec.stream.KeptJson.layout`),
so the next write cuts it at the known places and parses only the batches the frame's
fingerprint points at (and the one holding a column's first value): a clean batch goes
into the new document as bytes, never parsed.

The hashes are Python's ``hash`` of each row's key values, which differs from one
process to the next (``PYTHONHASHSEED``): a layout made in another process (a pickled
frame's context) is not used, and the write parses every batch as before.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np

# drawn once per process: a layout unpickled in another process has other key hashes
_PROCESS = secrets.token_bytes(16)


@dataclass(frozen=True, eq=False)
class RowLayout:
    """How a table document's bytes divide into its head, batches of rows and tail.

    Attributes
    ----------
    head : int
        Bytes up to and including the rows' ``[``.
    batch_bytes : tuple of int
        Bytes of each batch of rows (the comma between two batches belongs to neither).
    batch_rows : tuple of int
        Rows of each batch.
    tail : int
        Bytes from the rows' ``]`` to the end.
    key_hashes : numpy.ndarray or None
        Per row, the hash of its primary key's values (int64); None for a table
        without a primary key.
    has_key : numpy.ndarray or None
        Per row, whether it has a key (no key column absent or null).
    """

    head: int
    batch_bytes: tuple[int, ...]
    batch_rows: tuple[int, ...]
    tail: int
    key_hashes: np.ndarray | None = None
    has_key: np.ndarray | None = None
    process: bytes = _PROCESS

    def fits(self, size: int, n_rows: int) -> bool:
        """Whether the layout can be of a document of ``size`` bytes and ``n_rows`` rows,
        made in this process."""
        commas = max(0, len(self.batch_bytes) - 1)
        return (
            self.process == _PROCESS
            and self.head + sum(self.batch_bytes) + commas + self.tail == size
            and sum(self.batch_rows) == n_rows
        )


def cut(chunks: Iterable[bytes], layout: RowLayout) -> Iterator[bytes]:
    """The document's head, each batch and the tail, cut where ``layout`` says.

    Raises
    ------
    ValueError
        The bytes do not divide as ``layout`` says (a comma missing between two
        batches, or the document ends early or runs on).
    """
    buffer = bytearray()
    source = iter(chunks)

    def take(size: int) -> bytes:
        while len(buffer) < size:
            chunk = next(source, None)
            if chunk is None:
                raise ValueError("the document ends before its layout does")
            buffer.extend(chunk)
        piece = bytes(buffer[:size])
        del buffer[:size]
        return piece

    yield take(layout.head)
    for i, size in enumerate(layout.batch_bytes):
        if i and take(1) != b",":
            raise ValueError("no comma between two batches of the layout")
        yield take(size)
    tail = take(layout.tail)
    if buffer or next(source, None) is not None:  # (before the last piece: no last call)
        raise ValueError("the document runs on after its layout")
    yield tail
