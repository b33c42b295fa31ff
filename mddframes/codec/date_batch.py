"""Date columns of many tables parsed in one call per column: what ``read_tables`` saves.

Parsing ISO 8601 strings with pandas costs about half a millisecond per call before
the first value (``to_datetime``'s set-up), more than the values themselves for the
small tables a bulk read fetches by the hundred; on two cores that CPU, spent under
the GIL between requests, no longer hides behind the network waits.

So a bulk read builds each table's arrays with its date columns *pending*
(:class:`~mddframes.codec.dtypes.PendingDates`: the values, and the zone they share), and once every table is
in, :func:`resolve_dates` parses each column's pending values of all tables in one
call and hands every table its slice. The result is exactly what parsing each table
alone gives (the same values, dtype, unit and zone); whenever that cannot be vouched
for, the table's column is parsed alone as before:

- only columns whose values are plain ISO 8601 with one zone (or all naive) wait;
  anything pandas alone can judge is parsed at once;
- a batch that pandas refuses, or that parses to a unit finer than the default
  (a value with nanoseconds: the other tables alone would have had the default), is
  parsed table by table;
- a table whose slice has more missing values than it had nulls (a string pandas
  reads as NaT) is parsed alone, which keeps it as strings.
"""

from __future__ import annotations

from functools import cache
from itertools import chain
from typing import Any

import numpy as np

from mddframes.codec.dtypes import PendingDates, conform_datetimes, parse_iso


def resolve_dates(parts: list[dict[Any, Any]]) -> None:
    """Replace, in place, every :class:`PendingDates` in ``parts`` by its array.

    Parameters
    ----------
    parts : list of dict
        Column arrays by name, one dict per table; values that are not pending are
        left as they are.
    """
    groups: dict[tuple[Any, str | None], list[tuple[dict[Any, Any], Any]]] = {}
    for arrays in parts:
        for name, array in arrays.items():
            if isinstance(array, PendingDates):
                groups.setdefault((name, array.zone), []).append((arrays, name))
    for (_, zone), members in groups.items():
        pending: list[PendingDates] = [arrays[name] for arrays, name in members]
        slices = _parse_together(pending, zone)
        for (arrays, name), one, array in zip(members, pending, slices, strict=True):
            arrays[name] = one.alone() if array is None else array


def _parse_together(pending: list[PendingDates], zone: str | None) -> list[Any]:
    """Each column's slice of one parse of them all; None where it must be parsed alone."""
    if len(pending) == 1:
        return [None]
    values = list(chain.from_iterable(one.values for one in pending))
    parsed = parse_iso(values, utc=False, naive=zone is None)
    if parsed is None or parsed.dtype == object or parsed.unit != _default_unit(zone is None):
        return [None] * len(pending)
    array = conform_datetimes(parsed.array)  # the rule's unit and zone, as alone
    if array is None:
        return [None] * len(pending)
    missing = np.asarray(parsed.isna())
    slices: list[Any] = []
    start = 0
    for one in pending:
        stop = start + len(one.values)
        exact = int(np.count_nonzero(missing[start:stop])) == one.values.count(None)
        slices.append(array[start:stop] if exact else None)
        start = stop
    return slices


@cache
def _default_unit(naive: bool) -> str:
    """The unit pandas gives ISO strings without sub-microsecond digits (``us`` on
    pandas 3, ``ns`` on 2.x)."""
    parsed = parse_iso(["2000-01-01T00:00:00" + ("" if naive else "Z")], utc=False, naive=naive)
    if parsed is None:  # pragma: no cover - a plain ISO string always parses
        raise AssertionError("pandas did not parse a plain ISO 8601 string")
    return str(parsed.unit)
