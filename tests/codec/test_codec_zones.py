"""The zones of a date column found in one pass are the zones found value by value."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.codec.iso_dates import zone_of, zones_of

PIECES = st.sampled_from(
    ["2024-07-19", "2024-07-19T01:37", "2024-07-19 01:37:00", "2024-07-19T01:37:00.123",
     "Z", "+01:00", "-0000", "-05:30", "+0530", "\n", "x", "now", "", "T", "-07-19",
     "\u0661\u0662"]
)  # fmt: skip
VALUES = st.lists(st.one_of(st.none(), st.lists(PIECES, max_size=3).map("".join)), max_size=8)


@settings(max_examples=1000, deadline=None)
@given(values=VALUES)
def test_zones_of_a_column_are_the_zones_of_its_values(values):
    assert zones_of(values) == {zone_of(v) for v in values if v is not None}


def test_a_column_of_one_zone_and_of_naive_strings():
    assert zones_of(["2024-01-01T00:00:00Z", None, "2024-01-02T10:00:00+00:00"]) == {"+0000"}
    assert zones_of(["2024-01-01", "2024-01-02T10:00"]) == {None}
    assert zones_of(["2024-01-01", "2024-01-02T10:00-05:00"]) == {None, "-0500"}
