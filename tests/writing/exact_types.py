"""The columns the exactness oracle adds for every other declared type (its slow run).

``tests/writing/test_exact_writes.py`` covers STRING, INTEGER, DOUBLE and BOOLEAN in
every run; its slow run adds a column here for each other rule of
:data:`~mddframes.codec.dtypes.DTYPE_RULES`: DECIMAL (exact text), DATE, TIMESTAMP with a
zone (``Z`` with microseconds, and a ``+05:30`` offset), TIMESTAMP whose values carry no
zone, DATETIME (the types without a zone), JSON objects and JSON lists.

Each edit is drawn as a pair: the value a user sets in the frame (a ``pd.Timestamp`` for
a date, a dict or list for a JSON cell) and the JSON the service must then hold, written
here from the documented wire format, apart from the library: a date as ``YYYY-MM-DD``,
a date-time in the format and zone of the column's other cells (every cell of a column
has one format here, so the format an edit takes is never ambiguous).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pandas as pd
from codec_strategies import BIG_INTS, DATES, DATETIMES, NAMES, TEXT
from hypothesis import strategies as st

#: The declared types of the codec's dtype rule, written here apart from the codec:
#: each rule's name and a spelling of it (the slow oracle declares a column with each).
DECLARED_TYPES = {
    "STRING": "STRING",
    "INTEGER": "BIGINT",
    "DOUBLE": "DOUBLE",
    "DECIMAL": "DECIMAL(22,2)",
    "BOOLEAN": "BOOLEAN",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP",
    "TIMESTAMP without zone": "DATETIME",
    "JSON": "JSON",
}

PLUS_0530 = dt.timezone(dt.timedelta(hours=5, minutes=30))
AT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"  # UTC, microseconds
WALL_FORMAT = "%Y-%m-%dT%H:%M:%S"  # seconds, no zone (or the +05:30 appended)

# JSON leaves whose writing is unambiguous: a float that is integral within 2**53 goes
# back as an int where the cell's original held an int (documented: to_json_value)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: not f.is_integer() or abs(f) > 2**53
)
_LEAVES = st.one_of(st.none(), st.booleans(), BIG_INTS, _FLOATS, TEXT)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=6,
)


@dataclass(frozen=True)
class Column:
    """A column of the oracle's table: its declaration, the rule it exercises, its
    original cell in row ``i`` (``ABSENT``: no key), and its edits as (frame, JSON) pairs."""

    name: str
    data_type: str
    rule: str
    original: Any  # Callable[[int], Any]
    edits: st.SearchStrategy[tuple[Any, Any]]


ABSENT = object()


def _same(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, Any]]:
    """Edits whose frame value is their JSON value (text, numbers, booleans, JSON cells)."""
    return strategy.map(lambda v: (v, v))


def _or_none(strategy: st.SearchStrategy[tuple[Any, Any]]) -> st.SearchStrategy[tuple[Any, Any]]:
    return st.one_of(st.just((None, None)), strategy)


def _at(t: dt.datetime) -> tuple[Any, Any]:
    return pd.Timestamp(t, tz="UTC"), t.strftime(AT_FORMAT)


def _local(t: dt.datetime) -> tuple[Any, Any]:
    # the user sets the instant (in the column's UTC); the service keeps the cells' offset
    instant = pd.Timestamp(t.replace(microsecond=0, tzinfo=PLUS_0530)).tz_convert("UTC")
    return instant, t.strftime(WALL_FORMAT) + "+05:30"


def _wall(t: dt.datetime) -> tuple[Any, Any]:
    return pd.Timestamp(t.replace(microsecond=0)), t.strftime(WALL_FORMAT)


def _moment(i: int) -> dt.datetime:
    return dt.datetime(1900, 1, 1) + dt.timedelta(days=97 * i, seconds=7919 * i, microseconds=i)


def _gap(i: int, value: Any) -> Any:
    """Null every sixth row, no key every eleventh (before the null)."""
    return ABSENT if i % 11 == 5 else None if i % 6 == 3 else value


DECIMALS = ["12.30", "-0.00", "0.10", "100000000000000000000.01", "7"]
ATTRS: list[Any] = [{"k": 1, "s": "x"}, {"nested": {"a": [1, 2.5, None]}}, {}, {"b": True}]
TAGS: list[Any] = [[1, "a"], [], [{"x": 1.5}], ["<NA>", None]]

#: The columns the slow run adds (the fast run's four are test_exact_writes.COLUMNS).
EXTRA_COLUMNS = [
    Column("price", "DECIMAL(22,2)", "DECIMAL", lambda i: _gap(i, DECIMALS[i % 5]),
           _or_none(_same(st.one_of(
               st.decimals(places=2, allow_nan=False, allow_infinity=False).map(str),
               st.sampled_from(["<NA>", "", "nan"]))))),
    Column("day", "DATE", "DATE", lambda i: _gap(i, _moment(i).date().isoformat()),
           _or_none(DATES.map(lambda d: (pd.Timestamp(d), d.isoformat())))),
    Column("at", "TIMESTAMP", "TIMESTAMP", lambda i: _gap(i, _moment(i).strftime(AT_FORMAT)),
           _or_none(DATETIMES.map(_at))),
    Column("local", "TIMESTAMPTZ", "TIMESTAMP",
           lambda i: _gap(i, _moment(i).strftime(WALL_FORMAT) + "+05:30"),
           _or_none(DATETIMES.map(_local))),
    Column("logged", "TIMESTAMP", "TIMESTAMP",  # values without a zone: naive
           lambda i: _gap(i, _moment(i).strftime(WALL_FORMAT)), _or_none(DATETIMES.map(_wall))),
    Column("naive", "DATETIME", "TIMESTAMP without zone",
           lambda i: _gap(i, _moment(i).strftime(WALL_FORMAT)), _or_none(DATETIMES.map(_wall))),
    Column("attrs", "JSON", "JSON", lambda i: _gap(i, ATTRS[i % 4]),
           _or_none(_same(st.dictionaries(NAMES, _JSON, max_size=3)))),
    Column("tags", "ARRAY", "JSON", lambda i: _gap(i, TAGS[i % 4]),
           _or_none(_same(st.lists(_JSON, max_size=3)))),
]  # fmt: skip
