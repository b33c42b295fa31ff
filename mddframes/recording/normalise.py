"""Text as the standard web decodings would read it, with the way back to the original.

The scrubber (:mod:`.scrub`) decides what a recording may hold by what its text
*decodes to*, not by a list of spellings: :func:`normal_forms` undoes the character
escapes the web uses (percent-encoding of any case, ``%uXXXX``, HTML character
references decimal or hex, with or without ``;`` and leading zeros, named ones, JSON
and JavaScript backslash escapes with ``\\u`` of any case), a layer at a time and in
every order, and keeps for each decoded text a :class:`SpanMap` from its bytes back to
the original bytes they came from, so that what is found in a decoded text is taken
out of the original. :func:`base64_decodings` reads a run of base64 (standard or
URL-safe, padded or not) at every alignment, for the scrubber to look inside.
"""

from __future__ import annotations

import binascii
import html
import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import NamedTuple

__all__ = [
    "EVERY_ESCAPE",
    "STATES",
    "Escapes",
    "SpanMap",
    "base64_decodings",
    "escapes_for",
    "normal_forms",
]


class Escapes(NamedTuple):
    """The escapes worth decoding for some secrets: one pattern a kind (percent-encoding
    and JavaScript's ``%uXXXX``; HTML character references; JSON and JavaScript
    backslashes), and the byte strings one of them starts with."""

    kinds: tuple[re.Pattern[bytes], ...]
    #: What a backslash escape starts with (``\\u``, ``\\/``...).
    backslashed: tuple[bytes, ...]

    def found_in(self, data: bytes) -> bool:
        """Whether ``data`` may hold one (``memchr`` first: a search for two bytes
        costs seven times one for a byte)."""
        if b"%" in data or b"&" in data:
            return True
        return b"\\" in data and any(start in data for start in self.backslashed)


#: What JSON's and JavaScript's one-letter escapes stand for.
_ONE_LETTER = {
    ord('"'): ord('"'), ord("'"): ord("'"), ord("b"): 8, ord("f"): 12, ord("n"): 10,
    ord("r"): 13, ord("t"): 9,
}  # fmt: skip


def escapes_for(secret_bytes: bytes) -> Escapes:
    """The escapes that can spell a secret made of ``secret_bytes``.

    An escape matters if what it decodes to can be part of a secret, of another escape
    (``%``, ``&``, ``#``, ``;``, ``\\``, ASCII letters and digits) or of base64 (``+``,
    ``/``, ``-``, ``_``). Leaving the others alone keeps a JSON answer full of ``\\"``
    and ``\\n`` cheap: a ``\\"`` is decoded only for a secret holding a ``"``, a
    ``\\uXXXX`` only if it stands for ASCII (unless a secret holds more), a ``\\\\``
    only before what could make another escape of it (unless a secret holds a ``\\``).
    """
    ascii_only = all(byte < 0x80 for byte in secret_bytes)
    unicode = rb"00[2-7][0-9A-Fa-f]" if ascii_only else rb"[0-9A-Fa-f]{4}"
    simple = b"/" + bytes(key for key, char in _ONE_LETTER.items() if char in secret_bytes)
    if ord("\\") in secret_bytes:
        doubled = rb"\\\\"
        backslashed: tuple[bytes, ...] = (b"\\",)
    else:
        doubled = rb"\\\\(?=[uU\\" + re.escape(simple) + rb"])"
        backslashed = (b"\\u", b"\\U", b"\\\\") + tuple(b"\\" + bytes([c]) for c in simple)
    pair = (
        b"" if ascii_only else rb"\\[uU][dD][89abAB][0-9A-Fa-f]{2}\\[uU][dD][c-fC-F][0-9A-Fa-f]{2}|"
    )
    one = pair + rb"\\[uU]" + unicode + b"|" + doubled + rb"|\\[" + re.escape(simple) + b"]"
    return Escapes(
        (
            re.compile(rb"%[0-9A-Fa-f]{2}|%[uU]" + unicode),
            re.compile(rb"&#[0-9]+;?|&#[xX][0-9A-Fa-f]+;?|&[A-Za-z][A-Za-z0-9]{1,31};?"),
            re.compile(one),
        ),
        backslashed,
    )


#: Every escape (for a secret of any bytes).
EVERY_ESCAPE = escapes_for(bytes(range(256)))
_BACKSLASHED = {
    b"\\": b"\\", b"/": b"/", b'"': b'"', b"'": b"'",
    b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t",
}  # fmt: skip
_URLSAFE = bytes.maketrans(b"-_", b"+/")
#: Decoded texts at most of one text: every order of the three kinds of escape is
#: tried, a layer at a time (three layers in any order are 39 texts).
STATES = 64


def _decoded(token: bytes) -> bytes | None:
    """What one escape stands for (``None``: nothing, it is kept as it is)."""
    lead = token[:1]
    if lead == b"%":
        if len(token) == 3:
            return bytes([int(token[1:], 16)])
        return _character(int(token[2:], 16))
    if lead == b"&":
        text = token.decode("ascii")
        decoded = html.unescape(text)
        return None if decoded == text else decoded.encode("utf-8", "surrogatepass")
    if len(token) == 12:  # a surrogate pair
        high, low = int(token[2:6], 16), int(token[8:12], 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)).encode("utf-8")
    if len(token) == 6:
        return _character(int(token[2:], 16))
    return _BACKSLASHED[token[1:2]]


def _character(code: int) -> bytes | None:
    if 0xD800 <= code <= 0xDFFF:  # half of a pair: no character of its own
        return None
    return chr(code).encode("utf-8")


class _Pass:
    """One decoding pass: its output's segments, each a literal copy of its input or
    the decoding of one escape."""

    __slots__ = ("ends", "literal", "sources", "starts")

    def __init__(self) -> None:
        self.starts: list[int] = []  # where each segment starts in the output
        self.sources: list[int] = []  # where it starts in the input
        self.ends: list[int] = []  # where it ends in the input
        self.literal: list[bool] = []

    def back(self, start: int, end: int) -> tuple[int, int]:
        """The input bytes ``start:end`` of the output came from (whole escapes)."""
        first = bisect_right(self.starts, start) - 1
        last = bisect_right(self.starts, end - 1) - 1
        if self.literal[first]:
            start = self.sources[first] + start - self.starts[first]
        else:
            start = self.sources[first]
        if self.literal[last]:
            end = self.sources[last] + end - self.starts[last]
        else:
            end = self.ends[last]
        return start, end


class SpanMap:
    """From a decoded text's bytes back to the original's (see :func:`normal_forms`)."""

    __slots__ = ("_passes",)

    def __init__(self, passes: list[_Pass]) -> None:
        self._passes = passes

    def original(self, start: int, end: int) -> tuple[int, int]:
        """The original bytes that the decoded bytes ``start:end`` (not empty) came
        from: every escape they decode from is inside, whole."""
        for step in reversed(self._passes):
            start, end = step.back(start, end)
        return start, end


def _one_pass(data: bytes, kind: re.Pattern[bytes]) -> tuple[bytes, _Pass] | None:
    """Every escape of one ``kind`` in ``data`` decoded once (``None``: there is none)."""
    step = _Pass()
    out: list[bytes] = []
    position = length = 0
    for match in kind.finditer(data):
        decoded = _decoded(match.group())
        if decoded is None:
            continue
        if match.start() > position:
            step.starts.append(length)
            step.sources.append(position)
            step.ends.append(match.start())
            step.literal.append(True)
            out.append(data[position : match.start()])
            length += match.start() - position
        step.starts.append(length)
        step.sources.append(match.start())
        step.ends.append(match.end())
        step.literal.append(False)
        out.append(decoded)
        length += len(decoded)
        position = match.end()
    if not out:
        return None
    if position < len(data):
        step.starts.append(length)
        step.sources.append(position)
        step.ends.append(len(data))
        step.literal.append(True)
        out.append(data[position:])
    return b"".join(out), step


def normal_forms(data: bytes, escapes: Escapes = EVERY_ESCAPE) -> list[tuple[bytes, SpanMap]]:
    """``data`` as every chain of decodings reads it, and each text's way back.

    One kind of escape is decoded a layer at a time, in every order (a reader may
    undo the JSON escapes before the HTML references or after: ``&#4\\u0038;`` is a
    ``0`` only in the first order), breadth first, each distinct text once, at most
    :data:`STATES` of them.

    Parameters
    ----------
    data : bytes
        Any text (UTF-8 or not: the escapes are ASCII).
    escapes : Escapes
        The escapes to decode (:func:`escapes_for` the secrets looked for).

    Returns
    -------
    list of (bytes, SpanMap)
        ``data`` itself first (its map is the identity), then each decoded text with
        where each of its bytes came from in ``data``.
    """
    states: list[tuple[bytes, list[_Pass]]] = [(data, [])]
    seen = {data}
    index = 0
    while index < len(states) and len(states) < STATES:
        text, passes = states[index]
        index += 1
        if not escapes.found_in(text):
            continue
        for kind in escapes.kinds:
            done = _one_pass(text, kind)
            if done is not None and done[0] not in seen and len(states) < STATES:
                seen.add(done[0])
                states.append((done[0], [*passes, done[1]]))
    return [(text, SpanMap(passes)) for text, passes in states]


def base64_decodings(run: bytes) -> Iterator[bytes]:
    """The bytes a run of base64 characters stands for, read from each of its first
    four characters (one of them is where the encoding started) in both alphabets at
    once (``-``/``_`` read as ``+``/``/``), an incomplete last group read as padded."""
    run = run.translate(_URLSAFE)
    for offset in range(min(4, len(run) - 1)):
        piece = run[offset:]
        rest = len(piece) % 4
        if rest == 1:
            piece = piece[:-1]
        elif rest:
            piece += b"=" * (4 - rest)
        if piece:
            yield binascii.a2b_base64(piece)
