"""A write's read-back compared with the bytes it sent, as the read-back arrives.

A streamed write sends a large table as bytes and reads it back to verify it. The
service usually answers with the very bytes it was sent; the write then needs their
SHA-256 and their compressed copy (the next write's context) without compressing the
read-back a second time. :class:`KeptLater` hashes and compresses the sent bytes in a
thread of its own while the caller waits for the service (zlib and SHA-256 release
the GIL), and :func:`keep_compared` compares each chunk of the read-back with the sent
bytes at its place, keeping nothing as long as they agree. At the first chunk that
differs it keeps the read-back from its first byte (the agreeing part taken from the
sent bytes, which are the same bytes): the outcome is always the :class:`KeptJson`
:func:`~mddframes.codec.stream.keep_chunks` would make of the read-back itself.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from itertools import chain

from mddframes.codec.stream import CHUNK_SIZE, KeptJson, byte_chunks, keep_chunks


class KeptLater:
    """The :class:`KeptJson` of ``content``, made by a background thread.

    Parameters
    ----------
    content : bytes
        The document (kept referenced, not copied).
    """

    def __init__(self, content: bytes) -> None:
        self.content = content
        self._kept: KeptJson | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._work, name="mddframes-kept", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            self._kept = keep_chunks(byte_chunks(self.content))
        except BaseException as error:  # handed to the caller by result()
            self._error = error

    def result(self) -> KeptJson:
        """The kept document (waits for the thread; raises what it raised)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._kept is not None
        return self._kept


def keep_compared(chunks: Iterable[bytes], expected: KeptLater) -> KeptJson:
    """The read-back ``chunks`` kept as :func:`~mddframes.codec.stream.keep_chunks` keeps
    them; ``expected``'s own when they are exactly its bytes (nothing kept twice).

    Parameters
    ----------
    chunks : iterable of bytes
        The read-back, as it arrives; read to the end.
    expected : KeptLater
        The bytes that were sent.

    Returns
    -------
    KeptJson
    """
    content = expected.content
    position = 0
    pieces = iter(chunks)
    for chunk in pieces:
        if content.startswith(chunk, position):
            position += len(chunk)
            continue
        # other bytes from here on: keep the read-back whole, its agreeing start (the
        # same bytes) taken from the sent ones
        return keep_chunks(chain(_prefix(content, position), (chunk,), pieces))
    if position == len(content):
        return expected.result()
    return keep_chunks(_prefix(content, position))  # the read-back is shorter


def _prefix(content: bytes, stop: int) -> Iterator[memoryview]:
    """The first ``stop`` bytes of ``content`` in pieces (views: no copies)."""
    view = memoryview(content)
    for start in range(0, stop, CHUNK_SIZE):
        yield view[start : min(start + CHUNK_SIZE, stop)]
