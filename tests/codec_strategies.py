"""Hypothesis strategies for table- and mapping-shaped payloads (shared by the codec tests).

Each generated column has a *kind* (ints, big ints, floats, strings with leading zeros,
ISO dates, nested values, anything...) so that both the typed fast paths and the
object fallback of the codec are exercised; every cell may also be null or absent,
and every row has its own key order.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import strategies as st

NAMES = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=6
)
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
SPECIAL_FLOATS = st.sampled_from([0.1, 1e300, -1e300, -0.0, 0.0, 2.5, 1e-300, 123456.789])
FLOATS = st.one_of(SPECIAL_FLOATS, st.floats(allow_nan=False, allow_infinity=False))
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
BIG_INTS = st.one_of(st.integers(min_value=-(2**80), max_value=2**80), st.just(2**64 + 1))
SCALARS = st.one_of(
    st.none(), st.booleans(), BIG_INTS, FLOATS, TEXT, st.sampled_from(["", "007", "ÄÖü"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=6,
)
DATES = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2200, 12, 31))
DATETIMES = st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1))


def _iso_date() -> st.SearchStrategy[str]:
    return DATES.map(lambda d: d.isoformat())


def _iso_datetime_utc() -> st.SearchStrategy[str]:
    return DATETIMES.map(lambda t: t.replace(microsecond=0).isoformat() + "Z")


#: column kind -> (strategy of its values, dataTypes that may be declared for it)
KINDS: dict[str, tuple[st.SearchStrategy[Any], list[str]]] = {
    "int": (st.integers(-1000, 10**12), ["INTEGER", "BIGINT", "VARCHAR", "NUMBER"]),
    "int64": (INT64, ["BIGINT"]),
    "bigint": (BIG_INTS, ["BIGINT", "NUMERIC"]),
    "float": (FLOATS, ["DOUBLE", "DECIMAL(10,2)", "INTEGER"]),
    "number": (st.one_of(st.integers(-(2**53), 2**53), FLOATS), ["FLOAT", "NUMBER"]),
    "bool": (st.booleans(), ["BOOLEAN", "INTEGER"]),
    "string": (TEXT, ["VARCHAR(20)", "TEXT", "DATE"]),
    "id": (st.from_regex(r"0[0-9]{1,5}", fullmatch=True), ["VARCHAR", "INTEGER"]),
    "decimal": (st.decimals(places=2, allow_nan=False, allow_infinity=False).map(str), ["DECIMAL"]),
    "date": (_iso_date(), ["DATE", "VARCHAR", "TIMESTAMP"]),
    "datetime": (_iso_datetime_utc(), ["TIMESTAMP", "DATE"]),
    "nested": (st.one_of(st.lists(SCALARS, max_size=3), st.dictionaries(NAMES, SCALARS, max_size=3)), ["JSON"]),
    "any": (JSON, ["VARCHAR", "JSON"]),
}  # fmt: skip

PRESENCE = st.sampled_from(["value", "value", "value", "null", "absent"])


@st.composite
def _rows(draw: st.DrawFn, names: list[str], kinds: list[str]) -> list[dict[str, Any]]:
    rows = []
    for _ in range(draw(st.integers(0, 7))):
        items = []
        for name, kind in zip(names, kinds, strict=True):
            presence = draw(PRESENCE)
            if presence == "absent":
                continue
            items.append((name, None if presence == "null" else draw(KINDS[kind][0])))
        rows.append(dict(draw(st.permutations(items))))
    return rows


@st.composite
def _columns(draw: st.DrawFn, extra: int = 2) -> tuple[list[str], list[str]]:
    names = draw(st.lists(NAMES, min_size=0, max_size=6, unique=True))
    kinds = [draw(st.sampled_from(sorted(KINDS))) for _ in names]
    return names, kinds


@st.composite
def table_payloads(draw: st.DrawFn) -> dict[str, Any]:
    """A table payload: envelope, metadata.columns (some declared, some not), rows."""
    names, kinds = draw(_columns())
    rows = draw(_rows(names, kinds))
    declared = []
    for name, kind in zip(names, kinds, strict=True):
        if draw(st.booleans()):
            declared.append(
                {
                    "name": name,
                    "dataType": draw(st.sampled_from(KINDS[kind][1])),
                    "nullable": draw(st.booleans()),
                    "primaryKey": False,
                    "description": draw(TEXT),
                }
            )
    if draw(st.booleans()):
        declared.append({"name": "declared but never present", "dataType": "VARCHAR"})
    declared = draw(st.permutations(declared))
    envelope = [
        ("id", draw(st.one_of(st.from_regex(r"T0[0-9]{3}", fullmatch=True), BIG_INTS))),
        ("name", draw(TEXT)),
        ("structureId", draw(st.one_of(st.none(), TEXT))),
        ("metadata", {"description": draw(TEXT), "columns": declared, "extra": draw(JSON)}),
        ("data", rows),
    ]
    envelope += draw(
        st.lists(st.tuples(st.sampled_from(["version", "tags", "x"]), JSON), max_size=2)
    )
    return dict(draw(st.permutations(envelope)))


@st.composite
def mapping_payloads(draw: st.DrawFn) -> dict[str, Any]:
    """A mapping payload: envelope and columnMappings rows."""
    names, kinds = draw(_columns())
    names = [
        "source",
        "target",
        "transformation",
        *[n for n in names if n not in ("source", "target", "transformation")],
    ]
    kinds = ["string", "id", "any", *kinds[: len(names) - 3]]
    kinds += ["any"] * (len(names) - len(kinds))
    rows = draw(_rows(names, kinds))
    envelope = [
        ("id", draw(st.from_regex(r"M[0-9]{1,4}", fullmatch=True))),
        ("name", draw(TEXT)),
        ("sourceId", draw(TEXT)),
        ("targetId", draw(TEXT)),
        ("description", draw(st.one_of(st.none(), TEXT))),
        ("columnMappings", rows),
    ]
    return dict(draw(st.permutations(envelope)))


def payloads() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """``(kind, payload)`` pairs of both kinds."""
    return st.one_of(
        table_payloads().map(lambda p: ("table", p)),
        mapping_payloads().map(lambda p: ("mapping", p)),
    )


def assert_same_json(a: Any, b: Any, path: str = "$") -> None:
    """Deep equality with the same Python types and the same key order everywhere."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        assert list(a) == list(b), f"{path}: key order {list(a)} != {list(b)}"
        for key in a:
            assert_same_json(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_json(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert a == b and str(a) == str(b), f"{path}: {a!r} != {b!r}"  # -0.0 stays -0.0
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"
