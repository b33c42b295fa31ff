"""The standard web encodings and decodings, written for the tests alone.

Nothing here comes from the scrubber (``mddframes.recording``): the tests state what a
recording may hold by these, so a spelling the scrubber did not foresee is found. The
encoders take a ``mask`` (which characters to escape: bit ``i`` for character ``i``,
``-1`` for all) and the options a service could pick (case, leading zeros, padding).
"""

from __future__ import annotations

import base64
import binascii
import html
import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote, unquote_plus

Encoder = Callable[[str], str]


def _chosen(mask: int, index: int) -> bool:
    return mask < 0 or bool(mask >> (index % 60) & 1)


def percent(text: str, mask: int = -1, *, lower: bool = False, plus: bool = False) -> str:
    """Percent-encoding (of the UTF-8 bytes), hex digits upper or lower case; with
    ``plus`` a space is ``+`` (an HTML form)."""
    out = []
    for index, char in enumerate(text):
        if plus and char == " ":
            out.append("+")
        elif _chosen(mask, index) or char in "%+& ":
            digits = "".join(f"%{b:02X}" for b in char.encode("utf-8"))
            out.append(digits.lower() if lower else digits)
        else:
            out.append(char)
    return "".join(out)


def html_decimal(text: str, mask: int = -1, *, zeros: int = 0, semicolon: bool = True) -> str:
    """HTML decimal character references (``&#83;``), with leading zeros if asked."""
    end = ";" if semicolon else ""
    out = []
    for index, char in enumerate(text):
        if _chosen(mask, index) or char == "&":
            # (no ``;``: only before a character that is no digit and no ``;``)
            after = text[index + 1 : index + 2]
            close = ";" if not end and (after.isdigit() or after == ";") else end
            out.append(f"&#{'0' * zeros}{ord(char)}{close}")
        else:
            out.append(char)
    return "".join(out)


def html_hex(text: str, mask: int = -1, *, upper: bool = False, zeros: int = 0) -> str:
    """HTML hex character references (``&#x53;``; ``&#X53;`` and upper-case digits if
    ``upper``)."""
    out = []
    for index, char in enumerate(text):
        if _chosen(mask, index) or char == "&":
            digits = f"{'0' * zeros}{ord(char):x}"
            out.append(f"&#X{digits.upper()};" if upper else f"&#x{digits};")
        else:
            out.append(char)
    return "".join(out)


def json_escaped(text: str, mask: int = -1, *, upper: bool = False) -> str:
    """The inside of a JSON string, the chosen characters as ``\\uXXXX`` (a pair of
    them past U+FFFF), hex digits upper or lower case."""
    out = []
    for index, char in enumerate(text):
        if _chosen(mask, index) or char in '"\\':
            units = char.encode("utf-16-be")
            for at in range(0, len(units), 2):
                digits = units[at : at + 2].hex()
                out.append("\\u" + (digits.upper() if upper else digits))
        else:
            out.append(char)
    return "".join(out)


def base64_text(
    text: str, *, urlsafe: bool = False, padded: bool = True, before: bytes = b""
) -> str:
    """Base64 of the UTF-8 bytes, standard or URL-safe, padded or not, after ``before``
    (which moves the text's bytes to another alignment)."""
    raw = before + text.encode("utf-8")
    encoded = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
    return encoded if padded else encoded.rstrip("=")


# -- decoders: what a reader of the file could apply ----------------------------------

_JSON_ESCAPE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u([0-9a-fA-F]{4})|\\([\\/\"bfnrt])"
)
_SIMPLE = {"\\": "\\", "/": "/", '"': '"', "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_unescaped(text: str) -> str:
    """Every JSON string escape in ``text`` decoded (once)."""

    def one(match: re.Match[str]) -> str:
        high, low, single, simple = match.groups()
        if high:
            return (bytes.fromhex(high) + bytes.fromhex(low)).decode("utf-16-be")
        if single:
            code = int(single, 16)
            return "\ufffd" if 0xD800 <= code <= 0xDFFF else chr(code)
        return _SIMPLE[simple]

    return _JSON_ESCAPE.sub(one, text)


_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{4,}")


def base64_decoded(text: str) -> str:
    """Every run of base64 characters in ``text`` decoded from each of its first four
    characters, in both alphabets, the results one per line (bytes as Latin-1)."""
    out = []
    for match in _BASE64_RUN.finditer(text):
        run = match.group().replace("-", "+").replace("_", "/")
        for offset in range(4):
            piece = run[offset:]
            rest = len(piece) % 4
            if rest == 1:
                piece = piece[:-1]
            elif rest:
                piece += "=" * (4 - rest)
            if piece:
                out.append(binascii.a2b_base64(piece).decode("latin-1"))
    return "\n".join(out)


DECODERS: dict[str, Callable[[str], str]] = {
    "percent": unquote,
    "form": unquote_plus,
    "html": html.unescape,
    "json": json_unescaped,
    "base64": base64_decoded,
}


def decodings(text: str, depth: int = 3) -> Iterator[tuple[tuple[str, ...], str]]:
    """``text`` under every chain of up to ``depth`` decodings (the empty chain first)."""
    stack: list[tuple[tuple[str, ...], str]] = [((), text)]
    while stack:
        chain, value = stack.pop()
        yield chain, value
        if len(chain) < depth:
            for name, decode in DECODERS.items():
                decoded = decode(value)
                if decoded != value:
                    stack.append(((*chain, name), decoded))


def holds(text: str, secret: str, depth: int = 3) -> tuple[str, ...] | None:
    """The first chain of decodings of ``text`` that yields ``secret`` (``None``: none)."""
    for chain, value in decodings(text, depth):
        if secret in value:
            return chain
    return None
