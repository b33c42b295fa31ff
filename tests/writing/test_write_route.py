"""The rule that picks a write's route (writing/route.choose_write_route), condition by
condition as its docstring states it; and the route each real read records.

The routes themselves are proven to write the same thing in tests/writing/test_exact_writes.py
and tests/writing/test_write_streamed.py; here the rule alone.
"""

from __future__ import annotations

import logging

import pandas as pd
import pytest

from mddframes.codec import read_route
from mddframes.codec.fingerprint import fingerprint
from mddframes.codec.stream import keep_chunks
from mddframes.context import ReadContext
from mddframes.writing.route import choose_write_route

FRAME = pd.DataFrame({"id": pd.array([1, 2, 3], dtype="Int64"), "name": ["a", "b", None]})
KEPT = keep_chunks([b'{"data":[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3}]}'])


def context(*, kept=True, printed=True, route="splitter"):
    print_ = fingerprint(FRAME) if printed else None
    if kept:
        return ReadContext("table", "t", kept=KEPT, fingerprint=print_, route=route)
    return ReadContext("table", "t", {"data": []}, route=route)


# (condition, arguments, route, words of the reason)
RULE = [
    ("stream=False", dict(stream=False), "parsed", "asked for"),
    ("a mapping", dict(kind="mapping"), "parsed", "mapping is written whole"),
    ("columns= given", dict(columns_given=True), "parsed", "column metadata"),
    ("no read context", dict(context=None), "parsed", "no read"),
    ("read whole", dict(context=context(kept=False, route="whole")), "parsed", "read whole"),
    ("no fingerprint", dict(context=context(printed=False)), "parsed", "read whole"),
    ("read by ijson", dict(context=context(route="ijson")), "parsed", "could not cut"),
    ("read by kept", dict(context=context(route="kept")), "parsed", "could not cut"),
    ("a row added", dict(frame=pd.concat([FRAME, FRAME.iloc[:1]])), "parsed", "added"),
    ("a column dropped", dict(frame=FRAME.drop(columns="name")), "parsed", "added"),
    ("rows moved", dict(frame=FRAME.iloc[::-1]), "parsed", "moved"),
    ("other bytes", dict(same_bytes=False), "parsed", "other bytes"),
    ("a write's read-back", dict(context=context(route="readback")), "streamed", "cells"),
    ("not asked yet", dict(same_bytes=None), "streamed", "cells"),
    ("cells edited", dict(same_bytes=True), "streamed", "cells"),
]


@pytest.mark.parametrize(("condition", "arguments", "route", "words"), RULE,
                         ids=[row[0] for row in RULE])  # fmt: skip
def test_each_condition_gives_its_route(condition, arguments, route, words):
    given = {"kind": "table", "context": context(), "frame": FRAME, **arguments}
    kind, ctx, frame = given.pop("kind"), given.pop("context"), given.pop("frame")
    choice = choose_write_route(kind, ctx, frame, **given)
    assert choice.route == route and words in choice.reason, choice


def test_the_first_condition_that_holds_decides():
    # a mapping asked to stream, with columns and no context: the mapping rule speaks first
    choice = choose_write_route("mapping", None, FRAME, columns_given=True)
    assert "mapping" in choice.reason
    choice = choose_write_route("table", None, FRAME, stream=False)
    assert "asked for" in choice.reason


def test_a_read_records_its_route_and_a_write_logs_its_own(client, caplog, monkeypatch, tmp_path):
    table_id = client.read_tree("DWH")["table_id"].dropna().iloc[0]
    small = client.read_table(table_id)
    assert small.attrs["mddframes"].route == "whole"
    monkeypatch.setattr(read_route, "STREAM_THRESHOLD", 1)
    with caplog.at_level(logging.DEBUG, logger="mddframes"):
        large = client.read_table(table_id)
        large.iloc[0, 1] = "routed" if large.dtypes.iloc[1] == "string" else large.iloc[0, 1]
        result = client.write_table(table_id, large, backup_dir=tmp_path, dry_run=True)
    assert large.attrs["mddframes"].route == "splitter"
    assert "read by the splitter route" in caplog.text
    assert f"table {table_id!r}: {result.route} write" in caplog.text
