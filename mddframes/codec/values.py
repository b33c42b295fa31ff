"""Plain JSON values: missing-ness, type classes, type-aware equality, conversion back.

Everything here works on single values. A *JSON value* is what :func:`json.loads`
returns: ``None``, ``bool``, ``int`` (of any size), ``float``, ``str``, ``list``,
``dict``. A *frame value* is whatever a pandas cell may hold after a user edited it
(numpy scalars, ``pd.NA``, ``pd.Timestamp``, ``Decimal``...).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import json
import math
import re
from collections.abc import Iterable
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any, TypeAlias

import numpy as np
import orjson
import pandas as pd

from mddframes.codec import depth
from mddframes.codec.fastjson import DIGITS_TO_ZERO
from mddframes.errors import DataShapeError


class _Absent:
    """The marker of a key that is not in a row (distinct from a JSON null)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<absent>"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


#: A key that a row does not have. Shown as ``<absent>`` in diffs and reports.
ABSENT: Any = _Absent()

_JSON_TYPE = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    dict: "object",
    list: "array",
}

_FLOAT_EXACT_INT = 2**53

_DATE_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(?P<sep>[T ])\d{2}:\d{2}(?P<sec>:\d{2})?(?P<frac>\.\d+)?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2})?"
)


#: Any JSON value as :func:`json.loads` returns it (None, bool, int, float, str, list,
#: dict). Named rather than spelled out as a recursive union: a reader of a decoded answer
#: narrows it by the shape it expects (docs/wire-format.md), and a union would make every
#: such access a type error first.
JsonValue: TypeAlias = Any
#: A JSON object: a table or mapping document, an element, an answer's envelope.
JsonObject: TypeAlias = dict[str, JsonValue]


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, by JSON Schema's names: null, boolean, integer,
    number (a float), string, object, array.

    ``ABSENT`` is ``"absent"``; anything that is not a JSON value (a numpy scalar, a
    subclass of a JSON type) gets its Python type name, so that a report still says
    what it is.
    """
    if value is ABSENT:
        return "absent"
    return _JSON_TYPE.get(type(value)) or type(value).__name__


def is_missing_json(value: Any) -> bool:
    """True for an absent key, a JSON null or a float NaN (what a frame shows as NA)."""
    return value is ABSENT or value is None or (type(value) is float and value != value)


def is_missing_cell(value: Any) -> bool:
    """True for a frame cell that pandas shows as missing (``NA``, ``NaN``, ``NaT``, None).

    The one missing-value test of frame cells. Containers (lists, dicts, arrays) are
    never missing; this never calls :func:`pandas.isna` on them.
    """
    if value is None or value is pd.NA or value is pd.NaT or value is ABSENT:
        return True
    if isinstance(value, float | np.floating):
        return value != value
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    return False


def json_equal(a: Any, b: Any) -> bool:
    """Type-aware equality of two JSON values, as the overlay sees it.

    Numbers compare by value (``1 == 1.0``) but a boolean never equals a number, a
    string never equals a number, ``-0.0`` never equals ``0.0`` or ``0`` (a sign is
    content), and nested values compare element by element with the same rules (key
    order of objects does not matter).
    """
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and bool(a == b)
    if ta in (int, float) and tb in (int, float):
        return bool(a == b) and not _signed_zero_differs(a, b)
    if ta is not tb:
        return False
    if ta is dict:
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if ta is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def strict_equal(a: Any, b: Any) -> bool:
    """Equality with the same Python types everywhere (``1`` differs from ``1.0``).

    Object key order does not matter; two NaNs are equal (they are the same JSON text).
    """
    if a is b:
        return True
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is dict:
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if ta is list:
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta is float:
        if a != a:
            return bool(b != b)
        return bool(a == b) and not _signed_zero_differs(a, b)
    return bool(a == b)


def _signed_zero_differs(a: Any, b: Any) -> bool:
    """Whether two equal numbers are zeros of different signs (``-0.0`` and ``0.0``/``0``)."""
    return a == 0 and math.copysign(1.0, a) != math.copysign(1.0, b)


def canonical_json(value: Any) -> str:
    """A JSON text of ``value`` that is equal for strictly equal values.

    Keys are sorted, so object key order does not count; ``1`` and ``1.0`` stay
    different. NaN and infinity are allowed here (this text is for comparing and
    hashing, never sent).
    """
    return depth.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# canonical_json's encoder made once: json.dumps builds a new one per call, which is
# most of the cost of many small values (no cycle check: parsed JSON has no cycles)
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
_encode_canonical = (
    None
    if c_make_encoder is None
    else c_make_encoder(
        None, _CANONICAL.default, encode_basestring, None, ":", ",", True, False, True
    )  # fmt: skip
)
#: Values encoded at once by :func:`digest` of a list (a few MB of text).
_DIGEST_GROUP = 5000


def _canonical_texts(values: Iterable[Any]) -> list[str]:
    """:func:`canonical_json` of each value, with one encoder for all of them."""
    if _encode_canonical is None:  # pragma: no cover - CPython always has the C encoder
        return [canonical_json(v) for v in values]
    encode = _encode_canonical
    try:
        return [encode_basestring(v) if type(v) is str else "".join(encode(v, 0)) for v in values]
    except RecursionError:  # a value nested past the C encoder's reach (codec/depth.py)
        return [canonical_json(v) for v in values]


def canonical_cells(values: Iterable[Any]) -> list[str | None]:
    """Each cell's :func:`canonical_json` text, None where the cell is missing.

    The same text as ``canonical_json`` cell by cell, with one encoder for the column.

    Parameters
    ----------
    values : iterable
        The cells of an ``object`` column.

    Returns
    -------
    list of str or None
        One JSON text per cell; None for a missing cell (None, ``pd.NA``, NaN).

    Examples
    --------
    >>> canonical_cells([{"b": 1, "a": 1.0}, None, "x"])
    ['{"a":1.0,"b":1}', None, '"x"']
    """
    if _encode_canonical is None:  # pragma: no cover - CPython always has the C encoder
        return [None if _is_missing_cell_value(v) else canonical_json(v) for v in values]
    encode = _encode_canonical
    try:
        return [
            None if _is_missing_cell_value(v)
            else encode_basestring(v) if type(v) is str
            else "".join(encode(v, 0))
            for v in values
        ]  # fmt: skip
    except RecursionError:  # a value nested past the C encoder's reach (codec/depth.py)
        return [None if _is_missing_cell_value(v) else canonical_json(v) for v in values]


def _is_missing_cell_value(value: Any) -> bool:
    # a missing cell of an object column: None, pd.NA, or the NaN a long frame fills in
    return value is None or value is pd.NA or (type(value) is float and value != value)


def digest(value: Any, *, finite: bool = False) -> str:
    """SHA-256 (hex) of ``value``'s :func:`canonical_json`: equal for strictly equal values.

    The one digest of a payload's content: journals, read contexts, verifications and
    snapshot manifests compare these.

    Parameters
    ----------
    value : Any
        A JSON value (or any value :func:`canonical_json` encodes).
    finite : bool, default False
        The caller vouches that ``value`` is decoded JSON (dicts with text keys, lists,
        text, numbers, booleans and None, as ``json.loads`` makes them) without a NaN or
        an infinite float: decoded from text that
        :func:`~mddframes.codec.fastjson.surely_finite` passes, or checked by
        :func:`has_non_finite`. The canonical text is then encoded by orjson, about
        five times faster, wherever orjson's text is :func:`canonical_json`'s (the same
        digest: the text is the same bytes).

    Returns
    -------
    str
        64 hex digits.

    Examples
    --------
    >>> digest({"b": 1, "a": [1.0, None]}) == digest({"a": [1.0, None], "b": 1}, finite=True)
    True
    """
    if type(value) is list:
        # a long list (a tree of 100,000 elements) hashed a group of items at a time: the
        # same bytes as canonical_json(value), "[" items joined by "," "]", never all in
        # memory at once, with one encoder per group instead of one per item
        hashed = hashlib.sha256(b"[")
        for start in range(0, len(value), _DIGEST_GROUP):
            group = value[start : start + _DIGEST_GROUP]
            fast = _orjson_canonical(group) if finite else None
            text = ",".join(_canonical_texts(group)).encode("utf-8") if fast is None else fast[1:-1]
            hashed.update((b"," if start else b"") + text)
        hashed.update(b"]")
        return hashed.hexdigest()
    fast = _orjson_canonical(value) if finite else None
    if fast is None:
        fast = _canonical_text(value).encode("utf-8")
    return hashlib.sha256(fast).hexdigest()


def _canonical_text(value: Any) -> str:
    """:func:`canonical_json`, by the encoder made once."""
    if _encode_canonical is None or type(value) is str:  # pragma: no cover - CPython has it
        return canonical_json(value)
    try:
        return "".join(_encode_canonical(value, 0))
    except RecursionError:  # a value nested past the C encoder's reach (codec/depth.py)
        return canonical_json(value)


def _orjson_canonical(value: Any) -> bytes | None:
    """The UTF-8 of :func:`canonical_json` of a decoded JSON value without NaN or
    infinity, by orjson; None where orjson's text may differ.

    orjson sorts keys, escapes text and writes integers, ``true``/``false``/``null`` and
    floats as ``json`` does with :func:`canonical_json`'s settings, but for floats of
    magnitude below 1e-4 (``0.00001`` for ``1e-05``, ``1e-7`` for ``1e-07``): a text with
    such a number, or with text that looks like one, is left to ``json``. What orjson
    refuses (integers beyond 64 bits, lone surrogates, nesting deeper than it goes) too.
    """
    try:
        encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        return None
    if b"0.0000" in encoded or b"0e-" in encoded.translate(DIGITS_TO_ZERO):
        return None
    return encoded


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON documents hold the same content with the same types.

    Key order does not count; ``1`` and ``1.0`` differ (what a PUT sends must come back
    exactly).
    """
    return a is b or canonical_json(a) == canonical_json(b)


def same_json_column(originals: list[Any], values: Any) -> bool:
    """Whether an ``object`` column holds exactly the original JSON values.

    One canonical encoding of each side (a cell-by-cell deep comparison of 100,000
    nested values costs seconds). False when unsure (a column of another dtype, an NA
    where a value or null was, a value orjson refuses on one side only): the caller
    then compares cell by cell.

    Parameters
    ----------
    originals : list
        The original values of the column's cells (None for null or absent).
    values : array-like
        The column's cells now (a numpy or pandas array).
    """
    if getattr(getattr(values, "dtype", None), "kind", None) != "O":
        return False
    new = values.tolist() if hasattr(values, "tolist") else list(values)
    if any(value is pd.NA for value in new):
        return False  # NA where a value or null was: the cells decide
    try:
        encoded = canonical_bytes(new)
        if canonical_bytes(originals) != encoded:
            return False
    except (TypeError, ValueError):
        return False
    # orjson writes NaN and infinity as null: equal text may hide one where a null was
    return b"null" not in encoded or not has_non_finite(new)


def canonical_bytes(value: Any) -> bytes:
    """A canonical JSON encoding of ``value`` for equality tests, fast where it can be.

    orjson with sorted keys (about ten times faster than :func:`canonical_json`), or
    the UTF-8 of :func:`canonical_json` where orjson refuses the value (integers
    beyond 64 bits, lone surrogates, non-JSON objects). Equal bytes mean strictly
    equal values (``1``, ``1.0`` and ``True`` encode differently) when both sides
    took the same path; a value taking one path and its equal the other compare
    unequal, which only sends a caller to its slower exact comparison. orjson writes
    NaN as ``null``: compare only values that hold no NaN (JSON read by a strict
    parser, a payload about to be sent strictly).
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        return b"json:" + canonical_json(value).encode("utf-8", "surrogatepass")


def json_text(value: Any) -> str:
    """A JSON text that :func:`json.loads` reads back as ``value``, by orjson where it can.

    The same value, types and key order as ``json.dumps(value, ensure_ascii=False)``
    gives back (the texts may differ in spacing and in how a float is spelled). orjson,
    several times faster, unless ``value`` holds a NaN or an infinity (orjson writes
    ``null`` for them) or something orjson refuses (integers beyond 64 bits, lone
    surrogates).

    Parameters
    ----------
    value : Any
        A decoded JSON value (``json.loads``' types).

    Returns
    -------
    str

    Examples
    --------
    >>> json_text({"b": [1, 1.0, None], "a": float("nan")})
    '{"b": [1, 1.0, null], "a": NaN}'
    >>> json_text({"b": [1, 1.0, None]})
    '{"b":[1,1.0,null]}'
    """
    if not has_non_finite(value):
        try:
            return orjson.dumps(value).decode("utf-8")
        except (orjson.JSONEncodeError, TypeError):
            pass
    return json.dumps(value, ensure_ascii=False)


def has_non_finite(value: Any) -> bool:
    """True if ``value`` holds a NaN or an infinite float anywhere (nested included)."""
    t = type(value)
    if t is float:
        return not math.isfinite(value)
    if t is dict:
        return any(has_non_finite(v) for v in value.values())
    if t is list:
        return any(has_non_finite(v) for v in value)
    return False


def _fixed_offset(text: str) -> _dt.timezone:
    """The time zone of an ISO suffix: ``Z``, ``+01:00`` or ``-0530``."""
    if text == "Z":
        return _dt.UTC
    digits = text[1:].replace(":", "")
    delta = _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return _dt.timezone(-delta if text[0] == "-" else delta)


def format_timestamp(ts: pd.Timestamp, template: Any = None) -> str:
    """Write ``ts`` as an ISO string in the format of ``template`` (an original cell).

    A date-only template gives ``YYYY-MM-DD`` (unless ``ts`` has a time of day, which
    is then kept); a date-time template gives the same separator, seconds, number of
    fraction digits and time-zone style (``Z`` or an offset). Without a usable
    template, :meth:`pandas.Timestamp.isoformat`.
    """
    if not isinstance(template, str):
        return ts.isoformat()
    midnight = ts.hour == ts.minute == ts.second == ts.microsecond == ts.nanosecond == 0
    if _DATE_ONLY.fullmatch(template):
        return ts.strftime("%Y-%m-%d") if midnight else ts.isoformat()
    match = _DATETIME.fullmatch(template)
    if match is None:
        return ts.isoformat()
    tz = match["tz"]
    if tz and ts.tzinfo is not None:
        ts = ts.tz_convert(_fixed_offset(tz))  # the template's own zone
    text = ts.strftime("%Y-%m-%d") + match["sep"] + ts.strftime("%H:%M")
    fraction_digits = len(match["frac"]) - 1 if match["frac"] else 0
    nanos = ts.microsecond * 1000 + ts.nanosecond
    if match["sec"] or ts.second or nanos:
        text += ts.strftime(":%S")
    if fraction_digits or nanos:
        digits = f"{nanos:09d}"
        # keep the template's width, but never cut off digits that carry information
        width = max(fraction_digits, len(digits.rstrip("0")))
        text += "." + digits[:width]
    if ts.tzinfo is not None:
        if tz == "Z":
            text += "Z"
        else:
            offset = ts.strftime("%z")
            if tz is None or ":" in tz:
                offset = offset[:3] + ":" + offset[3:]
            text += offset
    elif tz == "Z":
        text += "Z"
    return text


def to_json_value(value: Any, template: Any = ABSENT, *, where: str = "") -> Any:
    """Convert a frame value to the JSON value to send, guided by ``template``.

    Parameters
    ----------
    value : Any
        The frame cell (numpy scalar, ``pd.Timestamp``, ``Decimal``, nested value...).
    template : Any, optional
        The original JSON value of the cell, or of its column when the cell had none.
        It decides ambiguous cases: an integral float goes back as an int where the
        original was an int, a timestamp takes the original's ISO format, a
        ``Decimal`` becomes a string where the original was a string.
    where : str, optional
        Where the value sits (e.g. ``"row 3, column 'amount'"``), for the error message.

    Returns
    -------
    Any
        A JSON value. Missing values become ``None``. Infinity is returned as is (the
        completeness check reports it; it is never sent).

    Raises
    ------
    DataShapeError
        If the value has no JSON form.
    """
    if is_missing_cell(value):
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        if (
            type(template) is int
            and number.is_integer()
            and abs(number) <= _FLOAT_EXACT_INT
            and not (number == 0 and math.copysign(1.0, number) < 0)
        ):  # an int column edited through a float dtype stays int (not -0.0: no int has it)
            return int(number)
        return number
    if isinstance(value, str):
        return str(value)
    if isinstance(value, pd.Timestamp):
        return format_timestamp(value, template)
    if isinstance(value, _dt.datetime | np.datetime64):
        return format_timestamp(pd.Timestamp(value), template)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            return float(value)
        if type(template) is int and value == value.to_integral_value():
            return int(value)
        if type(template) is float:
            return float(value)
        return str(value)
    if isinstance(value, dict):
        return {
            str(k): to_json_value(v, template.get(k, ABSENT) if type(template) is dict else ABSENT)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | np.ndarray):
        items = list(value)
        inner = template if type(template) is list else []
        return [
            to_json_value(v, inner[i] if i < len(inner) else ABSENT, where=where)
            for i, v in enumerate(items)
        ]
    raise DataShapeError(
        f"cannot write a value of type {type(value).__name__} as JSON"
        + (f" ({where})" if where else "")
        + "; use a number, string, boolean, date, list or dict"
    )


def same_instant(original: Any, value: Any) -> bool:
    """True if ``original`` is an ISO date string for the same instant as ``value``."""
    if not isinstance(original, str):
        return False
    try:
        parsed = pd.Timestamp(original)
        other = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        return False
    if (parsed.tzinfo is None) != (other.tzinfo is None):
        return False
    return bool(parsed == other)


def cell_changed(original: Any, value: Any, template: Any = ABSENT) -> tuple[bool, Any]:
    """Decide whether a frame cell changed from its original JSON value.

    Parameters
    ----------
    original : Any
        The original JSON value, or ``ABSENT`` when the row had no such key.
    value : Any
        The frame cell now.
    template : Any, optional
        A sample JSON value of the column, used when ``original`` is missing.

    Returns
    -------
    (bool, Any)
        Whether the cell changed, and (when it did) the JSON value to write.
    """
    if value is original:
        return False, None
    new_missing = is_missing_cell(value)
    if is_missing_json(original):
        if new_missing:
            return False, None
        if type(value) is float:  # an object column's own float (a dtype's is numpy's)
            return True, value  # as it is, as below: not an int after the template
        return True, to_json_value(value, template)
    if new_missing:
        return True, None
    if isinstance(value, pd.Timestamp | _dt.datetime | np.datetime64) and same_instant(
        original, value
    ):
        return False, None
    if type(value) in _PLAIN_NUMBERS and type(original) in _PLAIN_NUMBERS \
            and type(value) is not type(original):  # fmt: skip
        # a Python int or float, not a numpy scalar: the cell of an object column, which
        # keeps the distinction, so 1 -> 1.0 is an edit there (a Float64 column's 1.0 is
        # an np.float64 and keeps the original's int)
        return True, value
    converted = to_json_value(value, original)
    return (not json_equal(original, converted)), converted


_PLAIN_NUMBERS = (int, float)
