"""A declared date column's parse is the same on every pandas we support: any year from 1
to 9999, naive or with an offset, in microseconds (pandas 2.2 parses in nanoseconds and
overflows outside 1677-2262; codec/iso_dates.py reads those years itself)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.codec.dtypes import conform_datetimes
from mddframes.codec.iso_dates import datetime_array

EPOCH = datetime(1970, 1, 1)
OFFSETS = st.sampled_from(
    [None, timedelta(0), timedelta(hours=2), timedelta(hours=-5, minutes=-30)]
)


def _ticks(stamp: datetime, offset: timedelta | None) -> int:
    return (stamp - EPOCH - (offset or timedelta(0))) // timedelta(microseconds=1)


def _text(stamp: datetime, offset: timedelta | None, space: bool) -> str:
    zone = None if offset is None else timezone(offset)
    return stamp.replace(tzinfo=zone).isoformat(sep=" " if space else "T")


@settings(max_examples=300, deadline=None)
@given(
    stamps=st.lists(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
                    min_size=1, max_size=5),
    offset=OFFSETS,
    space=st.booleans(),
    nulls=st.integers(0, 2),
)  # fmt: skip
def test_every_year_parses_to_the_same_microseconds(stamps, offset, space, nulls):
    values = [_text(s, offset, space) for s in stamps] + [None] * nulls
    parsed = datetime_array(values)
    assert parsed is not None, values
    array = conform_datetimes(parsed)  # as column_array does: microseconds, UTC if aware
    assert str(array.dtype) == ("datetime64[us]" if offset is None else "datetime64[us, UTC]")
    got = np.asarray(array.asi8)
    assert got[: len(stamps)].tolist() == [_ticks(s, offset) for s in stamps], values
    assert np.asarray(array.isna()).tolist() == [False] * len(stamps) + [True] * nulls


def test_a_year_before_1677_in_a_date_column_is_a_date():
    assert str(datetime_array(["0001-01-01", None, "2020-02-29"]).dtype) == "datetime64[us]"
    aware = conform_datetimes(
        datetime_array(["0001-01-01T00:00+02:00", "9999-12-31T23:59:59.999999Z"])
    )
    assert aware.asi8.tolist() == [_ticks(datetime(1, 1, 1), timedelta(hours=2)),
                                   _ticks(datetime(9999, 12, 31, 23, 59, 59, 999999), None)]  # fmt: skip


def test_finer_than_a_microsecond_or_mixed_naive_and_aware_stay_strings():
    assert datetime_array(["0001-01-01T00:00:00.123456789"]) is None
    assert datetime_array(["0001-01-01", "2020-01-01T00:00Z"]) is None
    assert datetime_array(["0001-01-01T00:00:00.123456000"]) is not None
