"""A write's read-back compared with the bytes it sent, as the read-back arrives.

A streamed write sends a large table as bytes and reads it back to verify it. The
service usually answers with the very bytes it was sent: the write then keeps, as the
next write's context, the sent document kept (compressed once), instead of hashing and
compressing the read-back as well.
:func:`keep_compared` compares each chunk of the read-back with the sent bytes at its
place and keeps nothing while they agree. At the first chunk that differs it keeps the
read-back from its first byte (the agreeing part taken from the sent bytes, which are
the same bytes): the outcome is always the :class:`KeptJson`
:func:`~mddframes.codec.stream.keep_chunks` would make of the read-back itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain

from mddframes.codec.stream import CHUNK_SIZE, KeptJson, keep_chunks


def keep_compared(
    chunks: Iterable[bytes], sent: bytes, kept_sent: Callable[[], KeptJson]
) -> KeptJson:
    """The read-back ``chunks`` kept as :func:`~mddframes.codec.stream.keep_chunks` keeps
    them; ``kept_sent()`` when they are exactly ``sent``.

    Parameters
    ----------
    chunks : iterable of bytes
        The read-back, as it arrives; read to the end.
    sent : bytes
        The bytes that were sent.
    kept_sent : callable
        ``sent`` kept (its :class:`KeptJson`): called only when the read-back is ``sent``.

    Returns
    -------
    KeptJson
    """
    position = 0
    pieces = iter(chunks)
    for chunk in pieces:
        if sent.startswith(chunk, position):
            position += len(chunk)
            continue
        # other bytes from here on: keep the read-back whole, its agreeing start (the
        # same bytes) taken from the sent ones
        return keep_chunks(chain(_prefix(sent, position), (chunk,), pieces))
    if position == len(sent):
        return kept_sent()
    return keep_chunks(_prefix(sent, position))  # the read-back is shorter


def _prefix(content: bytes, stop: int) -> Iterator[memoryview]:
    """The first ``stop`` bytes of ``content`` in pieces (views: no copies)."""
    view = memoryview(content)
    for start in range(0, stop, CHUNK_SIZE):
        yield view[start : min(start + CHUNK_SIZE, stop)]
