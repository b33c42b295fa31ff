"""A write's read-back compared with the pieces it sent as the chunks arrive
(``documents._compared``): kept compressed either way, and said to be what was sent
exactly when it is."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from mddframes.writing.documents import _compared

_BYTES = st.binary(max_size=64)


@st.composite
def _sent_and_received(draw: st.DrawFn) -> tuple[bytes, bytes, list[bytes], list[bytes]]:
    sent = draw(_BYTES)
    received = draw(st.one_of(
        st.just(sent),  # what was sent
        _BYTES,  # anything
        st.integers(0, len(sent)).map(lambda cut: sent[:cut]),  # cut short
        st.builds(lambda cut, extra: sent[:cut] + extra, st.integers(0, 64), _BYTES),
    ))  # fmt: skip
    return sent, received, _cut(draw, sent), _cut(draw, received)


def _cut(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """``data`` in pieces (some of them empty)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=6)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@given(_sent_and_received())
def test_a_read_back_is_what_was_sent_exactly_when_its_bytes_are(case):
    sent, received, pieces, chunks = case
    kept, same = _compared(iter(chunks), pieces)
    assert kept.sha256 == hashlib.sha256(received).hexdigest()
    assert kept.content() == received
    assert same == (received == sent)
