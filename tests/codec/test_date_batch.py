"""Date columns parsed once for many tables (``read_tables``) give exactly the per-table arrays."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.codec.date_batch import resolve_dates
from mddframes.codec.dtypes import PendingDates, column_array
from mddframes.frames import iter_groups
from mddframes.frames.table import read_table

_MOMENTS = st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1))


@st.composite
def _iso(draw: st.DrawFn, zone: str) -> str:
    moment = draw(_MOMENTS)
    digits = draw(st.sampled_from([0, 0, 3, 6, 9]))  # 9: nanoseconds, a finer unit
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + str(draw(st.integers(0, 10**digits - 1))).zfill(digits)
    return text + zone


@st.composite
def _columns(draw: st.DrawFn) -> list[list[str | None]]:
    """One column's values in several tables; sometimes a value no calendar has."""
    zone = draw(st.sampled_from(["", "Z", "+02:00", "-0530"]))
    tables = []
    for _ in range(draw(st.integers(1, 5))):
        values = draw(st.lists(st.one_of(st.none(), _iso(zone)), min_size=1, max_size=6))
        if draw(st.integers(0, 9)) == 0:
            values.append("2023-02-30T00:00:00" + zone)  # parses alone? no: stays text
        tables.append(values)
    return tables


def _same(a: object, b: object) -> bool:
    return a.dtype == b.dtype and pd.Series(a).equals(pd.Series(b))  # type: ignore[attr-defined]


@settings(max_examples=150, deadline=None)
@given(_columns())
def test_a_column_parsed_with_other_tables_is_what_it_is_alone(tables):
    parts = [{"at": column_array(list(v), "TIMESTAMP", defer_dates=True)} for v in tables]
    resolve_dates(parts)
    for values, part in zip(tables, parts, strict=True):
        alone = column_array(list(values), "TIMESTAMP")
        assert not isinstance(part["at"], PendingDates)
        assert _same(part["at"], alone), (values, part["at"], alone)


def test_only_plain_iso_in_one_zone_waits():
    naive = column_array(["2024-01-01T10:00:00", None], "TIMESTAMP", defer_dates=True)
    mixed = column_array(["2024-01-01T10:00:00Z", "2024-01-01T10:00:00+02:00"], "TIMESTAMP",
                         defer_dates=True)  # fmt: skip
    other = column_array(["1 Jan 2024"], "DATE", defer_dates=True)
    assert isinstance(naive, PendingDates) and naive.zone is None
    assert not isinstance(mixed, PendingDates) and not isinstance(other, PendingDates)


@pytest.fixture
def dated_tables(client):
    """Five tables with a declared TIMESTAMP column ``at`` in forms a batch must respect."""
    forms = {
        "micro": ["2024-01-01T10:00:00.123456Z", None],
        "plain": ["2024-03-01T00:00:00Z"],
        "nano": ["2024-01-01T10:00:00.123456789Z"],  # ns: the others alone are us
        "no-such-day": ["2024-02-30T00:00:00Z"],  # refused: that table keeps strings
        "naive": ["2024-05-05T05:05:05"],
    }
    ids = client.read_tree("DWH")["table_id"].dropna().tolist()[: len(forms)]
    for table_id, values in zip(ids, forms.values(), strict=True):
        client.api.put_table(table_id, {
            "metadata": {"columns": [{"name": "k", "dataType": "INTEGER"},
                                     {"name": "at", "dataType": "TIMESTAMP"}]},
            "data": [{"k": n, "at": value} for n, value in enumerate(values)],
        })  # fmt: skip
    return ids


def test_read_tables_dates_are_the_single_reads(client, dated_tables):
    long = client.read_tables(dated_tables, progress=False)
    groups = dict(iter_groups(long))
    for table_id in dated_tables:
        single = read_table(client.api, table_id)
        pd.testing.assert_frame_equal(groups[table_id], single, check_dtype=False,
                                      check_names=False)  # fmt: skip
    assert read_table(client.api, dated_tables[3])["at"].dtype == "string"


def test_the_long_column_is_the_single_reads_stacked(client, dated_tables):
    """With a nanosecond table among them too: each table's own unit, then stacked."""
    from mddframes.frames.stacking import concat_column_sets

    ids = [dated_tables[i] for i in (0, 1, 2, 4)]  # micro, plain, nano, naive
    singles = [read_table(client.api, t) for t in ids]
    for chosen in (ids[:2], ids[:3], ids):
        frames = [f for t, f in zip(ids, singles, strict=True) if t in chosen]
        expected = concat_column_sets([{"at": f["at"].array} for f in frames],
                                      [f.index for f in frames])["at"]  # fmt: skip
        long = client.read_tables(chosen, progress=False)["at"]
        assert long.dtype == expected.dtype, chosen
        assert long.tolist() == expected.tolist(), chosen
