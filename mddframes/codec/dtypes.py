"""The dtype of every table column, decided by its declared type: :data:`DTYPE_RULES`.

A table column's dtype follows its declared ``dataType`` (``metadata.columns``), never
its values: a table full, empty or all-null, every chunk of ``iter_tables`` and both
dtype backends give a column declared with one type the same dtype. The rule is one
table, :data:`DTYPE_RULES` (declared type x backend -> dtype, and what a value that
does not fit does), rendered into the guide's reading page (:func:`rules_markdown`)
and pinned by ``tests/frames/test_dtype_rules.py``. The rest of this module builds
the arrays: :func:`column_array` for a table's declared and undeclared columns, and
:func:`infer_array` for what has no declaration at all (mapping rows, listings), whose
dtypes follow the values:

=====================================  =============================================
values (ignoring nulls and absent keys)  dtype (:func:`infer_array`)
=====================================  =============================================
all booleans                            ``boolean``
all integers within int64               ``Int64``
all integers, some beyond int64         ``object`` holding Python ints
integers and floats, ints within 2**53  ``Float64`` (every int is exact in a float)
all strings                             ``string`` (ids keep leading zeros; decimals
                                        and dates written as strings stay strings)
nested values, mixed types, nothing     ``object`` holding the JSON values
=====================================  =============================================

A value that does not fit its declared type keeps the column exact: the column takes
the dtype :func:`infer_array` gives its values, and the reader warns
(:class:`~mddframes.errors.DeclaredTypeWarning`, naming the column).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from mddframes.codec.iso_dates import (
    datetime_array,
    parse_iso,
)
from mddframes.errors import DeclaredTypeWarning, issue_warning

__all__ = [
    "DTYPE_RULES",
    "STRING_DTYPE",
    "TIME_UNIT",
    "UNDECLARED",
    "UNBUILT_DTYPES",
    "DtypeRule",
    "UnbuiltColumn",
    "column_array",
    "conform_datetimes",
    "declared_dtype",
    "in_time_unit",
    "datetime_array",
    "infer_array",
    "no_value_dtype",
    "parse_iso",
    "rules_markdown",
    "type_family",
    "value_types",
]

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

#: The one time unit of every date and date-time column (and of a snapshot's Parquet
#: timestamps): microseconds, which every common engine reads (Spark has no nanoseconds).
TIME_UNIT: Literal["us"] = "us"
#: The dtype of a DATE column, and of date-times whose values carry no zone.
NAIVE_DTYPE = np.dtype(f"datetime64[{TIME_UNIT}]")
#: The dtype of a TIMESTAMP column: every instant in UTC.
UTC_DTYPE = pd.DatetimeTZDtype(unit=TIME_UNIT, tz="UTC")


class _Undeclared:
    """The declared type of a table's column that ``metadata.columns`` does not declare."""

    def __repr__(self) -> str:
        return "UNDECLARED"


#: What a table reader passes as the ``dataType`` of a row key its table does not
#: declare (:func:`column_array` then treats it as an unknown type).
UNDECLARED: Any = _Undeclared()


@dataclass(frozen=True)
class DtypeRule:
    """One row of :data:`DTYPE_RULES`: a declared type and the dtype it gives.

    Attributes
    ----------
    declared : str
        The declared type (its family: every spelling in ``spellings`` reads the same).
    spellings : str
        The ``dataType`` spellings of the family (case-insensitive, parameters such as
        ``(20)`` ignored).
    numpy_nullable : str
        The dtype under ``dtype_backend="numpy_nullable"`` (the default).
    pyarrow : str
        The dtype under ``dtype_backend="pyarrow"``.
    misfit : str
        What a value that does not fit the declared type does.
    """

    declared: str
    spellings: str
    numpy_nullable: str
    pyarrow: str
    misfit: str


_INFERRED = "the column takes the dtype its values infer (module table), with a DeclaredTypeWarning"

#: The dtype rule: declared type x backend -> dtype, full, empty or all-null alike.
DTYPE_RULES: tuple[DtypeRule, ...] = (
    DtypeRule("STRING", "STRING, VARCHAR, CHAR, TEXT, CLOB, UUID...", "string",
              "string[pyarrow]", _INFERRED),
    DtypeRule("INTEGER", "INTEGER, BIGINT, SMALLINT, TINYINT, LONG, INT64...", "Int64",
              "int64[pyarrow]",
              "an integer beyond 64 bits: object holding the exact Python ints (both "
              "backends), with a DeclaredTypeWarning naming the column; other misfits: "
              + _INFERRED),
    DtypeRule("DOUBLE", "DOUBLE, FLOAT, REAL, NUMBER...", "Float64", "double[pyarrow]",
              "an integer beyond 2**53 (not exact in a float): object; " + _INFERRED),
    DtypeRule("DECIMAL", "DECIMAL, NUMERIC, MONEY", "string", "string[pyarrow]",
              "decimals travel as strings and stay exact text; JSON numbers (within "
              "2**53): Float64 / double[pyarrow], with a DeclaredTypeWarning"),
    DtypeRule("BOOLEAN", "BOOLEAN, BOOL, BIT, LOGICAL", "boolean", "bool[pyarrow]",
              _INFERRED),
    DtypeRule("DATE", "DATE", f"datetime64[{TIME_UNIT}]", f"timestamp[{TIME_UNIT}][pyarrow]",
              "a value with a zone: the column is in UTC (as TIMESTAMP); not ISO 8601, "
              "or finer than a microsecond: the strings are kept (string), with a "
              "DeclaredTypeWarning"),
    DtypeRule("TIMESTAMP", "TIMESTAMP, TIMESTAMPTZ, TIMESTAMP WITH TIME ZONE, TIMESTAMP_TZ, "
              "TIMESTAMP_LTZ", f"datetime64[{TIME_UNIT}, UTC]",
              f"timestamp[{TIME_UNIT}, tz=UTC][pyarrow]",
              "zone rule: every offset is converted to UTC (exact; an edited cell is "
              "written back in its original's offset); values that all carry no zone are "
              "the one case where the values decide: naive datetime64[us] / "
              "timestamp[us][pyarrow]; naive and aware mixed, not ISO 8601, or finer "
              "than a microsecond: strings kept (string), with a DeclaredTypeWarning"),
    DtypeRule("TIMESTAMP without zone", "DATETIME, DATETIME2, TIMESTAMP_NTZ, TIMESTAMP "
              "WITHOUT TIME ZONE", f"datetime64[{TIME_UNIT}]",
              f"timestamp[{TIME_UNIT}][pyarrow]",
              "as TIMESTAMP, but a column without values is naive"),
    DtypeRule("JSON", "JSON, JSONB, OBJECT, ARRAY, STRUCT, MAP, VARIANT, LIST", "object",
              "object", "every JSON value fits (held as parsed)"),
    DtypeRule("unknown type", "any other dataType, or none", "string", "string[pyarrow]",
              "the values decide, in one direction only: any value that is not a string "
              "(number, boolean, nested) makes the column object (JSON values as they are)"),
    DtypeRule("undeclared key", "a row key metadata.columns does not declare", "string",
              "string[pyarrow]", "as an unknown type; a key no row has is no column"),
    DtypeRule("long frame: a name declared with different types", "read_tables, "
              "iter_tables, read_mappings, iter_mappings", "object", "object",
              "a name the tables declare with types of different dtypes is object in the "
              "long frame, in every chunk of an iter_tables run (the run reads every "
              "table's declarations before its first chunk); a column that values make "
              "differ (a misfit) is object from the chunk that shows it on; in a "
              "snapshot, a name of several types is JSON text in every file"),
)  # fmt: skip

#: The declared families with no zone of their own: a column without values is naive.
_LOCAL_TIMES = frozenset({"datetime", "datetime2", "timestamp_ntz", "timestamp without time zone"})


def rules_markdown() -> str:
    """:data:`DTYPE_RULES` as a Markdown table (what the docs build puts in the guide).

    Returns
    -------
    str
        One header row and one row per rule.
    """
    lines = [
        "| declared type | spellings | numpy_nullable | pyarrow | a value that does not fit |",
        "|---|---|---|---|---|",
    ]
    for rule in DTYPE_RULES:
        lines.append(
            f"| {rule.declared} | {rule.spellings} | `{rule.numpy_nullable}` | "
            f"`{rule.pyarrow}` | {rule.misfit} |"
        )
    return "\n".join(lines) + "\n"


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
    if family == "decimal" and types <= {str}:
        return "string"
    if family in ("float", "decimal"):  # JSON numbers in a DECIMAL column: warned
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


def no_value_dtype(data_type: Any) -> Any:
    """The dtype of a declared DATE/TIMESTAMP column that holds no value (empty, all null).

    Parameters
    ----------
    data_type : str
        The declared ``dataType``.

    Returns
    -------
    numpy.dtype or pandas.DatetimeTZDtype
        ``datetime64[us]`` for DATE and the date-times without a zone, else
        ``datetime64[us, UTC]`` (:data:`DTYPE_RULES`).
    """
    name = _PARAMETERS.sub("", data_type).strip().lower() if isinstance(data_type, str) else ""
    if type_family(data_type) == "date" or name in _LOCAL_TIMES:
        return NAIVE_DTYPE
    return UTC_DTYPE


def declared_dtype(data_type: Any) -> str:
    """The dtype :data:`DTYPE_RULES` gives a declared type (numpy_nullable), as text.

    What tells whether two tables' declarations of one name can share a column: equal
    texts, one dtype (``VARCHAR`` and ``DECIMAL`` are both ``string``; ``INT`` and
    ``BIGINT`` both ``Int64``). Values may still decide where the rule says so (a value
    that does not fit, a ``TIMESTAMP`` whose values carry no zone).

    Parameters
    ----------
    data_type : str or None
        A declared ``dataType`` (None or unknown: text).

    Returns
    -------
    str
        The dtype's name, e.g. ``"string"``, ``"Int64"``, ``"datetime64[us, UTC]"``.

    Examples
    --------
    >>> declared_dtype("VARCHAR(20)"), declared_dtype("BIGINT"), declared_dtype("DATE")
    ('string', 'Int64', 'datetime64[us]')
    """
    family = type_family(data_type)
    if family in ("date", "datetime"):
        return str(no_value_dtype(data_type))
    return _DECLARED_DTYPES.get(family, "string")


_DECLARED_DTYPES: dict[str | None, str] = {
    "integer": "Int64", "float": "Float64", "boolean": "boolean", "json": "object",
}  # fmt: skip


def conform_datetimes(array: Any) -> Any | None:
    """A parsed date column in the rule's unit and zone, or None if it cannot be exact.

    Parameters
    ----------
    array : pandas.arrays.DatetimeArray
        The parse of a column's ISO strings (any unit, naive or in any zone).

    Returns
    -------
    pandas.arrays.DatetimeArray or None
        The same instants in microseconds (:data:`TIME_UNIT`), an aware column in UTC;
        None when a value has a fraction finer than a microsecond (the caller keeps
        the strings rather than round).
    """
    dtype = array.dtype
    if getattr(dtype, "tz", None) is not None and str(dtype.tz) != "UTC":
        array = array.tz_convert("UTC")
    unit = array.unit
    if unit == TIME_UNIT:
        return array
    if unit == "ns":
        ticks = array.asi8
        if np.any((ticks % 1000 != 0) & ~np.asarray(array.isna())):
            return None
    return array.as_unit(TIME_UNIT)


def in_time_unit(column: pd.Series) -> pd.Series:
    """A parsed date-time Series in :data:`TIME_UNIT` (UTC if aware), when that is exact.

    Parameters
    ----------
    column : pandas.Series
        ``datetime64`` values (a listing's ``created_at``, an element's ``modified_at``).

    Returns
    -------
    pandas.Series
        The same instants in microseconds; ``column`` itself when a value is finer.
    """
    array = conform_datetimes(column.array)
    return column if array is None else pd.Series(array, index=column.index, name=column.name)


def _misfit(name: Any, data_type: Any, warn: bool) -> None:
    if warn:
        issue_warning(
            f"column {name!r}: its values do not fit its declared dataType {data_type!r}; "
            "it takes the dtype its values give (see mddframes.codec.dtypes.DTYPE_RULES)",
            DeclaredTypeWarning,
        )
    else:
        logger.debug("column %r: values do not fit dataType %r; inferring", name, data_type)


def column_array(
    values: list[Any],
    data_type: Any = None,
    *,
    name: Any = None,
    unbuilt: bool = False,
    warn: bool = False,
) -> Any:
    """Build the array of one column from its JSON values.

    Parameters
    ----------
    values : list
        One value per row; ``None`` for a null or an absent key.
    data_type : str, optional
        The declared ``dataType`` of the column; :data:`UNDECLARED` for a table's row
        key that ``metadata.columns`` does not declare; None (no declarations at all:
        a mapping's rows) infers the dtype from the values.
    name : str, optional
        The column name, for the log line when the declared type does not fit.
    unbuilt : bool, default False
        Return any column but a date column as :class:`UnbuiltColumn` (its values and
        the kind of array they make, unbuilt).
    warn : bool, default False
        Warn (:class:`~mddframes.errors.DeclaredTypeWarning`) when the values do not
        fit the declared type (a reader's frame); else a DEBUG line.

    Returns
    -------
    pandas ExtensionArray or numpy.ndarray or UnbuiltColumn
        An array of the dtype :data:`DTYPE_RULES` gives the declared type when every
        value fits it, else of the inferred dtype. Nothing is ever rounded, truncated
        or stringified.
    """
    types, values = _classify(values)
    family = type_family(data_type)
    if family is None:
        if data_type is None:  # no declarations at all (a mapping): the values decide
            untyped = _inferred_kind(types, values)
        else:  # undeclared key, unknown type: text (even with no value), else JSON values
            untyped = "string" if types <= {str} else "object"
        return UnbuiltColumn(values, untyped) if unbuilt else _BUILDERS[untyped](values)
    kind: str | None = _declared_kind(types, values, family)
    if family == "decimal" and kind == "float":
        _misfit(name, data_type, warn)  # numbers where the wire has decimal strings
    if kind == "dates":
        array = datetime_array(values)
        array = None if array is None else conform_datetimes(array)
        if array is not None:
            return array
        kind = None
    if kind == "nat":
        return pd.array([None] * len(values), dtype=no_value_dtype(data_type))
    if kind is None:
        _misfit(name, data_type, warn)
        kind = _inferred_kind(types, values)
    if unbuilt:
        return UnbuiltColumn(values, kind)
    return _BUILDERS[kind](values)
