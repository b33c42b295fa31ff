"""Column values -> a pandas array with the right dtype, without losing information.

A declared ``dataType`` (from the table's column metadata) is used when every value of
the column fits it; otherwise, and for undeclared columns, the dtype is inferred from
the values:

=====================================  =============================================
values (ignoring nulls and absent keys)  dtype
=====================================  =============================================
all booleans                            ``boolean``
all integers within int64               ``Int64``
all integers, some beyond int64         ``object`` holding Python ints
integers and floats, ints within 2**53  ``Float64`` (every int is exact in a float)
all strings                             ``string`` (ids keep leading zeros; decimals
                                        and dates written as strings stay strings)
nested values, mixed types, nothing     ``object`` holding the JSON values
=====================================  =============================================

Declared date and date-time columns whose strings all parse as ISO 8601 become
``datetime64``; declared numbers whose values are strings stay strings.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

#: The string dtype of every text column: Python storage, so the frame shares the
#: payload's ``str`` objects instead of copying them (and behaves the same on pandas
#: 2.2 and 3.x, with or without pyarrow).
STRING_DTYPE = pd.StringDtype("python")

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_FLOAT_EXACT_INT = 2**53

_FAMILIES: dict[str, tuple[str, ...]] = {
    "string": (
        "string", "str", "text", "varchar", "varchar2", "nvarchar", "nvarchar2", "char",
        "nchar", "character", "clob", "nclob", "uuid", "guid", "longtext",
    ),
    "integer": (
        "int", "integer", "bigint", "smallint", "tinyint", "long", "short", "int8", "int16",
        "int32", "int64", "serial", "bigserial",
    ),
    "float": ("float", "double", "real", "float32", "float64", "double precision", "number"),
    "decimal": ("decimal", "numeric", "money", "dec"),
    "boolean": ("boolean", "bool", "bit", "logical"),
    "date": ("date",),
    "datetime": (
        "datetime", "timestamp", "timestamptz", "timestamp with time zone",
        "timestamp without time zone", "datetime2", "timestamp_ntz", "timestamp_tz",
        "timestamp_ltz",
    ),
    "json": ("json", "jsonb", "object", "array", "struct", "map", "variant", "list"),
}  # fmt: skip
_FAMILY_OF = {name: family for family, names in _FAMILIES.items() for name in names}
_PARAMETERS = re.compile(r"\s*\(.*\)\s*$")


def type_family(data_type: Any) -> str | None:
    """The family of a declared ``dataType`` (``"VARCHAR(20)"`` -> ``"string"``).

    Returns
    -------
    str or None
        One of string, integer, float, decimal, boolean, date, datetime, json; None for
        a missing or unknown type (the column is then inferred).
    """
    if not isinstance(data_type, str):
        return None
    name = _PARAMETERS.sub("", data_type).strip().lower()
    return _FAMILY_OF.get(name)


def value_types(values: list[Any]) -> set[type]:
    """The Python types of the non-null values (a NaN float counts as null)."""
    types = set(map(type, values))
    types.discard(type(None))
    if float in types and not any(type(v) is float and v == v for v in values):
        types.discard(float)
    return types


def _classify(values: list[Any]) -> tuple[set[type], list[Any]]:
    """:func:`value_types`, and the values with NaN floats as None when they are all NaN.

    (A NaN only comes from a ``NaN`` literal, which ``json.loads`` accepts: in a column
    of ints or booleans it is a missing value, not a reason to fail or to say False.)
    """
    types = set(map(type, values))
    types.discard(type(None))
    # all-NaN floats count as nulls; any() stops at the first real float
    if float in types and not any(type(v) is float and v == v for v in values):
        types.discard(float)
        values = [None if type(v) is float else v for v in values]
    return types, values


def _object_array(values: list[Any]) -> np.ndarray:
    # np.fromiter keeps each value as one object (np.array would turn lists into axes)
    return np.fromiter(values, dtype=object, count=len(values))


def _ints_fit(values: list[Any], low: int, high: int) -> bool:
    ints = [v for v in values if type(v) is int]
    return not ints or (low <= min(ints) and max(ints) <= high)


# The masked arrays are built from numpy data and a mask directly: pd.array() would
# infer the type of every value again, which costs more than the whole column here.


def _missing_mask(values: list[Any]) -> np.ndarray:
    return np.fromiter((v is None for v in values), dtype=bool, count=len(values))


def _int_array(values: list[Any]) -> Any:
    """``Int64`` of ints within int64 and Nones (checked by the caller)."""
    data = np.array([0 if v is None else v for v in values], dtype=np.int64)
    return pd.arrays.IntegerArray(data, _missing_mask(values))


def _float_array(values: list[Any]) -> Any:
    """``Float64`` of ints within 2**53, floats and Nones (checked by the caller)."""
    # NaN and None both become NA: the overlay treats them alike (both "no value")
    data = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    return pd.arrays.FloatingArray(data, np.isnan(data))


def _bool_array(values: list[Any]) -> Any:
    """``boolean`` of bools and Nones (checked by the caller)."""
    data = np.fromiter((v is True for v in values), dtype=bool, count=len(values))
    return pd.arrays.BooleanArray(data, _missing_mask(values))


def infer_array(values: list[Any], types: set[type] | None = None) -> Any:
    """The array of a column with no usable declared type (see the module table)."""
    if types is None:
        types, values = _classify(values)
    return _BUILDERS[_inferred_kind(types, values)](values)


def _inferred_kind(types: set[type], values: list[Any]) -> str:
    """The kind of array :func:`infer_array` makes of values of these types."""
    if types == {bool}:
        return "bool"
    if types == {int}:
        return "int" if _ints_fit(values, _INT64_MIN, _INT64_MAX) else "object"
    if types == {float} or types == {int, float}:
        return "float" if _ints_fit(values, -_FLOAT_EXACT_INT, _FLOAT_EXACT_INT) else "object"
    if types == {str}:
        return "string"
    return "object"


def _declared_kind(types: set[type], values: list[Any], family: str) -> str | None:
    """The kind of array a declared family makes of values of these types; None when
    they do not fit it. ``"dates"``: ISO strings to parse (they may still not be dates);
    ``"nat"``: a date column without a value."""
    if family == "string":
        return "string" if types <= {str} else None
    if family == "integer":
        fits = types <= {int} and _ints_fit(values, _INT64_MIN, _INT64_MAX)
        return "int" if fits else None
    if family in ("float", "decimal"):
        if types <= {str} and family == "decimal":
            return "string"
        fits = types <= {int, float} and _ints_fit(values, -_FLOAT_EXACT_INT, _FLOAT_EXACT_INT)
        return "float" if fits else None
    if family == "boolean":
        return "bool" if types <= {bool} else None
    if family in ("date", "datetime"):
        return None if not types <= {str} else "dates" if types else "nat"
    return "object"  # json


def _string_array(values: list[Any]) -> Any:
    return pd.array(values, dtype=STRING_DTYPE)


#: What builds each kind of array (the dates are parsed by column_array itself).
_BUILDERS: dict[str, Callable[[list[Any]], Any]] = {
    "string": _string_array, "int": _int_array, "float": _float_array, "bool": _bool_array,
    "object": _object_array,
}  # fmt: skip
#: The kinds of array a column may be left unbuilt as (:class:`UnbuiltColumn`), and
#: the dtype of each (``object``: the values as they are, in a numpy array).
UNBUILT_DTYPES: dict[str, Any] = {
    "string": STRING_DTYPE, "int": pd.Int64Dtype(), "float": pd.Float64Dtype(),
    "bool": pd.BooleanDtype(), "object": np.dtype(object),
}  # fmt: skip


@dataclass(frozen=True, eq=False)
class UnbuiltColumn:
    """A column's values, left unbuilt, and the kind of array they would make.

    What :func:`column_array` returns with ``unbuilt=True`` for every column but the
    dates: a writer that turns the columns of many small tables into another form (a
    snapshot's Arrow columns) builds each from the joined values of all the tables at
    once, and no pandas array is made.

    Attributes
    ----------
    values : list
        The column's values as :func:`column_array` builds from them (a NaN that
        counts as missing already None; in a ``float`` column a NaN is missing too).
    kind : {"string", "int", "float", "bool", "object"}
        The array's kind: ``string``, ``Int64``, ``Float64``, ``boolean``, or a numpy
        ``object`` array of the values (:data:`UNBUILT_DTYPES`).
    """

    values: list[Any]
    kind: str

    @property
    def dtype(self) -> Any:
        """The dtype of the array :meth:`array` builds."""
        return UNBUILT_DTYPES[self.kind]

    def __len__(self) -> int:
        return len(self.values)

    def array(self) -> Any:
        """The array :func:`column_array` would have returned."""
        return _BUILDERS[self.kind](self.values)


_TZ_SUFFIX = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")
# Plain ISO 8601 dates and date-times, naive or with a zone: the forms whose zone is
# known for sure without asking pandas (group "zone").
_PLAIN_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?P<zone>Z|[+-]\d{2}:?\d{2})?)?"
)
_UNSURE = "?"
# Many plain ISO strings joined by newlines, and the zone at the end of each line: the
# zones of a whole column by two regex passes instead of one match per value.
_PLAIN_ONE = _PLAIN_ISO.pattern.replace("(?P<zone>", "(?:")
# (one line at a time, counted by subn in C: a single match repeated over 100,000 lines
# would keep a backtracking mark per line, hundreds of megabytes)
_PLAIN_LINE = re.compile(rf"^(?:{_PLAIN_ONE})$", re.MULTILINE)
_ZONE_AT_END = re.compile(r"(Z|[+-]\d{2}:?\d{2})$", re.MULTILINE)
_RELATIVE = frozenset({"now", "today"})


def _zone(text: str) -> str | None:
    """The zone of a plain ISO string (``+HHMM``, ``Z`` = ``+0000``), None if naive, or
    ``_UNSURE`` for any other form (only pandas knows)."""
    match = _PLAIN_ISO.fullmatch(text)
    if match is None:
        return _UNSURE
    zone = match["zone"]
    if zone is None:
        return None
    if zone == "Z":
        return "+0000"
    zone = zone.replace(":", "")
    return "+0000" if zone == "-0000" else zone


def _normal_zone(zone: str) -> str:
    if zone == "Z":
        return "+0000"
    zone = zone.replace(":", "")
    return "+0000" if zone == "-0000" else zone


def _zones(values: list[Any]) -> set[str | None]:
    """``{_zone(v) for v in values if v is not None}``, for a whole column at once."""
    present = [v for v in values if v is not None]
    if not present:
        return set()
    joined = "\n".join(present)
    # a value holding a newline itself would blur the lines: then value by value
    if joined.count("\n") == len(present) - 1 and _PLAIN_LINE.subn("", joined)[1] == len(present):
        found = _ZONE_AT_END.findall(joined)
        zones: set[str | None] = {_normal_zone(zone) for zone in set(found)}
        if len(found) < len(present):
            zones.add(None)  # some lines have no zone: naive
        return zones
    return {_zone(v) for v in present}


def parse_iso(values: list[Any], *, utc: bool, naive: bool = False) -> Any | None:
    """ISO 8601 strings (and Nones) as a ``DatetimeIndex``; None if pandas refuses them."""
    try:
        if naive:
            # plain naive ISO strings: DatetimeIndex parses them as to_datetime(format=
            # "ISO8601") does (same values and unit, on pandas 2.2 and 3), 3x faster
            return pd.DatetimeIndex(values)
        # a list, not a Series: the same parse without building a Series first
        return pd.to_datetime(values, format="ISO8601", utc=utc)
    except (ValueError, TypeError, OverflowError):
        return None


@dataclass(frozen=True, eq=False)
class PendingDates:
    """A date column of one table, waiting to be parsed with the same column of others.

    Attributes
    ----------
    values : list of str or None
        The column's values.
    zone : str or None
        The zone all of them carry (``"+0000"``...), or None when all are naive.
    alone : callable
        Builds the column's array alone, as it would have been without waiting.
    """

    values: list[Any]
    zone: str | None
    alone: Callable[[], Any]


def datetime_array(values: list[Any]) -> Any | None:
    """The ``datetime64`` array of ISO 8601 strings and Nones, or None if they are not dates.

    Parameters
    ----------
    values : list of str or None
        A declared DATE/TIMESTAMP column's values (or a batch of them).

    Returns
    -------
    pandas.arrays.DatetimeArray or None
        The array :func:`column_array` gives the column; None when it keeps the strings.

    Notes
    -----
    One zone (or none) for all values: that zone. Offsets that differ from row to row:
    one instant per row is still exact in UTC (each edited cell is written back in its
    own row's offset). Naive and aware strings mixed have no common zone and stay
    strings (None).
    """
    zones = _zones(values)
    if _UNSURE in zones and any(v.strip().lower() in _RELATIVE for v in values if v is not None):
        return None  # pandas reads "now" as the time of the read: not a date of the data
    # Values in several zones (or naive and aware mixed) never share one dtype: pandas
    # refuses them (2.x with a FutureWarning and object dtype), so they skip that try.
    several = len(zones - {_UNSURE}) > 1
    parsed = None if several else parse_iso(values, utc=False, naive=zones == {None})
    if parsed is None or parsed.dtype == object:
        if not all(v is None or _TZ_SUFFIX.search(v) for v in values):
            return None
        parsed = parse_iso(values, utc=True)
        if parsed is None:
            return None
    if int(np.count_nonzero(parsed.isna())) != values.count(None):
        return None  # a string pandas reads as NaT ("", "NaT", "null"...) is not a date
    return parsed.array


def column_array(
    values: list[Any],
    data_type: Any = None,
    *,
    name: Any = None,
    defer_dates: bool = False,
    unbuilt: bool = False,
) -> Any:
    """Build the array of one column from its JSON values.

    Parameters
    ----------
    values : list
        One value per row; ``None`` for a null or an absent key.
    data_type : str, optional
        The declared ``dataType`` of the column, if any.
    name : str, optional
        The column name, for the log line when the declared type does not fit.
    defer_dates : bool, default False
        Return a declared date column of plain ISO strings as :class:`PendingDates`,
        to be parsed with the same column of other tables
        (:func:`~mddframes.codec.date_batch.resolve_dates`).
    unbuilt : bool, default False
        Return any column but a date column as :class:`UnbuiltColumn` (its values and
        the kind of array they make, unbuilt).

    Returns
    -------
    pandas ExtensionArray or numpy.ndarray or PendingDates or UnbuiltColumn
        An array of the declared dtype when every value fits it, else of the inferred
        dtype. Nothing is ever rounded, truncated or stringified.
    """
    types, values = _classify(values)
    family = type_family(data_type)
    kind = None if family is None else _declared_kind(types, values, family)
    if kind == "dates":
        if defer_dates:
            zones = _zones(values)
            if len(zones) == 1 and _UNSURE not in zones:
                return PendingDates(values, next(iter(zones)),
                                    lambda: column_array(values, data_type, name=name))  # fmt: skip
        array = datetime_array(values)
        if array is not None:
            return array
        kind = None
    if kind == "nat":
        return pd.array([None] * len(values), dtype="datetime64[ns]")
    if kind is None:
        if family is not None:
            logger.debug("column %r: values do not fit dataType %r; inferring", name, data_type)
        kind = _inferred_kind(types, values)
    if unbuilt:
        return UnbuiltColumn(values, kind)
    return _BUILDERS[kind](values)
