"""Scale data streamed into the store: the same data as the built dataset, never whole in
memory (a million elements fit the emulator)."""

from __future__ import annotations

import types

import pytest

from mddframes.emulator.dataset import Dataset
from mddframes.emulator.scale import build_scale, scale_records
from mddframes.emulator.store import Store

# runs once, on the newest pandas: checks the service's wire, not pandas (tests/pandas_ends.py)
pytestmark = pytest.mark.pandas_free


def test_the_records_are_a_generator_of_the_built_dataset():
    records = scale_records(2500, seed=3)
    assert isinstance(records, types.GeneratorType)
    assert Dataset.from_records(records) == build_scale(2500, seed=3)


def test_each_table_and_mapping_follows_its_owner_element():
    seen: set[str] = set()
    for kind, record in scale_records(2000):
        if kind == "element":
            seen.add(record["id"])
        elif kind == "table":
            assert record["structureId"] in seen
        elif kind == "mapping":
            assert record["targetId"] in seen


def test_a_streamed_load_stores_what_a_dataset_load_stores():
    streamed, whole = Store(), Store()
    try:
        streamed.load(scale_records(1200))
        whole.load(build_scale(1200))
        assert streamed.counts() == whole.counts()
        assert streamed.tree_json("SCALE") == whole.tree_json("SCALE")
        table_id = build_scale(1200).tables[7]["id"]
        assert streamed.table_json(table_id) == whole.table_json(table_id)
    finally:
        streamed.close()
        whole.close()
