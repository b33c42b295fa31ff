"""A JSON document kept compressed with the SHA-256 of its bytes: a read's or a write's
copy of what the service holds, the next write's context (:class:`KeptJson`).

The bytes are cut into pieces of :data:`PIECE_BYTES`, each compressed on its own by
zstd at level 1 (pyarrow's codec; zlib at level 1 where a pyarrow build has no zstd):
a piece is decompressed whole, so no more than one piece is held decompressed at once.
:class:`Keeper` compresses and hashes the chunks of a document as they pass.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from mddframes.codec.fastjson import json_loads
from mddframes.codec.row_layout import RowLayout

#: Size of the pieces :meth:`KeptJson.chunks` hands out.
CHUNK_SIZE = 256 * 1024
#: Bytes compressed at once: each piece is a zstd frame of its own, decompressed whole
#: (as large as a chunk: 1 MiB pieces, cut in chunks as they are handed out, left the
#: write's peak RSS 0.1x of the document higher: docs/performance.md).
PIECE_BYTES = CHUNK_SIZE

Compress = Callable[[bytes | memoryview], bytes]
Decompress = Callable[[bytes, int], bytes]


@cache
def _codec() -> tuple[Compress, Decompress]:
    """zstd at level 1 from pyarrow (a core dependency; its wheels all build zstd), or
    :func:`_zlib_codec` where a pyarrow build lacks it.

    zstd is three times faster than zlib both ways on our tables and keeps them a third
    smaller (docs/performance.md, "The kept document in zstd").
    """
    import pyarrow as pa  # (imported when first needed: ``import mddframes`` stays light)

    if not pa.Codec.is_available("zstd"):
        return _zlib_codec()
    codec = pa.Codec("zstd", compression_level=1)
    # the system allocator's, as for the read's Arrow arrays (codec/arrow_columns.py):
    # pyarrow's default pool keeps the pages it frees
    pool = pa.system_memory_pool()

    def compress(piece: bytes | memoryview) -> bytes:
        return codec.compress(piece, asbytes=True, memory_pool=pool)  # type: ignore[no-any-return]

    def decompress(data: bytes, size: int) -> bytes:
        return codec.decompress(data, size, asbytes=True, memory_pool=pool)  # type: ignore[no-any-return]

    return compress, decompress


def _zlib_codec() -> tuple[Compress, Decompress]:
    """zlib at level 1: each piece one zlib stream."""
    return (lambda piece: zlib.compress(piece, 1)), (lambda data, _size: zlib.decompress(data))


@dataclass(frozen=True, eq=False)
class KeptJson:
    """A JSON document kept compressed, with the SHA-256 of its bytes.

    Attributes
    ----------
    compressed : tuple of bytes
        The document's pieces, each compressed on its own (empty when ``whole`` holds
        the document).
    piece_sizes : tuple of int
        Each piece's size, uncompressed.
    size : int
        The document's size in bytes, uncompressed.
    sha256 : str
        SHA-256 (hex) of the uncompressed bytes, exactly as received.
    whole : bytes or None
        A small document's bytes as they are (:func:`keep_whole`).
    layout : RowLayout or None
        Where its batches of rows lie and each row's key hash, when the native read
        or a streamed write parsed every batch of it (:mod:`mddframes.codec.row_layout`).
    """

    compressed: tuple[bytes, ...]
    piece_sizes: tuple[int, ...]
    size: int
    sha256: str
    whole: bytes | None = None
    layout: RowLayout | None = None

    def chunks(self, size: int = CHUNK_SIZE) -> Iterator[bytes]:
        """The document's bytes, decompressed piece by piece (about ``size`` each)."""
        if self.whole is not None:
            for start in range(0, len(self.whole), size):
                yield self.whole[start : start + size]
            return
        decompress = _codec()[1]
        for data, piece_size in zip(self.compressed, self.piece_sizes, strict=True):
            piece = decompress(data, piece_size)
            if len(piece) <= size:
                yield piece
                continue
            for start in range(0, len(piece), size):
                yield piece[start : start + size]

    def content(self) -> bytes:
        """The document's bytes (the whole of it, decompressed)."""
        if self.whole is not None:
            return self.whole
        return b"".join(self.chunks(PIECE_BYTES))

    def loads(self) -> Any:
        """The document parsed by :func:`json.loads` (the whole of it, each call).

        A document nested too deep raises ``NestingTooDeep`` (a ``ValueError``).
        """
        return json_loads(self.content())

    @property
    def compressed_size(self) -> int:
        """Bytes the kept copy takes (compressed, or the whole document's)."""
        return len(self.whole) if self.whole is not None else sum(map(len, self.compressed))

    def __repr__(self) -> str:
        if self.whole is not None:
            return f"<KeptJson of {self.size:,} bytes>"
        return f"<KeptJson of {self.size:,} bytes, {self.compressed_size:,} compressed>"


class Keeper:
    """Compresses and hashes the chunks of a document as they pass (:meth:`add`), then
    gives the :class:`KeptJson` (:meth:`finish`).

    The chunks are joined into pieces of :data:`PIECE_BYTES`, each compressed on its
    own, in the caller's thread: once zstd replaced zlib, a thread of its own beside
    the parse earned a read 3-9%, under the 10% a device must earn (docs/performance.md).
    """

    def __init__(self) -> None:
        self._compress = _codec()[0]
        self._hash = hashlib.sha256()
        self._compressed: list[bytes] = []
        self._sizes: list[int] = []
        self.size = 0
        self._pending: list[bytes | memoryview] = []
        self._pending_size = 0

    def add(self, chunk: bytes | memoryview) -> None:
        """The document's next bytes (a view's buffer must not change until
        :meth:`finish`: it is joined with the next chunks only when they fill a piece)."""
        self.size += len(chunk)
        self._pending.append(chunk)
        self._pending_size += len(chunk)
        if self._pending_size >= PIECE_BYTES:
            self._take()

    def _take(self) -> None:
        joined = b"".join(self._pending)
        self._pending, self._pending_size = [], 0
        self._hash.update(joined)
        view = memoryview(joined)
        for start in range(0, len(joined), PIECE_BYTES):
            piece = view[start : start + PIECE_BYTES]
            self._compressed.append(self._compress(piece))
            self._sizes.append(len(piece))

    def finish(self) -> KeptJson:
        """The document kept (after the last :meth:`add`)."""
        if self._pending:
            self._take()
        kept = KeptJson(tuple(self._compressed), tuple(self._sizes), self.size,
                        self._hash.hexdigest())  # fmt: skip
        self._compressed, self._sizes = [], []
        return kept


def keep_chunks(chunks: Iterable[bytes | memoryview]) -> KeptJson:
    """A document given in byte pieces, kept compressed with its SHA-256 (not parsed)."""
    keeper = Keeper()
    for chunk in chunks:
        keeper.add(chunk)
    return keeper.finish()


def keep_whole(content: bytes) -> KeptJson:
    """A small document read whole, kept as it is with its SHA-256.

    Its context holds the parsed payload too, several times the bytes' size, so
    compressing them would save little memory and cost a bulk read's workers more than
    the answer's decoding (``read_tables``' compression cost: docs/performance.md).
    """
    return KeptJson((), (), len(content), hashlib.sha256(content).hexdigest(), content)
