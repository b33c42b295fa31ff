"""ISO 8601 date strings -> ``datetime64`` arrays: zones and the parse.

The parsing half of :mod:`mddframes.codec.dtypes` (which decides the dtype a declared
DATE/TIMESTAMP column gets, :data:`~mddframes.codec.dtypes.DTYPE_RULES`): which zone
each value carries, and whether pandas reads the strings as exactly these instants.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

_TZ_SUFFIX = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")
# Plain ISO 8601 dates and date-times, naive or with a zone: the forms whose zone is
# known for sure without asking pandas (group "zone").
_PLAIN_ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?P<zone>Z|[+-]\d{2}:?\d{2})?)?"
)
UNSURE = "?"
# Many plain ISO strings joined by newlines, and the zone at the end of each line: the
# zones of a whole column by two regex passes instead of one match per value.
_PLAIN_ONE = _PLAIN_ISO.pattern.replace("(?P<zone>", "(?:")
# (one line at a time, counted by subn in C: a single match repeated over 100,000 lines
# would keep a backtracking mark per line, hundreds of megabytes)
_PLAIN_LINE = re.compile(rf"^(?:{_PLAIN_ONE})$", re.MULTILINE)
_ZONE_AT_END = re.compile(r"(Z|[+-]\d{2}:?\d{2})$", re.MULTILINE)
_RELATIVE = frozenset({"now", "today"})


def zone_of(text: str) -> str | None:
    """The zone of a plain ISO string (``+HHMM``, ``Z`` = ``+0000``), None if naive, or
    ``UNSURE`` for any other form (only pandas knows)."""
    match = _PLAIN_ISO.fullmatch(text)
    if match is None:
        return UNSURE
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


def zones_of(values: list[Any]) -> set[str | None]:
    """``{zone_of(v) for v in values if v is not None}``, for a whole column at once."""
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
    return {zone_of(v) for v in present}


def parse_iso(values: list[Any], *, utc: bool, naive: bool = False) -> Any | None:
    """ISO 8601 strings (and Nones) as a ``DatetimeIndex``; None if pandas refuses them."""
    try:
        if naive:
            # plain naive ISO strings: DatetimeIndex parses them as to_datetime(format=
            # "ISO8601") does (same values and unit, on pandas 2.2 and 3), faster (docs/performance.md)
            return pd.DatetimeIndex(values)
        # a list, not a Series: the same parse without building a Series first
        return pd.to_datetime(values, format="ISO8601", utc=utc)
    except pd.errors.OutOfBoundsDatetime:
        return _parse_in_microseconds(values)
    except (ValueError, TypeError, OverflowError):
        return None


_EPOCH = datetime(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)
_FRACTION = re.compile(r"\.(\d+)")


def _parse_in_microseconds(values: list[Any]) -> Any | None:
    """Plain ISO strings beyond nanoseconds' years (1677-2262) as microseconds, or None.

    pandas 2.2 parses strings in nanoseconds only and refuses ``0001-01-01``, which
    pandas 3 reads in microseconds: the same column would be dates on one and strings on
    the other. Python's ``datetime`` reads years 1-9999 to the microsecond; the instant
    is counted in integers, so an offset that moves ``0001-01-01`` into year 0 stays
    exact, as it does in pandas 3.
    """
    ticks = np.empty(len(values), dtype=np.int64)
    aware: set[bool] = set()
    for row, text in enumerate(values):
        if text is None:
            ticks[row] = np.iinfo(np.int64).min  # NaT
            continue
        fraction = _FRACTION.search(text)
        if _PLAIN_ISO.fullmatch(text) is None or (fraction and fraction[1][6:].strip("0")):
            return None  # another form, or finer than a microsecond: never rounded
        stamp = datetime.fromisoformat(text)
        offset = stamp.utcoffset()
        aware.add(offset is not None)
        ticks[row] = (
            stamp.replace(tzinfo=None) - _EPOCH - (offset or timedelta(0))
        ) // _MICROSECOND
    if len(aware) > 1:
        return None  # naive and aware mixed: no common zone
    index = pd.DatetimeIndex(ticks.view("datetime64[us]"))
    return index.tz_localize("UTC") if aware == {True} else index


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
    zones = zones_of(values)
    if UNSURE in zones and any(v.strip().lower() in _RELATIVE for v in values if v is not None):
        return None  # pandas reads "now" as the time of the read: not a date of the data
    # Values in several zones (or naive and aware mixed) never share one dtype: pandas
    # refuses them (2.x with a FutureWarning and object dtype), so they skip that try.
    several = len(zones - {UNSURE}) > 1
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
