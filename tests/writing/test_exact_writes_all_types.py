"""The exactness oracle over every declared type, with 200 examples per case (``slow``).

``test_exact_writes.py``'s oracle (its reference, edits and routes), on a table that
adds a column of every declared type of the dtype rule that file leaves out
(``exact_types.py``: decimals, dates, timestamps with and without a zone, JSON objects
and lists), run with :data:`SLOW_EXAMPLES` examples for each route and library. A file
of its own, so that CI's workers (``--dist loadfile``) run it beside the rest.

Its cost is the library's: about 12 round trips per example, each carrying the whole
table. The streamed case has :data:`SLOW_ROWS` rows, not the fast run's 1,500: with the
thresholds of ``use_tiny_batches`` still a streamed read and write over 5 fingerprint blocks
and about 10 batches of 8 KiB (pinned below), at a fifth of the cost per example.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from writing.exact_types import DECLARED_TYPES, EXTRA_COLUMNS
from writing.test_exact_writes import (
    COLUMNS,
    KINDS,
    PAIRS,
    ROWS,
    edit,
    one_example,
    put_table,
    random_edits,
    read,
    use_tiny_batches,
)

from mddframes.codec import fingerprint as fingerprint_module
from mddframes.codec import splitter
from mddframes.codec.dtypes import DTYPE_RULES, type_family

#: Examples per case (route x library): 200, or ``MDD_ORACLE_EXAMPLES`` (CI's pass on the
#: oldest pandas runs 50: the deep search runs once, on the newest, and every case still
#: runs on both ends).
SLOW_EXAMPLES = int(os.environ.get("MDD_ORACLE_EXAMPLES", "200"))
#: Rows of the streamed case; divides 1,500, so the edits' boosted last row
#: (``ROWS - 1``) is this table's last row too.
SLOW_ROWS = 300
#: The rule of the dtype table each column of test_exact_writes.COLUMNS exercises.
RULES = {"id": "INTEGER", "name": "STRING", "ratio": "DOUBLE", "qty": "INTEGER", "flag": "BOOLEAN"}
ALL_PAIRS: dict[str, Any] = {**PAIRS, **{column.name: column.edits for column in EXTRA_COLUMNS}}


@pytest.fixture
def table_id(client, monkeypatch):
    """The table the oracle writes (test_exact_writes' table_id)."""
    use_tiny_batches(monkeypatch)
    return client.read_tree("DWH")["table_id"].dropna().iloc[0]


@pytest.mark.slow
@pytest.mark.timeout(1200)  # 200 examples: about 30 s of CPU a case, more on a busy machine
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_rows", [SLOW_ROWS, 60], ids=["streamed", "small"])
@settings(max_examples=SLOW_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(first=random_edits(ALL_PAIRS), second=random_edits(ALL_PAIRS))
def test_every_declared_type_writes_what_the_json_reference_says(
    client, table_id, tmp_path, kind, n_rows, first, second
):
    one_example(client, table_id, tmp_path, kind, n_rows, first, second, ALL_PAIRS, extra=True)


def test_the_slow_run_covers_every_declared_type_of_the_dtype_rule():
    # the rules that name a declared type (a spelling the codec knows), against the list
    # written in exact_types apart from the codec
    declared = {r.declared for r in DTYPE_RULES if type_family(r.spellings.split(",")[0])}
    assert declared == set(DECLARED_TYPES)
    columns = [(c["name"], c["dataType"], RULES[c["name"]]) for c in COLUMNS]
    columns += [(c.name, c.data_type, c.rule) for c in EXTRA_COLUMNS]
    assert {rule for _name, _type, rule in columns} == set(DECLARED_TYPES)
    spellings = {r.declared: r.spellings.replace("...", "").split(", ") for r in DTYPE_RULES}
    for name, data_type, rule in columns:  # each column is declared with its rule's spelling
        assert data_type.split("(")[0] in spellings[rule], (name, data_type, rule)
    assert ROWS % SLOW_ROWS == 0


@pytest.mark.parametrize("kind", KINDS)
def test_the_slow_runs_table_reads_with_every_typed_dtype(client, table_id, kind):
    # the edits go through the typed columns, not text that merely looks like dates
    put_table(client, table_id, 60, extra=True)
    frame = read(client, table_id, kind)
    dtypes = {name: str(dtype) for name, dtype in zip(frame.columns, frame.dtypes, strict=True)}
    expected = {
        "numpy_nullable": {
            "price": "string", "day": "datetime64[us]", "at": "datetime64[us, UTC]",
            "local": "datetime64[us, UTC]", "logged": "datetime64[us]",
            "naive": "datetime64[us]", "attrs": "object", "tags": "object",
        },
        "pyarrow": {
            "price": "string[pyarrow]", "day": "timestamp[us][pyarrow]",
            "at": "timestamp[us, tz=UTC][pyarrow]", "local": "timestamp[us, tz=UTC][pyarrow]",
            "logged": "timestamp[us][pyarrow]", "naive": "timestamp[us][pyarrow]",
            "attrs": "object", "tags": "object",
        },
        "polars": {
            "price": "String", "day": "Datetime(time_unit='us', time_zone=None)",
            "at": "Datetime(time_unit='us', time_zone='UTC')",
            "local": "Datetime(time_unit='us', time_zone='UTC')",
            "logged": "Datetime(time_unit='us', time_zone=None)",
            "naive": "Datetime(time_unit='us', time_zone=None)",
            "attrs": "Object", "tags": "Object",
        },
    }[kind]  # fmt: skip
    assert {name: dtypes[name] for name in expected} == expected


@pytest.mark.parametrize(("n_rows", "route"), [(SLOW_ROWS, "streamed"), (60, "parsed")])
def test_the_slow_runs_tables_take_the_routes_their_names_say(client, table_id, n_rows, route):
    put_table(client, table_id, n_rows, extra=True)
    frame = edit(read(client, table_id, "numpy_nullable"), [(3, "name", "edited", "edited")])
    result = client.write_table(table_id, frame, dry_run=True)
    assert result.route == route, result.route_reason
    if route == "streamed":  # over several fingerprint blocks and write batches
        size = len(json.dumps(client.api.get_table(table_id)).encode())
        assert n_rows // fingerprint_module.BLOCK_ROWS >= 4
        assert size // splitter.BATCH_BYTES >= 8, size
