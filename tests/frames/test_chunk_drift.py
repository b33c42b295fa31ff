"""The drift count: columns whose dtype differs from chunk to chunk of one iter_tables run,
over every sample system, chunk size and backend. 0 among the names declared with one
type; a name declared with types of different dtypes is object in every chunk
(frames/declared_scan.py); only values can still decide (codec/dtypes.py DTYPE_RULES)."""

from __future__ import annotations

import json
import warnings
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes import DeclaredTypeWarning
from mddframes.codec.dtypes import declared_dtype
from mddframes.codec.frame import declared_columns, declared_type
from mddframes.frames.declared_scan import declarations_of

SYSTEMS = ("DWH", "LAB", "FLOW")


def drift(client, ids, chunksize, backend):
    """Per name: the dtypes its chunks give it (only names with more than one)."""
    seen: dict[str, set[str]] = defaultdict(set)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeclaredTypeWarning)
        for chunk in client.iter_tables(ids, chunksize=chunksize, progress=False,
                                        dtype_backend=backend):  # fmt: skip
            for name, dtype in chunk.dtypes.items():
                seen[name].add(str(dtype))
    return {name: dtypes for name, dtypes in seen.items() if len(dtypes) > 1}, seen


def declared_dtypes(client, ids):
    found: dict[str, set[str]] = defaultdict(set)
    for table_id in ids:
        for column in declared_columns(client.api.get_table(table_id)):
            found[column["name"]].add(declared_dtype(declared_type(column)))
    return found


@pytest.mark.parametrize("backend", ["numpy_nullable", "pyarrow"])
@pytest.mark.parametrize("system", SYSTEMS)
def test_no_column_drifts_from_chunk_to_chunk(client, system, backend):
    ids = list(client.read_tree(system)["table_id"].dropna().unique())
    declared = declared_dtypes(client, ids)
    mixed = {name for name, dtypes in declared.items() if len(dtypes) > 1}
    if system == "DWH":
        assert mixed == {"code", "lifetime_value"}  # STRING/INTEGER, DOUBLE/DECIMAL
    for chunksize in (1, 5, 32):
        drifting, seen = drift(client, ids, chunksize, backend)
        assert drifting == {}, (chunksize, drifting)
        for name in mixed:
            assert seen[name] == {"object"}, (chunksize, name)


def test_the_declarations_are_asked_for_once_per_table_past_the_first_chunk(client, emu):
    ids = list(client.read_tree("LAB")["table_id"].dropna().unique())
    assert len(ids) > 3
    emu.reset_counters()
    list(client.iter_tables(ids, chunksize=len(ids), progress=False))
    assert emu.counters().get("getTable", 0) == len(ids)  # one chunk: no scan
    for chunksize in (1, 3):
        emu.reset_counters()
        list(client.iter_tables(ids, chunksize=chunksize, progress=False))
        # the first chunk's declarations come from its own documents, just read
        assert emu.counters().get("getTable", 0) == 2 * len(ids) - chunksize


def test_a_value_that_does_not_fit_still_decides_from_its_chunk_on(client):
    ids = ["tbl-0002", "tbl-0003"]
    for table_id, value in zip(ids, [7, 2**70], strict=True):
        base = client.api.get_table(table_id)
        columns = [{"name": "n", "dataType": "BIGINT"}]
        client.api.put_table(table_id, {**base, "metadata": {**base["metadata"], "columns": columns},
                                        "data": [{"n": value}]})  # fmt: skip
    with pytest.warns(DeclaredTypeWarning, match="'n'"):
        chunks = list(client.iter_tables(ids, chunksize=1, progress=False))
    # the declarations agree; only the second table's value shows the misfit
    assert [str(chunk["n"].dtype) for chunk in chunks] == ["Int64", "object"]


_NAMES = st.text(min_size=1, max_size=3)
_COLUMN = st.fixed_dictionaries(
    {"name": _NAMES}, optional={"dataType": st.sampled_from(["INT", "DATE", "VARCHAR(3)"]),
                                "extra": st.lists(st.integers() | st.text(max_size=2), max_size=2)},
)  # fmt: skip
_ROWS = st.lists(st.dictionaries(_NAMES, st.integers() | st.none() | st.text(max_size=3),
                                 max_size=2), max_size=3)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(
    columns=st.lists(_COLUMN, max_size=4),
    rows=_ROWS,
    rows_first=st.booleans(),
    cuts=st.lists(st.integers(0, 400), max_size=4),
)
def test_declarations_of_the_first_bytes_are_those_of_the_whole_document(
    columns, rows, rows_first, cuts
):
    parts = [("metadata", {"description": "d", "columns": columns}), ("data", rows)]
    document = dict([("id", "t"), *(reversed(parts) if rows_first else parts)])
    text = json.dumps(document, ensure_ascii=False).encode()
    edges = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    chunks = [text[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    assert declarations_of(iter(chunks)) == declared_columns(document)
