"""One spreadsheet cell <-> one frame value, per column *encoding*.

Each frame column gets an encoding from its dtype (:func:`encoding_of`); the encoding
decides how a value is written (:func:`encode`) and how a cell a reviewer may have
edited is read back (:func:`decode`):

==========  ======================  ==================================================
encoding    dtypes                  cells
==========  ======================  ==================================================
text        ``string``, ``str``     text cells (format ``@``): ``"004"``, ``"=SUM(A1)"``,
                                    ``"+1"`` stay strings, never formulas. An empty
                                    cell is NA; an empty string is the formula ``=""``
integer     ``Int64``, ``int64``..  numbers; beyond 15 digits (Excel keeps 15) text
number      ``Float64``, ``float``  numbers when Excel holds them exactly (15
                                    significant digits, normal range, not ``-0.0``);
                                    otherwise the ``repr`` as text (``0.1`` is a
                                    number, ``0.30000000000000004`` text)
boolean     ``boolean``, ``bool``   booleans (``TRUE``/``FALSE``); 1/0 and the words
                                    true/false are read as booleans too
datetime    ``datetime64[...]``     ISO 8601 text, in the original cell's own format
json        ``object``              JSON text per cell (nested values, lists, big
                                    integers, mixed types): ``"abc"`` with its quotes
==========  ======================  ==================================================

All text goes through :func:`escape_text` / :func:`unescape_text`, the ``_xHHHH_``
escaping of OOXML (what Excel itself writes), so control characters, ``\\r`` and the
characters XML cannot hold survive, and a literal ``_x0041_`` is not read as ``A``.

Workbooks come back from real spreadsheet programs, which write an unchanged value
their own way; :func:`raw_value` reads each of them as the value it stands for:

- LibreOffice Calc has no boolean cells: it saves ``TRUE`` as the formula
  ``=TRUE()`` (with its cached value). The formulas ``=TRUE()``, ``=FALSE()``,
  ``=TRUE`` and ``=FALSE`` are read as booleans, and ``=""`` as the empty string;
  any other formula is refused.
- Text in the shared-string table, inline or in rich-text runs is read as its plain
  text (:mod:`mddframes.spreadsheet.opening`), un-escaped once.
- Numbers keep their value whatever their number format; a serial number with a
  date style is read as the date it shows (openpyxl converts it).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
from openpyxl.cell import WriteOnlyCell

from mddframes.codec import depth
from mddframes.codec.values import format_timestamp, is_missing_cell, same_instant, to_json_value

Encoding = Literal["text", "integer", "number", "boolean", "datetime", "json"]

#: The encodings, in the order of :data:`Encoding`.
ENCODINGS: tuple[Encoding, ...] = get_args(Encoding)

#: Excel's limit of characters (UTF-16 code units) in one cell.
MAX_CELL_CHARS = 32_767

#: What an empty string is written as: a formula whose value is the empty string
#: (openpyxl, like Excel, writes a text cell holding "" as an empty cell, which is NA).
EMPTY_STRING_FORMULA = '=""'

_EXACT_DIGITS = 15  # Excel shows and edits 15 significant digits
_MAX_EXACT_INT = 10**_EXACT_DIGITS - 1
_EXCEL_MAX = 9.99999999999999e307
_EXCEL_MIN = 2.2250738585072014e-308

_TO_ESCAPE = re.compile(
    "[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]"  # XML cannot hold them; \r would become \n
    "|_(?=x[0-9A-Fa-f]{4}_)"  # a literal _xHHHH_ is escaped by escaping its underscore
)
# Every _xHHHH_ is an escape (ECMA-376 ST_Xstring; Excel and LibreOffice read them so):
# text is read still escaped, shared strings included (see opening.py), so one pass
# un-escapes it exactly, "_x005F_x0041_" giving the literal "_x0041_".
_ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")
# The formulas a spreadsheet program saves for a boolean it was given: LibreOffice
# writes TRUE() / FALSE(), and TRUE / FALSE are the same value.
_BOOLEAN_FORMULA = re.compile(r"=\s*(TRUE|FALSE)\s*(?:\(\s*\))?\s*", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(
    r"[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE
)
_ISO_DATETIME = re.compile(
    r"[+-]?\d{4,}-\d{2}-\d{2}(?:[T ]\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
    r"(?:Z|[+-]\d{2}(?::?\d{2})?)?)?"
)
_TRUE = {"true", "1"}
_FALSE = {"false", "0"}


class CellError(ValueError):
    """A cell that does not fit its column; the caller adds where it is."""


@dataclass(frozen=True, slots=True)
class Cell:
    """What to write into one cell.

    Attributes
    ----------
    value : Any
        None (an empty cell), a str (already escaped), an int, a float or a bool.
    style : {"empty", "text", "empty-text", "integer", "number", "boolean"}
        How to write it: ``text`` as a text cell (format ``@``), ``empty-text`` as the
        ``=""`` formula, numbers and booleans as such.
    """

    value: Any
    style: str


EMPTY = Cell(None, "empty")

_NUMBER_FORMATS = {"text": "@", "empty-text": "@", "integer": "0"}


def openpyxl_cell(sheet: Any, cell: Cell) -> Any:
    """What to append to a write-only openpyxl ``sheet`` for ``cell``."""
    if cell.style == "empty":
        return None
    if cell.style in ("number", "boolean"):
        return cell.value
    out = WriteOnlyCell(sheet, value=cell.value)
    if cell.style == "text":
        out.data_type = "s"  # never a formula or an error code, whatever the text
    out.number_format = _NUMBER_FORMATS[cell.style]
    return out


def escape_text(text: str) -> str:
    """Escape what a cell cannot hold as ``_xHHHH_`` (the OOXML rule Excel follows)."""
    return _TO_ESCAPE.sub(lambda m: f"_x{ord(m.group()):04X}_", text)


def unescape_text(text: str) -> str:
    """Undo :func:`escape_text`, and any ``_xHHHH_`` escape Excel or LibreOffice wrote."""
    if "_x" not in text:
        return text
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def text_cell(text: str) -> Cell:
    """A text cell holding ``text`` exactly (escaped; ``""`` as the ``=""`` formula).

    Raises
    ------
    CellError
        If the text is longer than a cell holds.
    """
    if text == "":
        return Cell(EMPTY_STRING_FORMULA, "empty-text")
    escaped = escape_text(text)
    if len(escaped) > MAX_CELL_CHARS // 2 and _utf16_length(escaped) > MAX_CELL_CHARS:
        raise CellError(
            f"the text has {len(text):,} characters, more than a spreadsheet cell holds "
            f"({MAX_CELL_CHARS:,} once escaped), so it cannot go through a workbook losslessly"
        )
    return Cell(escaped, "text")


# -- dtypes ---------------------------------------------------------------------------


def encoding_of(dtype: Any) -> Encoding | None:
    """The encoding of a column of ``dtype``, or None when no encoding keeps it exactly."""
    if isinstance(dtype, pd.StringDtype):
        return "text"
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "number"
    if isinstance(dtype, pd.DatetimeTZDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "M"):
        return "datetime"
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        return "json"
    return None


def dtype_name(dtype: Any) -> str:
    """A name :func:`dtype_from_name` turns back into ``dtype`` (string storage kept)."""
    if isinstance(dtype, pd.StringDtype):
        if dtype.na_value is pd.NA:
            return f"string[{dtype.storage}]"
        return "str"  # pandas 3's default string dtype (NaN as missing value)
    return str(dtype)


def dtype_from_name(name: str) -> Any:
    """The dtype of a name from :func:`dtype_name` (pandas 2.2 and 3.x)."""
    if name == "str":
        dtype = pd.api.types.pandas_dtype("str")
        return dtype if isinstance(dtype, pd.StringDtype) else pd.StringDtype("python")
    if name.startswith("string["):
        try:
            return pd.api.types.pandas_dtype(name)
        except ImportError:  # written where pyarrow was installed, read where it is not
            return pd.StringDtype("python")
    return pd.api.types.pandas_dtype(name)


def holds_missing(dtype: Any) -> bool:
    """Whether a column of ``dtype`` can hold a missing value (numpy ints and bools cannot)."""
    return not (isinstance(dtype, np.dtype) and dtype.kind in "iub")


def build_array(values: list[Any], dtype: Any) -> Any:
    """The array of a column of decoded values (None for missing) in ``dtype``.

    Raises
    ------
    CellError
        If the values do not convert.
    """
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        # np.fromiter keeps each value as one object (np.array would turn lists into axes)
        return np.fromiter(values, dtype=object, count=len(values))
    try:
        return pd.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise CellError(f"the values do not convert to dtype {dtype}: {exc}") from exc


# -- writing --------------------------------------------------------------------------


def _float_cell(number: float) -> Cell:
    exact = (
        math.isfinite(number)
        and (number == 0.0 or _EXCEL_MIN <= abs(number) <= _EXCEL_MAX)
        and not (number == 0.0 and math.copysign(1.0, number) < 0)
        # openpyxl writes "%.16g" and Excel edits 15 digits: both must give it back
        and float(f"{number:.15g}") == number
        and float(f"{number:.16g}") == number
    )
    return Cell(number, "number") if exact else text_cell(repr(number))


def encode(encoding: Encoding, value: Any, original: Any = None, template: Any = None) -> Cell:
    """The cell of one frame value.

    Parameters
    ----------
    encoding : str
        The column's encoding (see the module table).
    value : Any
        The frame cell.
    original : Any, optional
        For ``datetime``: the cell's original JSON value; written as is when it is the
        same instant, so a reviewer sees the service's own text.
    template : Any, optional
        For ``datetime``: a sample JSON value of the column, whose format a new or
        changed timestamp takes.

    Raises
    ------
    CellError
        If the value cannot be written exactly.
    """
    if encoding == "json":
        if is_missing_cell(value):
            return EMPTY
        text = depth.dumps(value, what="a cell", ensure_ascii=False, default=_json_default)
        return text_cell(text)
    if is_missing_cell(value):
        return EMPTY
    if encoding == "text":
        return text_cell(str(value))
    if encoding == "integer":
        number = int(value)
        if abs(number) <= _MAX_EXACT_INT:
            return Cell(number, "integer")
        return text_cell(str(number))
    if encoding == "number":
        return _float_cell(float(value))
    if encoding == "boolean":
        return Cell(bool(value), "boolean")
    if encoding == "datetime":
        stamp = pd.Timestamp(value)
        if isinstance(original, str) and same_instant(original, stamp):
            return text_cell(original)
        return text_cell(format_timestamp(stamp, template))
    raise CellError(f"unknown encoding {encoding!r}")


def _json_default(value: Any) -> Any:
    # numpy scalars, timestamps, decimals, pd.NA inside nested values: their JSON form
    converted = to_json_value(value)
    if converted is value:
        raise TypeError(f"{type(value).__name__} has no JSON form")
    return converted


# -- reading --------------------------------------------------------------------------


def raw_value(value: Any, data_type: str) -> Any:
    """A cell as openpyxl read it -> None, str (un-escaped), int, float, bool or datetime.

    A formula is read as the value it stands for when it is one a spreadsheet program
    writes for a plain value: ``=""`` (the empty string, what :func:`text_cell`
    writes) and ``=TRUE()``, ``=FALSE()``, ``=TRUE``, ``=FALSE`` (booleans, as
    LibreOffice Calc saves them).

    Raises
    ------
    CellError
        For any other formula, or an error value (``#N/A``...).
    """
    if value is None:
        return None
    if data_type == "f":
        if value == EMPTY_STRING_FORMULA:
            return ""
        boolean = _BOOLEAN_FORMULA.fullmatch(value) if isinstance(value, str) else None
        if boolean is not None:
            return boolean.group(1).upper() == "TRUE"
        raise CellError(
            f"holds the formula {value!r}; workbooks are read by value, not by formula: "
            "type the value itself (in a text cell a leading '=' stays text)"
        )
    if data_type == "e":
        raise CellError(f"holds the error value {value!r}")
    if isinstance(value, str):
        return unescape_text(value)
    return value


def _describe(raw: Any) -> str:
    if isinstance(raw, bool):
        return f"the boolean {str(raw).upper()}"
    if isinstance(raw, int | float):
        return f"the number {raw!r}"
    if isinstance(raw, _dt.datetime | _dt.date):
        return f"the date {raw.isoformat()}"
    return repr(raw)


def _decode_text(raw: Any) -> Any:
    if isinstance(raw, str):
        return raw
    raise CellError(
        f"holds {_describe(raw)}, but the column is text: format the cell as text "
        "(Format Cells > Text) and type the value again, so that codes keep their "
        "leading zeros"
    )


def _numeral(raw: str, pattern: re.Pattern[str], what: str) -> str | None:
    """A text cell's numeral, stripped; None when blank (``what``: "an integer"...)."""
    text = raw.strip()
    if text and not pattern.fullmatch(text):
        raise CellError(f"holds {raw!r}, which is not {what}")
    return text or None


def _decode_integer(raw: Any, dtype: Any) -> Any:
    if isinstance(raw, str):
        text = _numeral(raw, _INTEGER, "an integer")
        if text is None:
            return None
        number = int(text)
    elif isinstance(raw, bool) or not isinstance(raw, int | float):
        raise CellError(f"holds {_describe(raw)}, which is not an integer")
    elif isinstance(raw, float):
        if not (raw.is_integer() and abs(raw) <= 2**53):
            raise CellError(f"holds {_describe(raw)}, which is not an integer")
        number = int(raw)
    else:
        number = raw
    info = np.iinfo(dtype.numpy_dtype if hasattr(dtype, "numpy_dtype") else dtype)
    if not info.min <= number <= info.max:
        raise CellError(f"holds {number}, outside the range of dtype {dtype}")
    return number


def _decode_number(raw: Any) -> Any:
    if isinstance(raw, str):
        text = _numeral(raw, _NUMBER, "a number")
        if text is None:
            return None
        number = float(text)
        return None if math.isnan(number) else number
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise CellError(f"holds {_describe(raw)}, which is not a number")
    try:
        return float(raw)
    except OverflowError as exc:
        raise CellError(f"holds {raw}, too large for a float") from exc


def _decode_boolean(raw: Any) -> Any:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int | float) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        word = raw.strip().lower()
        if not word:
            return None
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise CellError(f"holds {_describe(raw)}, which is not a boolean (TRUE or FALSE)")


def _decode_datetime(raw: Any, dtype: Any) -> Any:
    if isinstance(raw, _dt.datetime | _dt.date):
        stamp = pd.Timestamp(raw)
    elif isinstance(raw, str):
        text = raw.strip()
        if not text:
            return None
        try:
            if not _ISO_DATETIME.fullmatch(text):
                raise ValueError(text)
            stamp = pd.Timestamp(text)  # far faster than to_datetime per cell
        except (ValueError, TypeError, OverflowError) as exc:
            raise CellError(
                f"holds {raw!r}, which is not an ISO 8601 date or date-time "
                "(e.g. 2024-03-01 or 2024-03-01T08:00:00Z)"
            ) from exc
    else:
        raise CellError(f"holds {_describe(raw)}, which is not a date (type ISO 8601 text)")
    zone = getattr(dtype, "tz", None)
    if zone is not None:
        if stamp.tzinfo is None and not isinstance(raw, str):
            raise CellError(
                f"holds {_describe(raw)}, a date cell, which has no time zone, but the "
                "column's times have one: type the date-time as text with its zone, e.g. "
                "2024-03-01T08:00:00Z (format the cell as text first)"
            )
        if stamp.tzinfo is None:
            raise CellError(
                f"holds {raw!r} without a time zone, but the column's times have one: "
                "add it, e.g. 'Z' for UTC or '+01:00'"
            )
        return stamp.tz_convert(zone)
    if stamp.tzinfo is not None:
        raise CellError(
            f"holds {raw!r} with a time zone, but the column's times have none: drop the offset"
        )
    return stamp


def _decode_json(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return depth.loads(raw, what="a cell")
        except json.JSONDecodeError as exc:
            raise CellError(
                f"holds {raw[:60]!r}{'...' if len(raw) > 60 else ''}, which is not valid JSON "
                f"({exc.msg} at character {exc.pos + 1}); write strings with double quotes, "
                'e.g. "abc", and nested values as JSON, e.g. {"k": 1} or [1, 2]'
            ) from exc
    if isinstance(raw, bool | int | float):
        return raw
    raise CellError(f"holds {_describe(raw)}; type the value as JSON text")


def decode(encoding: Encoding, raw: Any, dtype: Any) -> Any:
    """The frame value of a cell (None for missing), from its :func:`raw_value`.

    Raises
    ------
    CellError
        If the cell does not fit the column (never a silent NA).
    """
    if raw is None:
        return None
    if encoding == "text":
        return _decode_text(raw)
    if encoding == "integer":
        return _decode_integer(raw, dtype)
    if encoding == "number":
        return _decode_number(raw)
    if encoding == "boolean":
        return _decode_boolean(raw)
    if encoding == "datetime":
        return _decode_datetime(raw, dtype)
    if encoding == "json":
        return _decode_json(raw)
    raise CellError(f"unknown encoding {encoding!r}")


def plain_value(raw: Any) -> Any:
    """A cell of a column the workbook did not have (a reviewer added it), as JSON."""
    if isinstance(raw, _dt.datetime | _dt.date):
        return raw.isoformat()
    return raw
