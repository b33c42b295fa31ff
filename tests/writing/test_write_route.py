"""The rule that picks a write's route (writing/route.choose_write_route), condition by
condition as its docstring states it; and the route each real read records.

The routes themselves are proven to write the same thing in tests/writing/test_exact_writes.py
and tests/writing/test_write_streamed.py; here the rule alone.
"""

from __future__ import annotations

import ast
import inspect
import logging
import re
from pathlib import Path

import pandas as pd
import pytest

from mddframes.codec import read_route, streamed_overlay
from mddframes.codec.fingerprint import fingerprint
from mddframes.codec.kept import keep_chunks
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
    assert large.attrs["mddframes"].route == "arrow"
    assert "read by the arrow route" in caplog.text
    assert f"table {table_id!r}: {result.route} write" in caplog.text


def _leading_words(message: ast.expr, constants: dict[str, str]) -> str:
    """The fixed words a ``StreamUnsupported`` message starts with."""
    first = message.values[0] if isinstance(message, ast.JoinedStr) else message
    if isinstance(first, ast.FormattedValue) and isinstance(first.value, ast.Name):
        return constants[first.value.id]
    assert isinstance(first, ast.Constant), ast.dump(message)
    return first.value.rstrip(" :")


def test_the_late_exits_are_the_ones_the_rules_docstring_names():
    # every StreamUnsupported the streamed overlay raises is a late exit of the rule, and
    # the rule's docstring names each (by the words its message starts with), no more
    source = Path(streamed_overlay.__file__).read_text("utf-8")
    tree = ast.parse(source)
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }  # fmt: skip
    raised = [
        _leading_words(node.exc.args[0], constants)
        for node in ast.walk(tree)
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
        and getattr(node.exc.func, "id", None) == "StreamUnsupported"
    ]  # fmt: skip
    doc = inspect.getdoc(choose_write_route) or ""
    section = doc.split("Late exits:", 1)[1]
    named = re.findall(r'^- "([^"]+)"', section, flags=re.MULTILINE)
    assert sorted(set(raised)) == sorted(named)
    # the count the issue-45 cleanup left, and issue 46's layout (one exit, three places):
    # 8 exits at 13 places (4 say the kept document does not hold what was read); a new
    # exit must be named in the rule first
    assert (len(named), len(raised)) == (8, 13)


def test_the_streamed_overlay_refuses_a_frame_the_rule_sends_to_the_parsed_route():
    # the rule's step 7 is a precondition of the overlay, not a second decision
    ctx = context()
    moved = FRAME.iloc[::-1]
    assert choose_write_route("table", ctx, moved).route == "parsed"
    with pytest.raises(ValueError, match="lines up with its read"):
        streamed_overlay.overlay_document(ctx.kept, moved, ctx.fingerprint)


def test_the_bytes_are_asked_only_when_every_earlier_step_left_streamed_open():
    asked = []

    def same_bytes() -> bool:
        asked.append(True)
        return False

    assert (
        choose_write_route("table", context(), FRAME.iloc[::-1], same_bytes=same_bytes).route
        == "parsed"
    )
    assert asked == []  # decided at step 7: no GET for the bytes
    choice = choose_write_route("table", context(), FRAME, same_bytes=same_bytes)
    assert (choice.route, asked) == ("parsed", [True]) and "other bytes" in choice.reason
