"""What JSON the emulator takes, and the limits that keep hostile bodies from crashing it.

Every JSON body (and the deployment info file) is read by :func:`parse_json`:

- strict JSON: ``NaN``/``Infinity`` are refused, and so is a number too large for a
  double (``1e400`` would become infinity, which JSON cannot carry back);
- at most :data:`MAX_DEPTH` nested arrays/objects: the stdlib parser and encoder
  recurse, and a body nested ~1,000 deep would otherwise end in ``RecursionError``;
- no lone UTF-16 surrogate escapes (``"\\ud800"``): such a string cannot be encoded as
  UTF-8, so it could be neither stored nor served;
- integers of any size up to Python's 4,300-digit limit for int/str conversion.

Problems raise :class:`~mddframes.emulator.errors.InvalidInput` (400) naming the body.
Limits are documented in docs/wire-format.md ("Limits").
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mddframes.emulator.errors import InvalidInput

#: Deepest nesting of arrays and objects a body may have (the root counts as 1).
MAX_DEPTH = 100

#: Largest request body read, in bytes (bigger ones answer 413).
MAX_BODY_BYTES = 256 * 1024 * 1024

_STRING_REST = re.compile(rb'"[^"]*"')
_EMPTY_PAIR = re.compile(rb"\[\]|\{\}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is out of the range of a double")
    return value


def too_deep(body: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether a *valid* JSON text nests arrays/objects more than ``limit`` levels deep.

    Only C-speed byte operations, no Python loop per byte (a fraction of parsing it, see
    docs/performance.md): drop escaped backslashes and quotes, keep only brackets
    and quotes, drop what is between quotes (brackets inside strings), then remove the
    innermost ``[]``/``{}`` pairs once per level.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    text = body.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE)
    # adjacent quotes close one string and open the next (nothing structural between)
    text = _STRING_REST.sub(b"", text.replace(b'""', b""))
    for _ in range(limit):
        text = _EMPTY_PAIR.sub(b"", text)
        if not text:
            return False
    return True


def parse_json(body: bytes, what: str) -> Any:
    """Parse a request body as strict JSON within the limits, or raise ``InvalidInput``.

    Parameters
    ----------
    body : bytes
        The raw body.
    what : str
        What the body is for (starts the error message).

    Returns
    -------
    Any
        The document as ``json.loads`` builds it (key order kept, integers exact).
    """
    if not body.strip():
        raise InvalidInput(f"{what}: the request body is empty; a JSON document is required")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{what}: the request body is not UTF-8 ({exc})") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise InvalidInput(
            f"{what}: the request body is nested deeper than {MAX_DEPTH} levels"
        ) from None
    except ValueError as exc:
        raise InvalidInput(f"{what}: the request body is not valid JSON ({exc})") from None
    if isinstance(value, dict | list) and too_deep(body):
        raise InvalidInput(f"{what}: the request body is nested deeper than {MAX_DEPTH} levels")
    if _SURROGATE_ESCAPE.search(body):
        # a pair of escapes is one character after parsing; only a lone half stays a
        # surrogate, which UTF-8 cannot encode
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(
                f"{what}: the request body holds a lone UTF-16 surrogate escape "
                "(\\ud800-\\udfff without its pair), which is not text"
            ) from None
    return value
