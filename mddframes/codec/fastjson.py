"""JSON decoding at orjson's speed with exactly :func:`json.loads`'s results, and a GC pause.

:func:`loads` gives what ``json.loads`` gives (same values, same Python types, same key
order, the last of duplicate keys) for every document, and takes orjson's faster path
(figures in docs/internals.md, Performance) wherever orjson is known to agree (and the document is not so
large that orjson's transient memory matters: :data:`LEAN_ABOVE`). orjson departs from
``json.loads`` in three ways, each caught here:

- integers beyond 64 bits become *floats* in orjson, silently (``2**64`` ->
  ``1.8446744073709552e+19``): a document with a run of 19 or more digits anywhere
  (a cheap byte scan; a long digit string in a text value is a harmless false alarm)
  goes to ``json.loads``;
- unpaired UTF-16 surrogate escapes (``"\\ud800"``), ``NaN``/``Infinity`` literals,
  numbers beyond the double range (``1e400``) and a UTF-8 byte-order mark make orjson
  raise: the document then goes to ``json.loads``, which either decodes it exactly or
  raises its own error (so error messages are ``json``'s);
- orjson takes only UTF-8: anything else raises in orjson and goes to ``json.loads``,
  which detects UTF-16/32 as it always did.

A document nested deeper than the decoders go (orjson: 1024 levels; ``json.loads``:
the interpreter's recursion limit, about 1000) raises :class:`NestingTooDeep`, a
``ValueError`` like every other undecodable document, never a ``RecursionError``.

:func:`gc_paused` pauses Python's cyclic garbage collector while a read builds many
small containers: a JSON parse of a large answer allocates hundreds of thousands of
dicts and lists, and each allocation threshold reached starts a collection that walks
every tracked object again (docs/internals.md, Performance, says how much that costs).
JSON values hold no reference cycles, so nothing collectable accumulates meanwhile.
"""

from __future__ import annotations

import gc
import json
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson

#: A run of this many digits may be an integer beyond 64 bits (2**64 has 20 digits;
#: 19 leaves room for a minus sign's neighbour and costs nothing more).
_BIG_RUN = 19
#: ``bytes.translate`` table that makes every digit ``0``: number shapes found by one
#: ``in`` test instead of a regex (here and in :mod:`mddframes.codec.values`)
DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"0" * 9)
_ZEROS = b"0" * _BIG_RUN
_ZERO_RUN = re.compile(rb"0*")
_DOT = 0x2E
#: Documents larger than this go to ``json.loads``: orjson first builds a tree of its
#: own, so its peak memory is several times ``json.loads``'s (docs/internals.md).
LEAN_ABOVE = 24 << 20
#: Scanned this many bytes at a time, so the scan never copies a large document whole.
_SCAN_STEP = 1 << 20


#: orjson's nesting limit; ``json.loads`` stops near the recursion limit (1000).
MAX_DEPTH = 1024


class NestingTooDeep(ValueError):
    """A JSON document nested deeper than the decoder's limit (about 1000 levels)."""

    def __init__(self) -> None:
        super().__init__(
            f"the JSON is nested deeper than the decoder's limit of about {MAX_DEPTH} levels"
        )


def json_loads(data: bytes | bytearray | str) -> Any:
    """:func:`json.loads`, raising :class:`NestingTooDeep` instead of ``RecursionError``."""
    try:
        return json.loads(data)
    except RecursionError:
        raise NestingTooDeep from None


# What moves the nesting depth, and what hides brackets from it (strings, escapes).
_DEPTH_TOKENS = re.compile(rb'[\[\]{}"\\]')
_OPENERS = frozenset(b"[{")
_CLOSERS = frozenset(b"]}")


def nested_deeper(chunks: Iterable[bytes | bytearray | memoryview], limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON document, given in pieces, nests deeper than ``limit`` levels.

    Brackets inside strings do not count. For a parser without a depth limit of its
    own (ijson builds each level's path, so 100,000 levels need gigabytes): ask first.
    Reading stops at the first level past ``limit``.
    """
    depth = 0
    in_string = False
    skip = False  # the byte after a backslash in a string, when a chunk ended between
    for chunk in chunks:
        data = bytes(chunk)
        escaped_at = 0 if skip else -1
        skip = False
        for match in _DEPTH_TOKENS.finditer(data):
            position = match.start()
            if position == escaped_at:
                continue
            byte = data[position]
            if in_string:
                if byte == 0x5C:  # backslash: the next byte is escaped
                    escaped_at = position + 1
                    skip = escaped_at == len(data)
                elif byte == 0x22:
                    in_string = False
            elif byte == 0x22:
                in_string = True
            elif byte in _OPENERS:
                depth += 1
                if depth > limit:
                    return True
            elif byte in _CLOSERS:
                depth -= 1
    return False


def may_hold_big_int(data: bytes | bytearray | memoryview) -> bool:
    """Whether ``data`` has a run of 19 or more ASCII digits (an int orjson may not hold).

    Runs right after a ``.`` (the fraction of a number, or text in a string) do not count:
    orjson parses fractions exactly as ``json.loads`` does.
    """
    view = memoryview(data).cast("B")
    size = len(view)
    start = 0
    while start < size:
        # overlap by one run, so a run across two slices is still seen with the byte before it
        piece = bytes(view[max(0, start - _BIG_RUN) : start + _SCAN_STEP])
        if _suspect_run(piece.translate(DIGITS_TO_ZERO)):
            return True
        start += _SCAN_STEP
    return False


def _suspect_run(zeros: bytes) -> bool:
    """Whether ``zeros`` (digits translated to ``0``) has a run of :data:`_BIG_RUN` that
    does not follow a ``.``: a run right after a ``.`` is a fraction, which orjson parses
    to the same correctly rounded float as ``json.loads`` (halfway cases too); a run
    anywhere else may be an integer (or an exponent). A run at the first byte counts."""
    at = zeros.find(_ZEROS)
    while at >= 0:
        # the leftmost match is where its run starts: the byte before it is no digit
        if at == 0 or zeros[at - 1] != _DOT:
            return True
        run = _ZERO_RUN.match(zeros, at)
        at = zeros.find(_ZEROS, run.end() if run is not None else at + _BIG_RUN)
    return False


#: The exponents of a number beyond the double range (``1e400`` decodes to infinity),
#: digits made ``0``: an exponent of three digits or more.
_HUGE_EXPONENTS = (b"e000", b"E000", b"e+000", b"E+000")


def surely_finite(data: bytes | bytearray) -> bool:
    """Whether the JSON text ``data`` surely decodes to no NaN and no infinite float.

    :func:`loads` (``json.loads``) makes those only of a ``NaN``, ``Infinity`` or
    ``-Infinity`` literal, or of a number beyond the double range: one with an exponent
    of three digits or more, or with 309 digits or more before its point. A cheap byte
    scan, conservative: text that only looks like one of those (in a string) says
    False too.

    Parameters
    ----------
    data : bytes or bytearray
        The JSON text, UTF-8.

    Returns
    -------
    bool
        True when no value decoded from ``data`` is a NaN or an infinity.

    Examples
    --------
    >>> surely_finite(b'{"a": 1.5e30, "b": "x"}'), surely_finite(b'[1e400]')
    (True, False)
    """
    if b"NaN" in data or b"Infinity" in data or may_hold_big_int(data):
        return False
    zeros = data.translate(DIGITS_TO_ZERO)
    return not any(exponent in zeros for exponent in _HUGE_EXPONENTS)


def loads(data: bytes | bytearray | str) -> Any:
    """Decode a JSON document exactly as :func:`json.loads` does, faster where it can.

    Parameters
    ----------
    data : bytes, bytearray or str
        The document.

    Returns
    -------
    Any
        Equal to ``json.loads(data)``, with the same types and key order.

    Raises
    ------
    json.JSONDecodeError, UnicodeDecodeError
        As ``json.loads`` raises them (the document is decoded by ``json`` whenever
        orjson refuses it).
    NestingTooDeep
        The document is nested deeper than :data:`MAX_DEPTH` (a ``ValueError``).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > LEAN_ABOVE or may_hold_big_int(raw):
        return json_loads(data)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise NestingTooDeep from None
        return json_loads(data)


def loads_strict_or_none(data: bytes | bytearray) -> Any:
    """:func:`loads` of strict JSON, or None (no exception) when ``data`` is not that.

    For callers that try candidate slices of a document and expect many to fail.
    ``NaN`` and ``Infinity`` literals (which ``json.loads`` accepts) count as not
    JSON here, so that such a document is left to the caller's whole-document path.
    """
    found = orjson_or_none(data)
    if found is not None:
        return found
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def orjson_or_none(data: bytes | bytearray) -> Any:
    """orjson's decode of ``data`` where it is ``json.loads``'s of strict JSON, else None.

    None when ``data`` has a digit run orjson may turn into a float
    (:func:`may_hold_big_int`), or orjson refuses it: not strict JSON, a lone surrogate,
    a number beyond the double range, or nested deeper than :data:`MAX_DEPTH`. A value
    given is therefore nested at most :data:`MAX_DEPTH` deep (what makes it safe to
    hand to a parser without a depth limit of its own).
    """
    if may_hold_big_int(data):
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_pause_lock = threading.Lock()
_pause_depth = 0
_pause_resumes = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (nested and threaded use is safe).

    The collector is paused by the first block to enter and resumed by the last to
    leave, and only if it was running before: concurrent reads (``read_tables``'
    workers) share one pause. Reference counting still frees everything at once.
    """
    global _pause_depth, _pause_resumes
    with _pause_lock:
        if _pause_depth == 0:
            _pause_resumes = gc.isenabled()
            gc.disable()
        _pause_depth += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pause_depth -= 1
            if _pause_depth == 0 and _pause_resumes:
                gc.enable()
