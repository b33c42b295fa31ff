"""A kept document is cut where its layout says, however its bytes arrive, or not at all;
a read's layout holds the key hash of every row."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.codec import splitter
from mddframes.codec.row_layout import RowLayout, cut
from mddframes.codec.stream import frame_from_chunks
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


KEY_VALUES = st.one_of(st.none(), st.integers(-(2**62), 2**62), st.text(max_size=4),
                       st.booleans(), st.floats(allow_nan=False, allow_infinity=False))  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(KEY_VALUES, KEY_VALUES, st.booleans()), min_size=2, max_size=40),
    composite=st.booleans(),
    spaced=st.booleans(),
    batch_bytes=st.sampled_from([64, 256, 1 << 20]),
)
def test_a_reads_layout_holds_each_rows_key_hash_as_json_loads_values_give_it(
    rows, composite, spaced, batch_bytes
):
    # the hashes a write trusts for the batches it never parses: those of the values
    # json.loads gives (a key of two columns a tuple; a null part: no key), however the
    # native engine took each batch (Arrow columns, or Python values for a nested one)
    names = ["a", "b"] if composite else ["a"]
    declared = [{"name": n, "dataType": "STRING", "primaryKey": True} for n in names]
    data = [{"a": a, "b": b, **({"n": {"x": [1]}} if nested else {})} for a, b, nested in rows]
    separator = ", " if spaced else ","
    text = (json.dumps({"id": "T", "metadata": {"columns": declared}})[:-1] + ', "data": ['
            + separator.join(json.dumps(row) for row in data) + "]}").encode()  # fmt: skip
    routes: list[str] = []
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(splitter, "BATCH_BYTES", batch_bytes)  # one batch, or many
        warnings.simplefilter("ignore")
        _, kept = frame_from_chunks([text[i : i + 50] for i in range(0, len(text), 50)],
                                    "table", on_route=routes.append)  # fmt: skip
    if routes != ["arrow"]:
        assert kept.layout is None
        return
    layout = kept.layout
    assert layout is not None and layout.key_hashes is not None and layout.has_key is not None
    # a document spaced between two batches does not fit the sizes: never cut by it
    assert layout.fits(len(text), len(rows)) == (not spaced or len(layout.batch_rows) == 1)
    loaded = json.loads(text)["data"]
    keys = [tuple(r[n] for n in names) if composite else r["a"] for r in loaded]
    present = [None not in k if composite else k is not None for k in keys]
    assert layout.has_key.tolist() == present
    assert [h for h, p in zip(layout.key_hashes.tolist(), present, strict=True) if p] == [
        hash(k) for k, p in zip(keys, present, strict=True) if p
    ]
