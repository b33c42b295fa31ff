"""What a recording must never hold, and the streaming replacement that takes it out.

A :class:`Scrubber` knows the secrets of one session: the client secret (from the
settings), every access token (learned from the ``Authorization`` header of each request
and from every token answer), every cookie value, and the tenant's host. What it takes
out is decided by what a text *decodes to*, not by a list of spellings, so that no
spelling outside a list can leak:

- the text is read as the web's decoders would read it: :func:`.normalise.normal_forms`
  undoes every character escape (percent-encoding of any case, HTML character
  references, JSON and JavaScript backslash escapes), a layer at a time and in every
  order, and maps each decoded byte back to the original bytes it came from; a secret
  found in any decoded text (``+`` and space read alike, as a form does) is taken out
  of the *original* bytes, every escape it was spelled with included;
- every run of base64 long enough to hold a credential is decoded, at every alignment
  and in both alphabets, and searched the same way, three layers deep: a run that
  holds one goes whole.

The usual piece holds no escape, no piece of a secret and no long base64 run; a few
scans in C say so (:meth:`StreamScrub._may_hold`) and the piece is kept as it is.
A body read a chunk at a time is cut only between runs of the bytes an encoded secret
can be made of (:class:`StreamScrub`), so a secret split between two chunks is found
too. Headers that carry credentials (``Authorization``, ``Cookie``, ``Set-Cookie``,
``Proxy-Authorization``) lose their value whatever it holds.
"""

from __future__ import annotations

import base64
import builtins
import json
import re
import string
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple
from urllib.parse import urlsplit

from mddframes.recording.normalise import Escapes, base64_decodings, escapes_for, normal_forms

__all__ = [
    "CREDENTIAL_HEADERS",
    "HOST_PLACEHOLDER",
    "Scrubber",
    "StreamScrub",
]

#: What the tenant's host becomes in a recording (``.invalid`` resolves nowhere, RFC 2606).
HOST_PLACEHOLDER = "tenant.invalid"
#: Request and answer headers whose whole value is a credential.
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-auth-token"}
)
#: Placeholders, by kind of secret; none contains a character JSON or a URL escapes.
PLACEHOLDERS = {
    "client secret": b"SCRUBBED-CLIENT-SECRET",
    "token": b"SCRUBBED-TOKEN",
    "cookie": b"SCRUBBED-COOKIE",
}
_SHORTEST = 6  # a shorter "secret" (an empty cookie, "1") would scrub ordinary text
#: A credential this long (decoded) is looked for inside every base64 run that could
#: hold it; a shorter one by its base64 spellings (runs of 4 or 5 would be every word).
_DECODED_FROM = 8
_BASE64_DEPTH = 3  # base64 inside base64 inside base64
_RESCANS = 8  # scrubbing what a replacement left, at most (each one takes bytes out)
_WHOLE = 1 << 20  # a longer text is scrubbed as a stream, a piece at a time
#: An encoded secret longer than this split between chunks could be missed; the bytes
#: held back between chunks never exceed it.
LONGEST_FORM = 1 << 16
#: The bytes an encoded secret can be made of besides its own: escapes and base64.
_ENCODING_BYTES = (string.ascii_letters + string.digits + "%&#;\\+/=-_").encode()
#: base64 characters read as ``A``, the rest as ``.``: a long run is then a plain find.
_BASE64_CLASS = bytes(
    ord("A") if chr(b) in string.ascii_letters + string.digits + "+/-_" else ord(".")
    for b in range(256)
)


def _base64_run_from(length: int) -> int:
    """The shortest base64 run that can hold ``length`` decoded bytes of a secret.

    What was encoded holds an encoding of the secret, never shorter than 5/6 of it
    (an HTML reference like ``&nGt;`` is the only escape that decodes to more bytes
    than it has: 6 for 5); base64 writes 4 characters for 3 bytes, and the run may
    begin and end up to two characters inside it.
    """
    return max(4, length * 10 // 9 - 4)


def _spelled_in_base64(value: bytes) -> set[bytes]:
    """The base64 characters that ``value`` alone decides, at each of the three byte
    alignments, in both alphabets (for a credential too short to look for inside
    every base64 run)."""
    forms = set()
    for align in range(3):
        encoded = base64.b64encode(b"\0" * align + value + b"\0\0")
        first = -(-8 * align // 6)
        last = 8 * (align + len(value)) // 6
        text = encoded[first:last]
        forms.update({text, text.translate(bytes.maketrans(b"+/", b"-_"))})
    return {form for form in forms if len(form) >= _SHORTEST}


def _canonical(found: bytes) -> bytes:
    """A found form's key: ``+`` and space read alike (a form's space is ``+``)."""
    return found.replace(b" ", b"+")


def _pattern_of(form: bytes) -> bytes:
    return b"".join(rb"[+ ]" if byte in b"+ " else re.escape(bytes([byte])) for byte in form)


class _Compiled(NamedTuple):
    pattern: re.Pattern[bytes]
    cores: list[bytes]
    #: The shortest base64 run that can hold a credential (0: none is looked for).
    base64_run: int
    #: The bytes an encoded secret is made of (a chunk is cut only outside their runs).
    run_bytes: bytes
    run_start: re.Pattern[bytes]
    #: The escapes that can spell these secrets.
    escapes: Escapes


class Scrubber:
    """The secrets of one recorded session and their replacement.

    Parameters
    ----------
    client_secret : str
        The client secret (never written).
    client_id : str
        The client id: ``id:secret`` in base64 (a Basic header echoed) is a secret too.
    host : str
        The tenant's ``host[:port]``, replaced by :data:`HOST_PLACEHOLDER`.

    Attributes
    ----------
    counts : dict of str to int
        How many values of each kind were learned (for the recording's header).
    """

    def __init__(self, client_secret: str, client_id: str, host: str) -> None:
        self._lock = threading.Lock()
        # each secret's normal form (+ read as space), and its placeholder
        self._secrets: dict[bytes, bytes] = {}
        self._decoded_from: list[int] = []  # the credentials looked for inside base64
        self._raw_bytes: set[int] = set()
        self._known: set[tuple[str, str]] = set()
        self.counts: dict[str, int] = {"client secret": 0, "token": 0, "cookie": 0}
        self.host = host
        # published whole, read without the lock: a reader never pairs a pattern with
        # older cores
        self._compiled: _Compiled | None = None
        #: Counts the secrets learned: a body scrubbed at the current count needs no
        #: second scan.
        self.generation = 0
        self.add("client secret", client_secret, any_length=True)
        if client_secret:
            self._add_forms("client secret", f"{client_id}:{client_secret}", basic=True)
        hostname = urlsplit(f"//{host}").hostname or host
        with self._lock:
            for name in {host, hostname}:
                if name:
                    raw = name.encode("utf-8")
                    self._raw_bytes.update(raw)
                    self._secrets.setdefault(_canonical(raw), HOST_PLACEHOLDER.encode())

    def add(self, kind: str, value: str, *, any_length: bool = False) -> None:
        """Learn one more secret ``value`` of ``kind`` (``"token"``, ``"cookie"``...).

        A value shorter than six characters is ignored (an empty cookie or a ``1`` would
        scrub ordinary text), unless ``any_length`` (the client secret: scrubbed
        whatever its length).
        """
        if not value or (len(value) < _SHORTEST and not any_length):
            return
        with self._lock:
            if (kind, value) in self._known:
                return
            self._known.add((kind, value))
            self.counts[kind] = self.counts.get(kind, 0) + 1
        self._add_forms(kind, value)

    def _add_forms(self, kind: str, value: str, *, basic: bool = False) -> None:
        placeholder = PLACEHOLDERS.get(kind, b"SCRUBBED")
        raw = value.encode("utf-8", "surrogatepass")
        normal = _canonical(raw)
        with self._lock:
            if len(normal) >= _DECODED_FROM:
                # found by decoding the base64 runs; ``id:secret`` holds the secret
                if not basic:
                    self._decoded_from.append(len(normal))
            else:
                for form in _spelled_in_base64(raw):
                    self._secrets[form] = placeholder
            if not basic:
                self._raw_bytes.update(raw)
                self._secrets[normal] = placeholder
            # reset before the count moves: whoever reads the new count finds no older
            # pattern
            self._compiled = None
            self.generation += 1

    def learn_headers(self, headers: Mapping[str, str]) -> None:
        """Learn the credentials a set of headers carries (a bearer token, cookies)."""
        for name, value in headers.items():
            lowered = name.lower()
            if lowered in ("authorization", "proxy-authorization"):
                scheme, _, credential = value.partition(" ")
                self.add("token", credential.strip() if credential else scheme)
            elif lowered == "x-auth-token":
                self.add("token", value)
            elif lowered in ("cookie", "set-cookie"):
                for value_of in _cookie_values(value, set_cookie=lowered == "set-cookie"):
                    self.add("cookie", value_of)

    def learn_token_answer(self, body: bytes) -> None:
        """Learn every ``*token`` value of a token answer (``access_token``, ``id_token``...)."""
        try:
            value = json.loads(body)
        except ValueError:
            return
        for key, item in _items(value):
            if key.lower().endswith("token") and isinstance(item, str):
                self.add("token", item)

    def _compile(self) -> _Compiled:
        compiled = self._compiled
        if compiled is not None:
            return compiled
        with self._lock:
            if self._compiled is None:
                forms = sorted(self._secrets, key=len, reverse=True)
                cores: list[bytes] = []
                for form in forms:
                    pieces = re.split(rb"[+ ]", form)
                    longest = max(pieces, key=len)
                    cores.extend([longest] if longest else [b"+", b" "])
                run_bytes = set(_ENCODING_BYTES) | self._raw_bytes
                if any(b"+" in form for form in forms):
                    run_bytes.add(ord(" "))
                run = bytes(sorted(run_bytes))
                self._compiled = _Compiled(
                    re.compile(b"|".join(_pattern_of(f) for f in forms) or b"(?!)"),
                    _fewest(cores),
                    _base64_run_from(min(self._decoded_from)) if self._decoded_from else 0,
                    run,
                    re.compile(b"[" + re.escape(run) + b"]*"),
                    escapes_for(bytes(sorted(self._raw_bytes))),
                )
            return self._compiled

    def cores(self) -> list[builtins.bytes]:
        """Pieces of which every secret's decoded form holds one: a text without an
        escape and holding none of them holds no secret but in base64.

        Searching these few with ``bytes.__contains__`` (a fast scan in C) before
        anything else makes a large answer cheap to scrub.
        """
        return self._compile().cores

    def text(self, value: str) -> str:
        """``value`` (a URL, a header, a small body) with every secret replaced."""
        data = value.encode("utf-8", "surrogatepass")
        scrubbed = self.bytes(data)
        return value if scrubbed is data else scrubbed.decode("utf-8", "replace")

    def bytes(self, value: builtins.bytes) -> builtins.bytes:
        """``value`` with every secret replaced."""
        compiled = self._compile()
        if not _may_hold(value, compiled, compiled.cores):
            return value
        if len(value) > _WHOLE:  # (decoded texts of it are held at once: in pieces)
            stream = self.stream()
            pieces = [stream.feed(value[at : at + _WHOLE]) for at in range(0, len(value), _WHOLE)]
            return b"".join([*pieces, stream.finish()])
        return self._rescrubbed(value, compiled)

    def _rescrubbed(self, value: builtins.bytes, compiled: _Compiled) -> builtins.bytes:
        """``value`` scrubbed until nothing is found: a replacement changes how the
        bytes beside it decode (``&#48`` before ``0`` is no ``0`` until the ``0`` is
        gone), so what it leaves is looked at again."""
        for _ in range(_RESCANS):
            found = self._found(value, compiled)
            if not found:
                return value
            value = _replaced(value, found, len(value))[0]
        return value

    def is_clean(self, value: str) -> bool:
        """Whether ``value`` holds no secret in any form."""
        data = value.encode("utf-8", "surrogatepass")
        return self.bytes(data) is data

    def stream(self) -> StreamScrub:
        """A scrubber for one body read a chunk at a time."""
        return StreamScrub(self)

    def _found(
        self, data: builtins.bytes, compiled: _Compiled, depth: int = 0
    ) -> list[tuple[int, int, builtins.bytes]]:
        """Where in ``data`` a secret is spelled (start, end, placeholder), in order."""
        found: list[tuple[int, int, builtins.bytes]] = []
        for normal, spans in normal_forms(data, compiled.escapes):
            found.extend(
                (*spans.original(m.start(), m.end()), self._secrets[_canonical(m.group())])
                for m in compiled.pattern.finditer(normal)
            )
            if not compiled.base64_run or depth >= _BASE64_DEPTH:
                continue
            for start, end in _long_runs(normal, compiled.base64_run):
                for decoded in base64_decodings(normal[start:end]):
                    if _may_hold(decoded, compiled, compiled.cores):
                        inner = self._found(decoded, compiled, depth + 1)
                        if inner:
                            # (with its padding: ``=`` alone stands for nothing)
                            after = normal[end : end + 2]
                            padded = len(after) - len(after.lstrip(b"="))
                            found.append((*spans.original(start, end + padded), inner[0][2]))
                            break
        found.sort()
        return found


def _long_runs(data: bytes, shortest: int) -> Iterable[tuple[int, int]]:
    """The runs of base64 characters of ``data`` at least ``shortest`` long."""
    marks = data.translate(_BASE64_CLASS)
    needle = b"A" * shortest
    start = marks.find(needle)
    while start >= 0:  # (the first find in a run is its start: the one before ended)
        end = marks.find(b".", start + shortest)
        end = len(data) if end < 0 else end
        yield start, end
        start = marks.find(needle, end)


def _may_hold(data: bytes, compiled: _Compiled, cores: Iterable[bytes]) -> bool:
    """Whether ``data`` may hold a secret: it holds an escape, a core, or a base64 run
    long enough (if not, its decoded form is itself and holds no secret)."""
    if compiled.escapes.found_in(data):
        return True
    for core in cores:
        if core in data:
            return True
    shortest = compiled.base64_run
    return bool(shortest) and data.translate(_BASE64_CLASS).find(b"A" * shortest) >= 0


def _replaced(data: bytes, found: list[tuple[int, int, bytes]], cut: int) -> tuple[bytes, int]:
    """``data`` up to ``cut`` with the secrets that start before it replaced, and where
    that ends (past ``cut`` when a secret crosses it)."""
    out: list[bytes] = []
    position = 0
    for start, end, placeholder in found:
        if start >= cut:
            break
        if end <= position:  # inside one replaced already
            continue
        if start >= position:
            out.append(data[position:start])
            out.append(placeholder)
        position = end
    cut = max(cut, position)
    out.append(data[position:cut])
    return b"".join(out), cut


class StreamScrub:
    """Scrub a body a chunk at a time: a secret split between two chunks is found too.

    What is written is cut only before the last run of the bytes an encoded secret can
    be made of (a secret lies inside one such run, whole); that run waits for the next
    chunk (or :meth:`finish`), at most :data:`LONGEST_FORM` bytes of it.
    """

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber
        self.generation = scrubber.generation  # read before the pattern: never newer
        self._compiled = scrubber._compile()
        self._run_bytes = self._compiled.run_bytes
        self._pending = b""
        # for a large body, the cores grouped by a byte each holds (made from its
        # first large chunk, see byte_groups)
        self._groups: list[tuple[int, list[bytes]]] | None = None

    def _may_hold(self, chunk: bytes) -> bool:
        """Whether ``chunk`` may hold a secret (see the module's function)."""
        groups = self._groups
        compiled = self._compiled
        if groups is None:
            if len(chunk) < GROUPED_FROM:
                return _may_hold(chunk, compiled, compiled.cores)
            groups = self._groups = byte_groups(compiled.cores, chunk[:_SAMPLE])
        return _may_hold(chunk, compiled, _grouped(chunk, groups))

    def _cut(self, buffer: bytes) -> int:
        """Where ``buffer`` may be cut: before its last run (at most LONGEST_FORM)."""
        cut = len(buffer.rstrip(self._run_bytes))
        return max(cut, len(buffer) - LONGEST_FORM)

    def feed(self, chunk: bytes) -> bytes:
        """The scrubbed bytes that are safe to write now."""
        buffer = self._pending + chunk if self._pending else chunk
        cut = self._cut(buffer)
        if cut <= 0:
            self._pending = buffer
            return b""
        if not self._may_hold(buffer):  # the usual case: no secret
            self._pending = buffer[cut:]
            return buffer[:cut]
        found = self._scrubber._found(buffer, self._compiled)
        out, cut = _replaced(buffer, found, cut)
        self._pending = buffer[cut:]
        return self._scrubber._rescrubbed(out, self._compiled) if found else out

    def feed_into(self, chunk: bytes, write: Callable[[bytes | memoryview], object]) -> None:
        """As :meth:`feed`, the safe bytes handed to ``write``; in the usual case (no
        secret) in two pieces without copying ``chunk`` (a large answer is copied once
        less)."""
        pending = self._pending
        head = self._compiled.run_start.match(chunk)
        # the run that began in what was held back ends inside this chunk; a secret in
        # it, or whole in the chunk, makes one of these two checks say so
        if (
            head is not None
            and head.end() < len(chunk)
            and not self._may_hold(chunk)
            and not (pending and self._may_hold(pending + chunk[: head.end()]))
        ):
            cut = self._cut(chunk)
            if pending:
                write(pending)
            write(memoryview(chunk)[:cut])
            self._pending = chunk[cut:]
            return
        scrubbed = self.feed(chunk)
        if scrubbed:
            write(scrubbed)

    def finish(self) -> bytes:
        """The rest, scrubbed."""
        rest, self._pending = self._pending, b""
        return self._scrubber.bytes(rest)


def _grouped(chunk: bytes, groups: list[tuple[int, list[bytes]]]) -> Iterable[bytes]:
    """The cores of the groups whose byte ``chunk`` holds (``memchr`` first)."""
    for byte, cores in groups:
        if byte in chunk:
            yield from cores


#: A chunk this large makes a stream scan its cores by byte groups (a large body).
GROUPED_FROM = 1 << 15
#: The bytes of a body's first large chunk whose byte counts choose the groups.
_SAMPLE = 1 << 13


def byte_groups(cores: list[bytes], sample: bytes) -> list[tuple[int, list[bytes]]]:
    """The cores grouped by one byte each holds, the rarest in ``sample``.

    A chunk without a group's byte holds none of its cores, and ``byte in chunk``
    (``memchr``) says so faster than one core's scan (measured in docs/performance.md):
    most cores hold a byte a JSON answer seldom or never holds (an upper-case letter,
    ``\\``). Which byte is chosen decides only the speed:
    a chunk holding it is scanned for the group's cores as before.
    """
    counts = {byte: sample.count(byte) for byte in set(b"".join(cores))}
    shared = {byte: sum(byte in core for core in cores) for byte in counts}
    groups: dict[int, list[bytes]] = {}
    for core in cores:
        # the rarest; of equals, the one more cores hold (fewer groups to test)
        byte = min(set(core), key=lambda b: (counts[b], -shared[b], b))
        groups.setdefault(byte, []).append(core)
    return list(groups.items())


def _fewest(cores: Iterable[bytes]) -> list[bytes]:
    """The cores that hold no other: a buffer holding a dropped one holds a kept one,
    so the scans for the kept ones decide alike, in fewer passes."""
    distinct = set(cores)
    return sorted((c for c in distinct if not any(o in c for o in distinct if o != c)), key=len)


def _cookie_values(header: str, *, set_cookie: bool) -> Iterable[str]:
    parts = header.split(";")
    if set_cookie:
        parts = parts[:1]
    for part in parts:
        _, equals, value = part.strip().partition("=")
        if equals:
            yield value.strip().strip('"')


def _items(value: object) -> Iterable[tuple[str, object]]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                yield str(key), inner
                stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)
