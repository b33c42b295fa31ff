"""What a recording must never hold, and the streaming replacement that takes it out.

A :class:`Scrubber` knows the secrets of one session: the client secret (from the
settings), every access token (learned from the ``Authorization`` header of each request
and from every token answer), every cookie value, and the tenant's host. Each is
searched in the forms a service could echo it in (as sent, percent-encoded, JSON-escaped,
HTML-escaped, base64) and replaced by a placeholder naming its kind, in bytes, a chunk
at a time, so a 31 MB answer is scrubbed without being held (:class:`StreamScrub`).
Headers that carry credentials (``Authorization``, ``Cookie``, ``Set-Cookie``,
``Proxy-Authorization``) lose their value whatever it holds.
"""

from __future__ import annotations

import base64
import builtins
import html
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple
from urllib.parse import quote, quote_plus, urlsplit

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


def _forms(value: str, shortest: int = _SHORTEST) -> set[bytes]:
    """The spellings of ``value`` a service could echo (each as UTF-8 bytes)."""
    forms = {
        value,
        quote(value, safe=""),
        quote(value, safe="/"),
        quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1].replace("/", "\\/"),
        html.escape(value),
        html.escape(value, quote=False),
        "".join(f"\\u{ord(c):04x}" for c in value),  # JSON with every character escaped
        "".join(f"\\u{ord(c):04X}" for c in value),
    }
    raw = value.encode("utf-8")
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode("ascii")
        forms.update({text, text.rstrip("=")})
    return {form.encode("utf-8") for form in forms if len(form) >= shortest}


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
        self._secrets: dict[bytes, bytes] = {}
        self._known: set[tuple[str, str]] = set()
        self.counts: dict[str, int] = {"client secret": 0, "token": 0, "cookie": 0}
        self.host = host
        # the pattern, its longest form's length and the cores, published together:
        # read without the lock, so a reader never pairs a pattern with older cores
        self._compiled: _Compiled | None = None
        #: Counts the secrets learned: a body scrubbed at the current count needs no
        #: second scan.
        self.generation = 0
        self.add("client secret", client_secret, any_length=True)
        if client_secret:
            basic = f"{client_id}:{client_secret}"
            self._add_forms("client secret", basic)
        hostname = urlsplit(f"//{host}").hostname or host
        for name in {host, hostname}:
            if name:
                for form in (name, quote(name, safe=""), json.dumps(name)[1:-1]):
                    self._secrets.setdefault(form.encode("utf-8"), HOST_PLACEHOLDER.encode())

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
        self._add_forms(kind, value, 1 if any_length else _SHORTEST)

    def _add_forms(self, kind: str, value: str, shortest: int = _SHORTEST) -> None:
        placeholder = PLACEHOLDERS.get(kind, b"SCRUBBED")
        with self._lock:
            for form in _forms(value, shortest):
                self._secrets[form] = placeholder
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

    def pattern(self) -> tuple[re.Pattern[bytes], int]:
        """The compiled alternation of every secret's forms, and the longest's length."""
        compiled = self._compile()
        return compiled.pattern, compiled.longest

    def _compile(self) -> _Compiled:
        compiled = self._compiled
        if compiled is not None:
            return compiled
        with self._lock:
            if self._compiled is None:
                forms = sorted(self._secrets, key=len, reverse=True)
                self._compiled = _Compiled(
                    re.compile(b"|".join(re.escape(f) for f in forms) or b"(?!)"),
                    max((len(f) for f in forms), default=1),
                    _fewest(_core(f) for f in forms),
                )
            return self._compiled

    def cores(self) -> list[builtins.bytes]:
        """Pieces of which every form holds one: a buffer holding none holds no secret.

        Searching these few with ``bytes.__contains__`` (a fast scan in C) and the
        alternation only where one is found makes a 31 MB answer cheap to scrub: the
        forms of one secret differ only around the characters an encoding changes, so
        they share a core.
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
        # the usual case is no secret: the cores' fast scans in C say so (a regular
        # expression's alternation of every form costs several times more)
        for core in compiled.cores:
            if core in value:
                break
        else:
            return value
        secrets = self._secrets
        return compiled.pattern.sub(lambda m: secrets[m.group(0)], value)

    def is_clean(self, value: str) -> bool:
        """Whether ``value`` holds no secret in any form."""
        data = value.encode("utf-8", "surrogatepass")
        return self.bytes(data) is data

    def stream(self) -> StreamScrub:
        """A scrubber for one body read a chunk at a time."""
        return StreamScrub(self)

    def replacement(self, found: builtins.bytes) -> builtins.bytes:
        """The placeholder of one matched secret form."""
        return self._secrets[found]


class _Compiled(NamedTuple):
    pattern: re.Pattern[bytes]
    longest: int
    cores: list[bytes]


class StreamScrub:
    """Scrub a body a chunk at a time: a secret split between two chunks is found too.

    The last ``longest - 1`` bytes of what was fed are held back until the next chunk
    (or :meth:`finish`), so a match is only ever made on whole forms.
    """

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber
        self.generation = scrubber.generation  # read before the pattern: never newer
        compiled = scrubber._compile()
        self._pattern, longest, self._cores = compiled
        self._keep = longest - 1
        self._pending = b""
        # for a large body, the cores grouped by a byte each holds (made from its
        # first large chunk, see _byte_groups)
        self._groups: list[tuple[int, list[bytes]]] | None = None

    def _holds_a_core(self, chunk: bytes) -> bool:
        """Whether ``chunk`` holds one of the cores (then perhaps a secret)."""
        groups = self._groups
        if groups is None:
            if len(chunk) < _GROUPED_FROM:
                return any(core in chunk for core in self._cores)
            groups = self._groups = _byte_groups(self._cores, chunk[:_SAMPLE])
        return any(byte in chunk and any(core in chunk for core in cores) for byte, cores in groups)

    def feed(self, chunk: bytes) -> bytes:
        """The scrubbed bytes that are safe to write now."""
        buffer = self._pending + chunk if self._pending else chunk
        limit = len(buffer) - self._keep
        if limit <= 0:
            self._pending = buffer
            return b""
        if not self._holds_a_core(buffer):  # the usual case: no secret
            self._pending = buffer[limit:]
            return buffer[:limit]
        out: list[bytes] = []
        position = 0
        for match in self._pattern.finditer(buffer):
            if match.start() >= limit:
                break
            out.append(buffer[position : match.start()])
            out.append(self._scrubber.replacement(match.group(0)))
            position = match.end()
        cut = max(position, limit)
        out.append(buffer[position:cut])
        self._pending = buffer[cut:]
        return b"".join(out)

    def feed_into(self, chunk: bytes, write: Callable[[bytes | memoryview], object]) -> None:
        """As :meth:`feed`, the safe bytes handed to ``write``; in the usual case (no
        secret) in two pieces without copying ``chunk`` (a 31 MB answer is copied once
        less)."""
        pending, keep = self._pending, self._keep
        cut = len(chunk) - keep
        if cut > 0:
            # a secret in what was held back and the chunk lies whole in the chunk, or
            # ends in its first ``keep`` bytes (no core is longer than a form)
            junction = pending + chunk[:keep]
            if not self._holds_a_core(chunk) and not any(core in junction for core in self._cores):
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


_UNCHANGED = re.compile(rb"[A-Za-z0-9._~-]+")  # no URL, JSON, HTML or base64 step changes these


_HEX_LETTER = re.compile(rb"[A-Fa-f]")


def _core(form: bytes) -> bytes:
    """A piece of ``form`` that its other spellings share: its longest run no encoding
    changes; for a form escaped character by character (``\\u006d...``), its longest
    piece without a hex letter, the same in the upper- and lower-case spellings; else
    the whole form."""
    runs = _UNCHANGED.findall(form)
    longest = max(runs, key=len, default=b"")
    if len(longest) >= 6:
        return longest
    piece = max(_HEX_LETTER.split(form), key=len)
    return piece if len(piece) >= 6 else form


#: A chunk this large makes a stream scan its cores by byte groups (a large body).
_GROUPED_FROM = 1 << 15
#: The bytes of a body's first large chunk whose byte counts choose the groups.
_SAMPLE = 1 << 13


def _byte_groups(cores: list[bytes], sample: bytes) -> list[tuple[int, list[bytes]]]:
    """The cores grouped by one byte each holds, the rarest in ``sample``.

    A chunk without a group's byte holds none of its cores, and ``byte in chunk``
    (``memchr``) says so about four times faster than one core's scan: in a 27.6 MB
    JSON answer, 6 of 7 cores held a byte it never did (an upper-case letter, ``\\``),
    and the scans went from 43 to 19 ms. Which byte is chosen decides only the speed:
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
