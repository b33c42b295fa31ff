"""Looking for credentials on disk in any spelling, independently of the scrubber.

The search knows nothing of :mod:`mddframes.recording.scrub`: it reads every file as raw
bytes and looks for each credential literally and after any chain of up to
:data:`MAX_CHAIN` standard web decodings (percent-decoding of either case, HTML entities
decimal, hex or named, JSON string escapes, base64 standard or URL-safe, padded or not).

Only fragments that could hold an encoded credential are decoded: runs of the characters
those encodings produce (letters, digits and ``%&#;\\+/=_.~-``). A credential made of
letters, digits and ``-_`` keeps every spelling inside such a run, so cutting the text at
any other character never cuts one; after each decoding the text is cut again.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, unquote_plus

#: how many decodings, one after the other, a spelling may need
MAX_CHAIN = 4

# a run of characters the standard encodings of [A-Za-z0-9_-] text are made of
_FRAGMENT = re.compile(rb"[A-Za-z0-9%&#;\\+/=_.~-]{8,}")
_ENCODED = re.compile(rb"%[0-9A-Fa-f]{2}|&#|&[a-zA-Z]+;|\\")
_JSON_ESCAPE = re.compile(rb'\\(u[0-9A-Fa-f]{4}|["\\/bfnrt])')
_SIMPLE = {b'"': b'"', b"\\": b"\\", b"/": b"/", b"b": b"\b", b"f": b"\f", b"n": b"\n",
           b"r": b"\r", b"t": b"\t"}  # fmt: skip


@dataclass(frozen=True)
class Found:
    """One credential found: which (its label), in which file, and through which decodings."""

    label: str
    path: str
    chain: tuple[str, ...]

    def __str__(self) -> str:
        how = " -> ".join(self.chain) if self.chain else "as it is"
        return f"{self.label} in {self.path} ({how})"


def _json_unescape(data: bytes) -> bytes:
    def one(match: re.Match[bytes]) -> bytes:
        escape = match.group(1)
        if escape[:1] == b"u":
            return chr(int(escape[1:], 16)).encode("utf-8", "surrogatepass")
        return _SIMPLE[escape]

    return _JSON_ESCAPE.sub(one, data)


def _text_decodings(data: bytes) -> Iterator[tuple[str, bytes]]:
    text = data.decode("latin-1")
    yield "percent", unquote(text, encoding="latin-1").encode("latin-1", "replace")
    yield "percent+", unquote_plus(text, encoding="latin-1").encode("latin-1", "replace")
    yield "html", html.unescape(text).encode("utf-8", "replace")
    yield "json", _json_unescape(data)


def _base64_decodings(data: bytes, runs: re.Pattern[bytes]) -> Iterator[tuple[str, bytes]]:
    for match in runs.finditer(data):
        run = match.group().rstrip(b"=")
        for skip in range(4):  # the run may start inside a quantum
            piece = run[skip:]
            piece = piece[: len(piece) - len(piece) % 4 if len(piece) % 4 == 1 else len(piece)]
            padded = piece + b"=" * (-len(piece) % 4)
            for name, alphabet in (("base64", None), ("base64url", b"-_")):
                try:
                    yield name, base64.b64decode(padded, altchars=alphabet, validate=False)
                except (binascii.Error, ValueError):
                    pass


class CredentialSearch:
    """Finds any of ``credentials`` (label -> value) in bytes, in any spelling.

    Values must be made of ASCII letters, digits, ``-`` and ``_`` (a client secret of
    that alphabet, or a token from ``secrets.token_urlsafe``), at least 8 long.
    """

    def __init__(self, credentials: dict[str, str]) -> None:
        for label, value in credentials.items():
            if not re.fullmatch(r"[A-Za-z0-9_-]{8,}", value):
                raise ValueError(f"{label}: the search needs [A-Za-z0-9_-]{{8,}} values")
        self._by_value = {value.encode(): label for label, value in credentials.items()}
        lengths = sorted({len(v) for v in self._by_value})
        self._runs = [(n, re.compile(rb"[A-Za-z0-9_-]{%d,}" % n)) for n in lengths]
        # base64 of the shortest credential (or of any spelling of it) is no shorter
        self._base64 = re.compile(rb"[A-Za-z0-9+/_-]{%d,}={0,2}" % (4 * lengths[0] // 3))

    def _literal(self, data: bytes) -> str | None:
        """The label of a credential that occurs in ``data`` as it is, else None."""
        for n, pattern in self._runs:
            for match in pattern.finditer(data):
                run = match.group()
                for start in range(len(run) - n + 1):
                    label = self._by_value.get(run[start : start + n])
                    if label is not None:
                        return label
        return None

    def search(self, data: bytes) -> tuple[str, tuple[str, ...]] | None:
        """(label, chain of decodings) of the first credential found in ``data``, else None."""
        label = self._literal(data)
        if label is not None:
            return label, ()
        seen: set[bytes] = set()
        for fragment in _FRAGMENT.finditer(data):
            hit = self._decoded(fragment.group(), (), seen)
            if hit is not None:
                return hit
        return None

    def _decoded(
        self, data: bytes, chain: tuple[str, ...], seen: set[bytes]
    ) -> tuple[str, tuple[str, ...]] | None:
        if len(chain) >= MAX_CHAIN or data in seen:
            return None
        if not _ENCODED.search(data) and not self._base64.search(data):
            return None  # nothing here is encoded: the literal search saw it all
        seen.add(data)
        steps: list[tuple[str, bytes]] = []
        if _ENCODED.search(data):
            steps.extend(_text_decodings(data))
        steps.extend(_base64_decodings(data, self._base64))
        for name, decoded in steps:
            if decoded == data:
                continue
            label = self._literal(decoded)
            if label is not None:
                return label, (*chain, name)
            for fragment in _FRAGMENT.finditer(decoded):
                hit = self._decoded(fragment.group(), (*chain, name), seen)
                if hit is not None:
                    return hit
        return None

    def search_files(self, paths: Iterable[Path], root: Path) -> list[Found]:
        """Every file of ``paths`` holding a credential: at most one finding per file."""
        found = []
        for path in paths:
            hit = self.search(path.read_bytes())
            if hit is not None:
                found.append(Found(hit[0], str(path.relative_to(root)), hit[1]))
        return found
