"""Fast column building and the streamed read of large tables.

- The codec's column builders give exactly what pandas' own constructors give
  (``pd.array``, ``pd.to_datetime``), on pandas 2.2 and 3.x, without warnings.
"""

from __future__ import annotations

import datetime as dt
import re
import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mddframes.codec.dtypes import column_array

# -- column builders vs pandas' own constructors ----------------------------------------

ZONES = st.sampled_from(["", "Z", "+00:00", "-00:00", "+01:00", "+0100", "-05:30", "+02:00"])
PLAIN_DATETIMES = st.builds(
    lambda moment, zone, spec: moment.isoformat(timespec=spec) + zone,
    st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    ZONES,
    st.sampled_from(["minutes", "seconds", "milliseconds", "microseconds"]),
)
DATE_STRINGS = st.one_of(
    st.none(),
    PLAIN_DATETIMES,
    st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 12, 31)).map(str),
    st.sampled_from(["", "NaT", "2024-13-01", "2024-01-01T25:00Z", "31/12/2024"]),
)


AWARE = re.compile(r"(Z|[+-]\d{2}:?\d{2})$")


def reference_datetimes(values: list) -> object:
    """What a declared DATE/TIMESTAMP column should become, by a plain pandas parse.

    Naive and aware values mixed stay strings (pandas 3 refuses them; pandas 2.2 would
    give the naive ones the zone of the first aware one, so that case is decided here).
    """
    present = [v for v in values if v is not None]
    plain = [v for v in present if re.fullmatch(r"\d{4}-\d{2}-\d{2}(T.*)?", v)]
    if any(AWARE.search(v) for v in plain) and not all(AWARE.search(v) for v in plain):
        return None
    series = pd.Series(values, dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pandas 2.2, mixed offsets
        try:
            parsed = pd.to_datetime(series, format="ISO8601")
        except ValueError:
            parsed = None
    if parsed is None or parsed.dtype == object:
        if not all(AWARE.search(v) for v in present):
            return None
        try:
            parsed = pd.to_datetime(series, format="ISO8601", utc=True)
        except ValueError:
            return None
    if int(parsed.isna().sum()) != values.count(None):
        return None
    return parsed.array


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(DATE_STRINGS, min_size=1, max_size=6),
    declared=st.sampled_from(["DATE", "TIMESTAMP"]),
)
def test_declared_date_columns_parse_as_pandas_does_without_warnings(values, declared):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FutureWarning about mixed zones on pandas 2.2
        array = column_array(values, declared)
    expected = reference_datetimes(values)
    if expected is None or not any(values):
        assert array.dtype.kind != "M" or not any(values), (values, array)
        if any(values):
            assert list(array) == [pd.NA if v is None else v for v in values]
        return
    assert array.dtype == expected.dtype, values
    assert pd.Series(array).equals(pd.Series(expected)), values


@settings(max_examples=300, deadline=None)
@given(
    values=st.one_of(
        st.lists(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)), max_size=6),
        st.lists(
            st.one_of(st.none(), st.integers(-(2**53), 2**53), st.floats(allow_nan=False)),
            max_size=6,
        ),
        st.lists(st.one_of(st.none(), st.booleans()), max_size=6),
    )
)
def test_masked_columns_equal_pd_array(values):
    types = {type(v) for v in values} - {type(None)}
    if types == {bool}:
        dtype = "boolean"
    elif float in types:
        dtype = "Float64"
    elif types:
        dtype = "Int64"
    else:
        return
    array = column_array(values)
    expected = pd.array(values, dtype=dtype)
    assert array.dtype == expected.dtype
    assert list(pd.isna(array)) == list(pd.isna(expected))
    for got, want in zip(array, expected, strict=True):
        if want is not pd.NA:
            assert got == want and np.signbit(float(got)) == np.signbit(float(want))


def test_nan_in_a_float_column_is_missing_like_null():
    array = column_array([1.5, float("nan"), None, -0.0], "DOUBLE")
    assert array.dtype == "Float64"
    assert list(pd.isna(array)) == [False, True, True, False]
    assert np.signbit(array[3])


def test_relative_words_in_a_date_column_stay_strings():
    # pandas reads "now" and "today" as the moment of the read: a date column holding
    # them would be rewritten with that moment on the next write
    for word in ("now", "today", " Now "):
        array = column_array(["2024-01-01", word], "DATE")
        assert array.dtype.kind != "M", word
        assert list(array) == ["2024-01-01", word]


def test_mixed_offsets_become_utc_instants_without_warnings():
    values = ["2024-03-01T10:00:00+01:00", "2024-03-01T10:00:00Z", None, "2024-03-01T10:00:00-0530"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        array = column_array(values, "TIMESTAMP")
        naive_and_aware = column_array(["2024-03-01T10:00:00", "2024-03-01T10:00:00Z"], "TIMESTAMP")
    assert str(array.tz) == "UTC"
    assert array[0] == pd.Timestamp("2024-03-01T09:00:00Z")
    assert array[3] == pd.Timestamp("2024-03-01T15:30:00Z")
    assert array[2] is pd.NaT
    assert naive_and_aware.dtype.kind != "M"  # no common zone: strings
