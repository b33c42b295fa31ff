"""Where a recorded answer waits for the recorder's writer: a :class:`TextSpool` or a
:class:`BinarySpool`. Nothing reaches a temporary file before it is scrubbed.

A HAR file holds an answer's text as a JSON string. A small answer is kept as it came
(scrubbed) and escaped when its entry is written; a large one (past 1 MiB) is escaped
as it arrives, into a private temporary file, so that the writer thread only copies it
into the recording: escaping is the largest part of recording a large read, and done by
the reading thread it takes no turns at the GIL from the threads parsing the answer.
A binary answer is scrubbed as it arrives too, unless it is a zip (its members are
compressed: only their rebuilding by the writer can scrub them), which stays in memory.
"""

from __future__ import annotations

import codecs
import io
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

import orjson

from mddframes.recording.scrub import StreamScrub

__all__ = ["ZIP_MAGIC", "BinarySpool", "TextSpool", "escaped", "unescaped"]

#: How a zip file (an export's answer) starts.
ZIP_MAGIC = b"PK\x03\x04"

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


class BinarySpool:
    """A binary answer's body, scrubbed as it arrives, or a zip, kept as it came.

    Parameters
    ----------
    folder : str
        Where a large body's private temporary file goes (the recording's folder).
    scrub : StreamScrub
        Scrubs the body on its way in (a zip's bytes excepted).
    in_memory : int
        How many bytes are kept in memory before the body goes to the file.

    Notes
    -----
    The first four bytes decide. A zip's members are compressed, so no scan of its
    bytes finds a secret in them, and scrubbing its bytes would break its offsets: it
    is held in memory, whatever its size, until the writer rebuilds it with every
    member scrubbed; it never reaches a file as it came. Any other body is scrubbed as
    it arrives and goes to a private temporary file past ``in_memory`` bytes.
    """

    def __init__(self, folder: str, scrub: StreamScrub, in_memory: int) -> None:
        self._folder = folder
        self._scrub = scrub
        self._in_memory = in_memory
        self._head = b""  # the first bytes, until there are four to decide by
        self._file: IO[bytes] | None = None
        #: Whether the body is a zip (known once four bytes came).
        self.zipped = False

    def write(self, data: bytes | memoryview) -> None:
        """Add a piece of the body."""
        if self._file is None:
            self._head += data
            if len(self._head) < len(ZIP_MAGIC):
                return
            data, self._head = self._head, b""
            self.zipped = data.startswith(ZIP_MAGIC)
            self._file = (
                io.BytesIO()
                if self.zipped
                else tempfile.SpooledTemporaryFile(self._in_memory, dir=self._folder)  # noqa: SIM115 -- closed by close()
            )
        if self.zipped:
            self._file.write(data)
        else:
            self._scrub.feed_into(bytes(data), self._file.write)

    def finish(self) -> None:
        """The body is whole."""
        if self._file is None:  # fewer than four bytes: no zip
            self._file = io.BytesIO()
            self._scrub.feed_into(self._head, self._file.write)
            self._head = b""
        if not self.zipped:
            self._file.write(self._scrub.finish())

    @property
    def file(self) -> IO[bytes]:
        """The body (call :meth:`finish` first), at its start."""
        assert self._file is not None
        self._file.seek(0)
        return self._file

    def close(self) -> None:
        """Drop the body."""
        if self._file is not None:
            self._file.close()
