"""keep_compared keeps a read-back exactly as keep_chunks would, and nothing twice."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from mddframes.codec.readback import keep_compared
from mddframes.codec.stream import keep_chunks


def pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at ``cuts`` (positions, any order, repeats allowed)."""
    edges = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in zip(edges, edges[1:], strict=False)]


def test_the_sent_bytes_read_back_are_the_sent_documents_kept_copy():
    sent = b'{"data": [' + b",".join(b'{"n": %d}' % i for i in range(50_000)) + b"]}"
    expected = keep_chunks([sent])
    kept = keep_compared(pieces(sent, [7, 65_536, 300_001]), sent, lambda: expected)
    assert kept is expected
    assert kept.sha256 == hashlib.sha256(sent).hexdigest() and kept.content() == sent


@settings(max_examples=200, deadline=None)
@given(
    sent=st.binary(max_size=600),
    read=st.binary(max_size=600),
    cuts=st.lists(st.integers(min_value=0, max_value=700), max_size=6),
    shared=st.integers(min_value=0, max_value=600),
)
def test_any_read_back_is_kept_as_keep_chunks_keeps_it(sent, read, cuts, shared):
    # read-backs that agree with the sent bytes for a while, then differ, end early or
    # run on: each kept as received
    read = sent[:shared] + read
    kept = keep_compared(pieces(read, cuts), sent, lambda: keep_chunks([sent]))
    want = keep_chunks([read])
    assert kept.content() == read and (kept.sha256, kept.size) == (want.sha256, want.size)


def test_a_read_back_that_is_the_sent_bytes_and_more_is_kept_whole():
    sent = b"x" * 300_000
    kept = keep_compared(pieces(sent + b"y", [100_000, 300_000]), sent, lambda: None)
    assert kept.content() == sent + b"y"
