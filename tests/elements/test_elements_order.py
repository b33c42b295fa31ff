"""create_children's ordering and checks, which run before anything is sent."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mddframes.elements import creation_order
from mddframes.errors import DataShapeError


def frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["key", "parent", "type", "name"])


def test_parents_come_before_children_and_frame_order_is_kept():
    f = frame(
        [
            ("leaf", "mid", "COLUMN", "c"),
            ("top", "EXISTING-1", "TABLE", "t"),
            ("mid", "top", "VIEW", "v"),
            (None, "EXISTING-2", "TABLE", "u"),
            (None, "leaf", "NOTE", "n"),
        ]
    )
    order = creation_order(f)
    assert order == [1, 2, 0, 3, 4]  # frame order, each row after its parent row


def test_cycle_is_named_before_anything_is_sent():
    f = frame([("a", "b", "T", "x"), ("b", "c", "T", "y"), ("c", "a", "T", "z")])
    with pytest.raises(DataShapeError, match="cycle") as info:
        creation_order(f)
    assert all(repr(k) in str(info.value) for k in "abc")


def test_self_parent_is_a_cycle():
    with pytest.raises(DataShapeError, match="cycle"):
        creation_order(frame([("a", "a", "T", "x")]))


def test_unknown_parent_key_is_refused():
    f = frame([("a", "EXISTING", "T", "x"), (None, None, "T", "y")])
    f["parent_key"] = [None, "nope"]
    with pytest.raises(DataShapeError, match="row 1 has parent_key 'nope'"):
        creation_order(f)


def test_duplicate_keys_missing_parent_and_missing_columns():
    with pytest.raises(DataShapeError, match="key 'a' is used by rows 0 and 1"):
        creation_order(frame([("a", "E", "T", "x"), ("a", "E", "T", "y")]))
    with pytest.raises(DataShapeError, match="row 0 has no parent"):
        creation_order(frame([("a", None, "T", "x")]))
    with pytest.raises(DataShapeError, match=r"lacks column\(s\) \['type'\]"):
        creation_order(pd.DataFrame({"parent": ["E"], "name": ["x"]}))
    with pytest.raises(DataShapeError, match="expects a DataFrame"):
        creation_order([{"parent": "E"}])  # type: ignore[arg-type]


@given(st.lists(st.integers(min_value=-1, max_value=30), min_size=1, max_size=30))
def test_any_forest_is_ordered_parents_first(parents):
    """Row i's parent is row parents[i] (any row, so cycles occur) or an existing
    element: cycles are refused, every forest comes out parents first."""
    n = len(parents)
    rows = []
    for i, p in enumerate(parents):
        parent = f"k{p}" if 0 <= p < n else "EXISTING"
        rows.append((f"k{i}", parent, "T", f"n{i}"))
    f = frame(rows)

    def has_cycle() -> bool:
        for start in range(n):
            seen, node = set(), start
            while 0 <= parents[node] < n:
                if node in seen:
                    return True
                seen.add(node)
                node = parents[node]
        return False

    if has_cycle():
        with pytest.raises(DataShapeError, match="cycle"):
            creation_order(f)
        return
    order = creation_order(f)
    assert sorted(order) == list(range(n))
    placed = {label: i for i, label in enumerate(order)}
    for i, p in enumerate(parents):
        if 0 <= p < n:
            assert placed[p] < placed[i]
