"""The rule that picks the decode route of a table answer (codec/read_route.choose_route).

The routes themselves are proven equal to ``json.loads`` in tests/frames/test_tables_stream.py;
here the rule alone, step by step, as its docstring states it.
"""

from __future__ import annotations

import pytest

from mddframes.codec.read_route import MIN_STREAMED_ROWS, STREAM_THRESHOLD, Parsed, choose_route

VOUCHED = Parsed(vouched=True, rows=MIN_STREAMED_ROWS)
FEW = Parsed(vouched=True, rows=MIN_STREAMED_ROWS - 1)
UNSURE = Parsed(vouched=False, rows=5)


@pytest.mark.parametrize(
    ("length", "route"),
    [(0, "whole"), (STREAM_THRESHOLD, "whole"), (STREAM_THRESHOLD + 1, "splitter"),
     (None, "splitter")],
)  # fmt: skip
def test_the_size_decides_between_a_whole_parse_and_the_stream(length, route):
    assert choose_route(length) == route


@pytest.mark.parametrize(
    ("splitter", "arrow", "ijson", "route"),
    [
        (VOUCHED, True, None, "arrow"),
        (VOUCHED, False, None, "splitter"),
        (FEW, True, None, "kept"),
        (FEW, False, None, "kept"),
        (UNSURE, True, None, "ijson"),
        (UNSURE, True, VOUCHED, "ijson"),
        (UNSURE, False, FEW, "kept"),
        (UNSURE, True, Parsed(vouched=False, rows=100), "kept"),
    ],
)
def test_after_the_stream_the_parsers_answers_decide(splitter, arrow, ijson, route):
    # the size no longer matters once the body was streamed
    for length in (None, 10, STREAM_THRESHOLD * 4):
        assert choose_route(length, splitter=splitter, arrow=arrow, ijson=ijson) == route
