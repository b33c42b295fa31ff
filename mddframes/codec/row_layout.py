"""Where a kept table document's batches of rows lie, and each row's primary-key hash.

A streamed write (:func:`~mddframes.codec.streamed_overlay.overlay_document`) cuts the
kept document into batches and parses each one, because the cut must be proven (only a
parse shows that a batch holds whole rows) and the duplicate-key check needs every row's
key. Whoever parsed every batch already can say where each one lies and each row's key
hash: a :class:`RowLayout`, carried by the kept document
(:attr:`~mddframes.codec.kept.KeptJson.layout`). A streamed write makes the layout of
the document it sends (the next write's context), a read by the native engine the
layout of the document it read (:meth:`~mddframes.codec.arrow_rows.ArrowRows.layout`).
The write cuts the kept document at the known places and parses only the batches the
frame's fingerprint points at (and the one holding a column's first value): a clean
batch goes into the new document as bytes, never parsed.

A layout counts exactly one comma between two batches and nothing between the last one
and the ``]``, as a streamed write sends them; a document spaced otherwise does not fit
its sizes (:meth:`RowLayout.fits`), and is cut and parsed as before.

The hashes are Python's ``hash`` of each row's key values, which differs from one
process to the next (``PYTHONHASHSEED``): a layout made in another process (a pickled
frame's context) is not used, and the write parses every batch as before.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mddframes.codec.values import canonical_json

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
    process : bytes
        A token of the process that made it (its hashes are that process's).
    """

    head: int
    batch_bytes: tuple[int, ...]
    batch_rows: tuple[int, ...]
    tail: int
    key_hashes: np.ndarray | None = field(default=None, repr=False)
    has_key: np.ndarray | None = field(default=None, repr=False)
    process: bytes = field(default=_PROCESS, repr=False)

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


def key_values(columns: Sequence[list[Any]]) -> list[Any]:
    """Each row's primary-key value from the key's columns (one list of values per key
    column, as ``json.loads`` gives them): the value, a tuple of them for a key of
    several columns, or None where a part is absent or null."""
    if len(columns) == 1:
        return columns[0]
    return [v if None not in v else None for v in zip(*columns, strict=True)]


def key_hashes(values: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The hash of each row's primary-key value, and which rows have one.

    Parameters
    ----------
    values : list
        Each row's key value (:func:`key_values`).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        int64 hashes, one a row (0 where it has no key: equal keys hash equal), and
        which rows have a key.
    """
    has_key = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    present = [v for v in values if v is not None]
    try:
        found = np.fromiter(map(hash, present), dtype=np.int64, count=len(present))
    except TypeError:  # a dict or list in a key
        found = np.fromiter(map(key_hash, present), dtype=np.int64, count=len(present))
    hashes = np.zeros(len(values), dtype=np.int64)
    hashes[has_key] = found
    return hashes, has_key


def key_hash(value: Any) -> int:
    """The hash of a key's value (a tuple of values for a key of several columns); a
    dict or list in it counts by its canonical JSON."""
    try:
        return hash(value)
    except TypeError:
        parts = value if isinstance(value, tuple) else (value,)
        return hash(tuple(canonical_json(p) if isinstance(p, dict | list) else p for p in parts))
