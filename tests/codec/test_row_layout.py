"""A kept document is cut where its layout says, however its bytes arrive, or not at all."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mddframes.codec.row_layout import RowLayout, cut
from mddframes.codec.streamed_overlay import RowBatches

BATCHES = st.lists(st.binary(min_size=1, max_size=40), min_size=0, max_size=8)


def _document(head: bytes, batches: list[bytes], tail: bytes) -> tuple[bytes, RowLayout]:
    parts = RowBatches(head, tuple(batches), tuple(range(1, len(batches) + 1)), tail)
    layout = RowLayout(len(head), tuple(map(len, batches)), parts.batch_rows, len(tail))
    return b"".join(parts.pieces()), layout


def _chunks(document: bytes, cuts: list[int]) -> list[bytes]:
    edges = sorted({0, len(document), *(c % (len(document) + 1) for c in cuts)})
    return [document[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@given(head=st.binary(max_size=20), batches=BATCHES, tail=st.binary(max_size=20),
       cuts=st.lists(st.integers(0, 10_000), max_size=12))  # fmt: skip
def test_the_pieces_are_the_head_the_batches_and_the_tail(head, batches, tail, cuts):
    document, layout = _document(head, batches, tail)
    assert layout.fits(len(document), sum(layout.batch_rows))
    assert list(cut(_chunks(document, cuts), layout)) == [head, *batches, tail]


@given(head=st.binary(max_size=20), batches=BATCHES.filter(lambda b: len(b) >= 2),
       tail=st.binary(max_size=20), data=st.data())  # fmt: skip
def test_bytes_that_do_not_divide_as_the_layout_says_are_refused(head, batches, tail, data):
    document, layout = _document(head, batches, tail)
    at = data.draw(st.integers(0, len(batches) - 2))
    separator = len(head) + sum(len(b) + 1 for b in batches[: at + 1]) - 1
    broken = document[:separator] + b";" + document[separator + 1 :]  # no comma there
    with pytest.raises(ValueError, match="comma"):
        list(cut([broken], layout))
    with pytest.raises(ValueError, match="ends before"):
        list(cut([document[:-1]], layout))
    with pytest.raises(ValueError, match="runs on"):
        list(cut([document, b" "], layout))
