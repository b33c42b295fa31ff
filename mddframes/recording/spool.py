"""Where a recorded text answer waits for the recorder's writer: a :class:`TextSpool`.

A HAR file holds an answer's text as a JSON string. A small answer is kept as it came
(scrubbed) and escaped when its entry is written; a large one (past 1 MiB) is escaped
as it arrives, into a private temporary file, so that the writer thread only copies it
into the recording: escaping is the largest part of recording a 31 MB read, and done by
the reading thread it takes no turns at the GIL from the threads parsing the answer.
"""

from __future__ import annotations

import codecs
import io
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

import orjson

__all__ = ["TextSpool", "escaped", "unescaped"]

_IN_MEMORY = 1 << 20
_PIECE = 1 << 20
_BACKSLASH = ord("\\")


def escaped(data: bytes | memoryview | str) -> bytes:
    """``data`` (UTF-8 text; invalid bytes become U+FFFD) as the inside of a JSON string."""
    text = data if isinstance(data, str) else bytes(data).decode("utf-8", "replace")
    return orjson.dumps(text)[1:-1]


def unescaped(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The UTF-8 text whose JSON-string insides ``pieces`` are, a piece at a time.

    A piece is cut before an escape sequence or a character it does not hold whole
    (``\\"``, ``\\u001f``, ``é``); the cut-off part starts the next one.
    """
    carry = b""
    for piece in pieces:
        data = carry + piece
        cut = _whole_character(data, _whole_escapes(data))
        carry = data[cut:]
        if cut:
            yield _loaded(data[:cut])
    if carry:
        yield _loaded(carry)


def _whole_character(data: bytes, cut: int) -> int:
    """``cut``, or the start of the UTF-8 character it would split."""
    start = cut - 1
    while start > 0 and cut - start < 4 and data[start] & 0xC0 == 0x80:
        start -= 1
    if start < 0:
        return cut
    lead = data[start]
    length = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return start if start + length > cut else cut


def _loaded(inside: bytes) -> bytes:
    text: str = orjson.loads(b'"' + inside + b'"')
    return text.encode("utf-8")


def _whole_escapes(data: bytes) -> int:
    """The length of the longest start of ``data`` that ends no escape sequence midway."""
    # an escape is two bytes, or six for \uXXXX (whose four hex digits hold no
    # backslash): only the last backslash in the last six bytes can start one cut off
    last = data.rfind(b"\\", max(0, len(data) - 6))
    if last < 0:
        return len(data)
    start = last
    while start > 0 and data[start - 1] == _BACKSLASH:
        start -= 1
    if (last - start) % 2:  # the second of an escaped backslash: the escape is whole
        return len(data)
    length = 6 if data[last + 1 : last + 2] == b"u" else 2
    return last if last + length > len(data) else len(data)


class TextSpool:
    """A text answer's body, scrubbed, as it was read.

    Parameters
    ----------
    folder : str
        Where a large body's private temporary file goes (the recording's folder).
    in_memory : int
        How many bytes are kept in memory before the body goes to the file.

    Notes
    -----
    Up to 1 MiB the bytes are kept in memory as they are; the first write past that
    escapes them into a temporary file (``0600``, unlinked at once) and every later
    write is escaped on its way there (:attr:`escaped` says which).
    """

    def __init__(self, folder: str, in_memory: int = _IN_MEMORY) -> None:
        self._folder = folder
        self._in_memory = in_memory
        self._memory: io.BytesIO | None = io.BytesIO()
        self._file: IO[bytes] | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    @property
    def escaped(self) -> bool:
        """Whether the body is held escaped, in a file (it outgrew the memory)."""
        return self._file is not None

    def write(self, data: bytes | memoryview) -> None:
        """Add a piece of the body."""
        memory = self._memory
        if memory is not None:
            if memory.tell() + len(data) <= self._in_memory:
                memory.write(data)
                return
            self._file = tempfile.TemporaryFile(dir=self._folder)  # noqa: SIM115 -- closed by close()
            self._memory = None
            self._write_escaped(memory.getvalue())
            memory.close()
        self._write_escaped(data)

    def _write_escaped(self, data: bytes | memoryview) -> None:
        assert self._file is not None
        text = self._decoder.decode(data)
        if text:
            self._file.write(memoryview(orjson.dumps(text))[1:-1])

    def finish(self) -> None:
        """The body is whole (a character cut at its end becomes U+FFFD)."""
        if self._file is not None:
            rest = self._decoder.decode(b"", final=True)
            if rest:
                self._file.write(escaped(rest))

    def raw(self) -> bytes:
        """The whole body's bytes (held in memory: for small bodies, or those the
        writer holds anyway)."""
        if self._memory is not None:
            return self._memory.getvalue()
        return b"".join(self.raw_pieces())

    def raw_pieces(self) -> Iterator[bytes]:
        """The body's bytes a piece at a time (a large one unescaped from its file)."""
        if self._memory is not None:
            yield self._memory.getvalue()
            return
        file = self._file
        assert file is not None
        file.seek(0)
        yield from unescaped(iter(lambda: file.read(_PIECE), b""))

    def copy_escaped(self, out: IO[bytes]) -> None:
        """Copy a large body, escaped, to ``out`` (the reads and writes free the GIL)."""
        assert self._file is not None
        self._file.seek(0)
        shutil.copyfileobj(self._file, out, _PIECE)

    def close(self) -> None:
        """Drop the body."""
        if self._memory is not None:
            self._memory.close()
        if self._file is not None:
            self._file.close()
